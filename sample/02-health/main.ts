/**
 * Health sample: boots the app on 127.0.0.1 (ephemeral port) against a local payments dependency that
 * answers 500, prints the liveness and readiness URLs, opens the payments breaker with five failing
 * checkouts, then prints what each endpoint answers and exits (bounded: 10 s).
 *
 *   npm run build && node dist-sample/sample/02-health/main.js
 *   node dist-sample/sample/02-health/main.js --serve     keep serving until Ctrl-C
 */
import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { NestFactory } from '@nestjs/core';
import { HealthSampleModule } from './health-sample.module.js';

const BOUND_MS = 10_000;
const bound = setTimeout(() => {
  console.error(`health sample: no result within ${BOUND_MS} ms`);
  process.exit(1);
}, BOUND_MS);
bound.unref();

const dependency = createServer((_request, response) => {
  response.statusCode = 500;
  response.end('payments is down');
});
await new Promise<void>((resolve) => dependency.listen(0, '127.0.0.1', resolve));
const paymentsUrl = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}`;

const app = await NestFactory.create(HealthSampleModule.forRoot({ paymentsUrl }), {
  logger: ['error', 'warn'],
});
await app.listen(0, '127.0.0.1');
const base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
console.log(`liveness:  ${base}/health/live`);
console.log(`readiness: ${base}/health/ready`);

async function show(path: string): Promise<void> {
  const response = await fetch(`${base}${path}`);
  const retryAfter = response.headers.get('retry-after');
  console.log(
    `GET ${path} -> ${response.status}${retryAfter === null ? '' : ` (Retry-After: ${retryAfter})`} ${await response.text()}`,
  );
}

await show('/health/ready');
for (let order = 1; order <= 5; order++) await fetch(`${base}/checkout/${order}`);
await show('/checkout/6');
await show('/health/live');
await show('/health/ready');

if (process.argv.includes('--serve')) {
  clearTimeout(bound);
  console.log('serving; Ctrl-C to stop');
} else {
  await app.close();
  await new Promise((resolve) => dependency.close(resolve));
  clearTimeout(bound);
}
