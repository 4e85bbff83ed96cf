import { afterEach, describe, expect, it } from '@jest/globals';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Backoff, type AttemptContext, Resilience, RetryBudget } from '../lib/core/index.js';

// Streams under a policy on real loopback HTTP: fetch bodies pulled through policy.run. Short bounds
// (a 300 ms attempt timeout); what is asserted is what the server saw and what the consumer got.

interface Seen {
  readonly url: string;
  /** Resolves when the server's side of this request's connection closes. */
  readonly closed: Promise<'finished' | 'aborted'>;
}

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) =>
    server === undefined ? resolve() : server.close(() => resolve()),
  );
  server = undefined;
});

async function serve(
  handler: (req: IncomingMessage, res: ServerResponse, n: number) => void,
): Promise<{ base: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  server = createServer((req, res) => {
    const closed = new Promise<'finished' | 'aborted'>((resolve) =>
      res.on('close', () => resolve(res.writableFinished ? 'finished' : 'aborted')),
    );
    seen.push({ url: req.url ?? '', closed });
    handler(req, res, seen.length);
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

/** The body's lines as numbers, as they arrive. */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<number> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body) {
    rest += decoder.decode(chunk, { stream: true });
    let newline: number;
    while ((newline = rest.indexOf('\n')) >= 0) {
      yield Number(rest.slice(0, newline));
      rest = rest.slice(newline + 1);
    }
  }
}

const open = async (url: string, ctx: AttemptContext) => {
  const response = await fetch(url, { signal: ctx.signal });
  return lines(response.body!);
};

describe('streams over loopback HTTP', () => {
  it('a response silent before its first line is torn down at attemptTimeout (its connection closed) and retried', async () => {
    const { base, seen } = await serve((_req, res, n) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.flushHeaders();
      if (n >= 2) res.end('0\n1\n2\n');
    });
    const policy = Resilience.default.with({ attemptTimeout: 300, backoff: Backoff.none });
    const stream = await policy.run((ctx) => open(`${base}/feed`, ctx));
    const items: number[] = [];
    for await (const item of stream) items.push(item);
    expect(items).toEqual([0, 1, 2]);
    expect(seen).toHaveLength(2);
    expect(await seen[0]!.closed).toBe('aborted');
    expect(await seen[1]!.closed).toBe('finished');
  });

  it('break closes the server’s socket, with no deadline, timeout or signal of the caller', async () => {
    const { base, seen } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let i = 0;
      const timer = setInterval(() => res.write(`${i++}\n`), 10);
      res.on('close', () => clearInterval(timer));
    });
    const stream = await Resilience.default.run((ctx) => open(`${base}/endless`, ctx));
    for await (const item of stream) {
      expect(item).toBe(0);
      break;
    }
    expect(await seen[0]!.closed).toBe('aborted');
    expect(seen).toHaveLength(1);
  });

  it('a slow consumer is never cut: 3 pauses of 150 ms between lines with attemptTimeout 100 ms', async () => {
    const { base } = await serve((_req, res) => res.end('0\n1\n2\n3\n'));
    const policy = Resilience.default.with({ attemptTimeout: 100 });
    const stream = await policy.run((ctx) => open(`${base}/all`, ctx));
    const items: number[] = [];
    for await (const item of stream) {
      items.push(item);
      if (item < 3) await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(items).toEqual([0, 1, 2, 3]);
  });

  it('a connection reset mid-stream re-opens at the checkpoint: every line once, in order', async () => {
    const { base, seen } = await serve((req, res, n) => {
      const from = Number(new URL(req.url!, 'http://x').searchParams.get('from'));
      res.writeHead(200, { 'content-type': 'text/plain' });
      // The first two connections break after 5 lines; the third runs to 19.
      const until = n <= 2 ? Math.min(from + 5, 20) : 20;
      let body = '';
      for (let i = from; i < until; i++) body += `${i}\n`;
      if (until === 20 && n > 2) res.end(body);
      else res.write(body, () => setTimeout(() => res.destroy(), 20));
    });
    const policy = Resilience.default.with({ backoff: Backoff.none, budget: RetryBudget.none });
    const stream = await policy.run({
      start: 0,
      checkpoint: (line: number) => line + 1,
      source: (from, ctx) => open(`${base}/numbers?from=${from}`, ctx),
    });
    const items: number[] = [];
    for await (const item of stream) items.push(item);
    expect(items).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(seen.map((s) => s.url)).toEqual([
      '/numbers?from=0',
      '/numbers?from=5',
      '/numbers?from=10',
    ]);
    expect(stream.restarts).toBe(2);
  });
});
