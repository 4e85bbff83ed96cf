import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

const app = await NestFactory.create(AppModule);
await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
console.log(`listening on ${(app.getHttpServer().address() as AddressInfo).port}`);
