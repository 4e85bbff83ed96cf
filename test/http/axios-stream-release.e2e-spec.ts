import { afterEach, describe, expect, it } from '@jest/globals';
import { Agent } from 'node:http';
import type { AxiosError } from 'axios';
import type { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { installResilientAdapter } from '../../lib/http/index.js';
import { answer, loopbackServers } from '../support/loopback-server.js';
import { jumpingPolicy } from '../support/jumping-policy.js';
import { oneSocketAxios } from '../support/one-socket-axios.js';

const { serve, closeAll } = loopbackServers();
const agents: Agent[] = [];
afterEach(async () => {
  for (const agent of agents.splice(0)) agent.destroy();
  await closeAll();
});

/** Settles as `promise` does, or rejects after `ms` real ms (a hung call must fail the test, not time it out). */
function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  const hung = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, hung]).finally(() => clearTimeout(timer));
}

/**
 * An axios instance on a keep-alive agent with one socket, under a policy whose backoffs jump at
 * once; `bodies` records each attempt's response stream (of an answer or of a failed one).
 */
async function jumpingAxios(attempts: number) {
  const { instance, bodies } = oneSocketAxios(agents);
  const { events, policy } = jumpingPolicy('files', { attempts });
  await installResilientAdapter(instance, { policy });
  return { bodies, events, instance };
}

describe("axios seam, responseType stream: a failed attempt's unread body is released before the retry", () => {
  it('a 502 then a 200 on a one-socket keep-alive agent: the retry gets a socket and the call answers', async () => {
    const server = await serve((n, _req, res) => answer(res, n === 0 ? 502 : 200, { n }));
    const { bodies, events, instance } = await jumpingAxios(3);
    const response = await within(instance.get(`${server.url}/file`), 2000);
    expect([response.status, await text(response.data as Readable)]).toEqual([200, '{"n":1}']);
    expect(server.seen).toHaveLength(2);
    expect(bodies.map((b) => b.destroyed)).toEqual([true, true]);
    expect(events.filter((e) => e.kind === 'attempt').map((e) => e.verdict)).toEqual([
      'Transient',
      'Ok',
    ]);
  });

  it("every attempt 502: the earlier bodies are destroyed, the last one is the caller's to read", async () => {
    const server = await serve((n, _req, res) => answer(res, 502, { n }));
    const { bodies, instance } = await jumpingAxios(3);
    const failure = (await within(
      instance.get(`${server.url}/file`).catch((e: unknown) => e),
      2000,
    )) as AxiosError;
    expect(failure.response?.status).toBe(502);
    expect(bodies.map((b) => b.destroyed)).toEqual([true, true, false]);
    expect(await text(failure.response!.data as Readable)).toBe('{"n":2}');
    expect(server.seen).toHaveLength(3);
  });
});
