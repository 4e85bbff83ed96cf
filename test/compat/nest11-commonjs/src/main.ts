import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { AddressInfo } from 'node:net';
import { AppModule } from './app.module';

// Nest 11's default logger setup: no `logger` option.
async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  await app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
  console.log(`listening on ${(app.getHttpServer().address() as AddressInfo).port}`);
}
void bootstrap();
