import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';

// docs/testing.md's Jest recipe for an ESM app: ts-jest with useESM, the .js mapper, --experimental-vm-modules.
// ts-jest compiles the app's files on the first import, inside this test: more than Jest's default
// 5 s on a loaded machine.
it('boots the quick start under Jest; the inventory policy makes its 3 attempts against a failing dependency', async () => {
  let requests = 0;
  const dependency = createServer((_, response) => {
    requests++;
    response.statusCode = 500;
    response.end();
  });
  await new Promise<void>((done) => dependency.listen(0, '127.0.0.1', done));
  process.env.INVENTORY_URL = `http://127.0.0.1:${(dependency.address() as AddressInfo).port}`;
  // Imported after INVENTORY_URL is set: the module reads it once.
  const { AppModule, InventoryService } = await import('../src/app.module.js');
  const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
  await moduleRef.init();
  try {
    await expect(moduleRef.get(InventoryService).stock('sku-1')).rejects.toThrow(
      'inventory answered 500',
    );
    expect(requests).toBe(3);
  } finally {
    await moduleRef.close();
    dependency.close();
  }
}, 60_000);
