import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Test } from '@nestjs/testing';
import type * as App from '../src/app.module';

// docs/testing.md's Jest recipe for a CommonJS app: ts-jest compiles the ESM package to CommonJS.
// ts-jest compiles the whole package to CommonJS on the first require, inside this test: seconds on
// an idle machine, more than Jest's default 5 s on a loaded one (it failed so under load 9 on 2 cores).
it("boots AppModule under Jest; a @Resilient method makes the policy's 2 attempts", async () => {
  let requests = 0;
  const dependency = createServer((_, response) => {
    requests++;
    response.statusCode = 500;
    response.end();
  });
  await new Promise<void>((done) => dependency.listen(0, '127.0.0.1', done));
  process.env.PAYMENTS_URL = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}`;
  // Loaded after PAYMENTS_URL is set: the module reads it once.
  const { AppModule, PaymentsService } = jest.requireActual<typeof App>('../src/app.module');
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await moduleRef.init();
  try {
    await expect(moduleRef.get(PaymentsService).charge('1')).rejects.toThrow(
      'payments answered 500',
    );
    expect(requests).toBe(2);
  } finally {
    await moduleRef.close();
    dependency.close();
  }
}, 60_000);
