import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { streamPrices } from '../docs/examples/stream-body.js';
import { readChanges } from '../docs/examples/stream-checkpoint.js';
import { Quotes } from '../docs/examples/stream-nest.js';
import { ResilienceModule } from '../lib/nest/index.js';

// The examples docs/streams.md shows, run against a loopback server.
let server: Server;
let base: string;
const changeRequests: string[] = [];
let quoteRequests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    if (url.pathname === '/prices') {
      res.write('a'.repeat(3));
      setTimeout(() => res.end('b'.repeat(5)), 20);
      return;
    }
    if (url.pathname === '/changes') {
      changeRequests.push(req.url!);
      const from = Number(url.searchParams.get('from'));
      // The first two connections break after 4 changes; the third runs to the end (12 changes).
      const until = changeRequests.length <= 2 ? from + 4 : 12;
      let body = '';
      for (let seq = from; seq < until; seq++)
        body += `${JSON.stringify({ seq, key: `k${seq}` })}\n`;
      if (changeRequests.length <= 2) res.write(body, () => setTimeout(() => res.destroy(), 20));
      else res.end(body);
      return;
    }
    // /quotes: the first request is refused before anything is sent, the second streams two chunks.
    quoteRequests++;
    if (quoteRequests === 1) {
      req.socket.destroy();
      return;
    }
    res.write('1.25');
    setTimeout(() => res.end('1.30'), 20);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('docs/streams.md', () => {
  it('a fetch body read through policy.run: every chunk, in order', async () => {
    // 3 bytes, then 5 bytes 20 ms later (two chunks unless the loopback coalesced them).
    const sizes = await streamPrices(`${base}/prices`);
    expect(sizes.reduce((sum, size) => sum + size, 0)).toBe(8);
    expect(sizes[0]).toBeGreaterThanOrEqual(3);
  });

  it('a checkpointed feed broken twice: each change once, in order, re-opened at the checkpoint', async () => {
    const { seqs, restarts } = await readChanges(base);
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(restarts).toBe(2);
    expect(changeRequests).toEqual(['/changes?from=0', '/changes?from=4', '/changes?from=8']);
  });

  it('an @Resilient async * method: the refused first request retried, then every chunk', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          policies: { quotes: { attempts: 2, backoff: { type: 'none' }, attemptTimeout: 2000 } },
        }),
      ],
      providers: [Quotes],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const chunks: string[] = [];
      for await (const chunk of app.get(Quotes).ticks(`${base}/quotes`)) chunks.push(chunk);
      expect(chunks.join('')).toBe('1.251.30');
      expect(quoteRequests).toBe(2);
    } finally {
      await app.close();
    }
  });
});
