import 'reflect-metadata';
import { once } from 'node:events';
import { type IncomingMessage, type ServerResponse, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { NestFactory } from '@nestjs/core';
import { CallerGoneError, callerSignal } from '../sample/01-storm-demo/caller-signal.js';
import { CheckoutModule } from '../sample/01-storm-demo/checkout.module.js';
import { networkHandles, networkHandlesClosed } from '../sample/01-storm-demo/handles.js';
import { runOnce } from '../sample/01-storm-demo/run.js';
import type { Scenario } from '../sample/01-storm-demo/scenario.js';

/**
 * The storm demo's shutdown, on real loopback sockets with short bounds: one run of a two-second
 * scenario whose driver abandons calls while the app is still retrying them, then the check the
 * demo makes before it exits (exit code 3) — nothing it opened may still be open.
 */

const timers = (): number =>
  process.getActiveResourcesInfo().filter((name) => name === 'Timeout').length;

// 40 calls/s after a one-second warm-up, one healthy and one degraded second. Degraded answers take
// 120-200 ms and half are 503s that the policy retries after 25-250 ms, so a driver that gives up
// at 250 ms abandons calls in the middle of their retries.
const SHORT: Scenario = {
  rate: 40,
  concurrency: 100,
  callTimeoutMs: 250,
  warmUpSeconds: 1,
  phases: [
    { name: 'healthy', seconds: 1 },
    { name: 'degraded', seconds: 1 },
  ],
  dependency: { healthyLatencyMs: 20, degradedSlowdown: 8, degradedErrorRate: 0.5, capacity: 30 },
};

describe('storm demo run shutdown', () => {
  it('leaves no socket, listener or timer open once a run has returned, with calls abandoned mid-retry, and counts no warm-up call', async () => {
    const before = networkHandles();
    const timersBefore = timers();
    const events: string[] = [];
    const problems: string[] = [];
    const output = {
      line: () => void events.push('second'),
      problem: (text: string) => void problems.push(text),
    };
    const { summary, extras } = await runOnce('budget off', false, SHORT, output, {
      warmedUp: async () => void events.push('warmed up'),
    });

    // At once: the run waited for its handles to close, and reported nothing still open.
    expect(await networkHandlesClosed(before, 0)).toEqual([]);
    expect(timers()).toBeLessThanOrEqual(timersBefore);
    // The path under test was taken: the driver gave up on some calls, and the app retried others.
    expect(extras.statuses.get('error') ?? 0).toBeGreaterThan(0);
    expect(summary.dependencyRequests).toBeGreaterThan(
      summary.calls - (extras.statuses.get('error') ?? 0),
    );
    // Cancelled with their callers, the abandoned calls stopped: the app went quiet before the run ended.
    expect(problems).toEqual([]);
    // The warm-up ends before the measured seconds; the run's calls are its own 2 s at 40 calls/s.
    expect(events.slice(0, 3)).toEqual(['warmed up', 'second', 'second']);
    expect(summary.calls).toBe(80);
  }, 15_000);
});

describe('storm demo callerSignal', () => {
  const serve = async (handler: (req: IncomingMessage, res: ServerResponse) => void) => {
    const server = createServer(handler);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, port: (server.address() as AddressInfo).port };
  };

  it('aborts with CallerGoneError when the client closes its connection before the answer', async () => {
    let signal: AbortSignal | undefined;
    const { server, port } = await serve((req, res) => {
      signal = callerSignal(req, res);
      // No answer: the client gives up first.
    });
    const call = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/checkout',
      agent: false,
      headers: { 'content-length': '0' },
    });
    call.on('error', () => undefined);
    call.end();
    await once(server, 'request');
    expect(signal?.aborted).toBe(false);
    const aborted = once(signal!, 'abort');
    call.destroy();
    await aborted;
    expect(signal!.reason).toBeInstanceOf(CallerGoneError);
    server.closeAllConnections();
    server.close();
    await once(server, 'close');
  });

  it('never aborts for a call that was answered, and keeps no listener on the response', async () => {
    let signal: AbortSignal | undefined;
    let response: ServerResponse | undefined;
    let closed: Promise<unknown> | undefined;
    const { server, port } = await serve((req, res) => {
      signal = callerSignal(req, res);
      response = res;
      closed = once(res, 'close');
      res.end('ok');
    });
    const call = request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/checkout',
      agent: false,
      headers: { 'content-length': '0' },
    });
    call.end();
    const [answer] = (await once(call, 'response')) as [IncomingMessage];
    answer.resume();
    await once(answer, 'end');
    await closed;
    expect(signal!.aborted).toBe(false);
    expect(response!.listenerCount('close')).toBe(0);
    server.close();
    await once(server, 'close');
  });
});

describe('storm demo checkout', () => {
  it("cancels the payments attempt when the shopper's connection closes, instead of waiting out the 1 s attempt timeout", async () => {
    // A payments dependency that holds every request: only the app can end one.
    const held: IncomingMessage[] = [];
    const payments = createServer((req) => void held.push(req));
    payments.listen(0, '127.0.0.1');
    await once(payments, 'listening');
    const app = await NestFactory.create(
      CheckoutModule.forRun({
        paymentsUrl: `http://127.0.0.1:${(payments.address() as AddressInfo).port}`,
        budget: true,
      }),
      { logger: false },
    );
    await app.listen(0, '127.0.0.1');
    try {
      const arrived = once(payments, 'request').then(() => performance.now());
      const call = request({
        host: '127.0.0.1',
        port: (app.getHttpServer().address() as AddressInfo).port,
        method: 'POST',
        path: '/checkout',
        agent: false,
        headers: { 'content-length': '0' },
      });
      call.on('error', () => undefined);
      call.end();
      const arrivedAt = await arrived;
      // The aborted request also emits 'error' ("aborted"), which `once` would reject on.
      held[0]!.on('error', () => undefined);
      const closed = new Promise((resolve) => held[0]!.once('close', resolve));
      call.destroy();
      await closed;
      // Without the cancellation the attempt runs until its 1 s timeout (then it is retried): its
      // request closes about 1000 ms after it arrived. Cancelled, it closes as soon as the shopper's does.
      expect(performance.now() - arrivedAt).toBeLessThan(500);
      expect(held).toHaveLength(1);
    } finally {
      await app.close();
      payments.closeAllConnections();
      payments.close();
      await once(payments, 'close');
    }
  });
});
