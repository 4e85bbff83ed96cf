import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { plainPolicy } from '../docs/examples/plain-policy.js';

// The examples the README and docs/ show (their marked regions), run against real loopback servers.
let server: Server;
let url: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((_req, res) => {
    requests++;
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ id: 'receipt-1' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/charges`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('README: outside Nest', () => {
  it('run resolves with the receipt; tryRun resolves with the result record', async () => {
    const { receipt, result } = await plainPolicy(url, async () => 'done');
    expect(receipt).toEqual({ id: 'receipt-1' });
    expect(requests).toBe(1);
    expect([result.ok, result.value, result.reason, result.attempts.length]).toEqual([true, 'done', 'succeeded', 1]);
  });

  it('tryRun never rejects: a failing work ends as a record carrying its error', async () => {
    const { result } = await plainPolicy(url, async () => {
      throw new TypeError('bad input');
    });
    // TypeError is Permanent under the default classifier: one attempt, no retry.
    expect([result.ok, result.reason, result.attempts.length, (result.error as Error).message]).toEqual([false, 'permanent', 1, 'bad input']);
  });
});
