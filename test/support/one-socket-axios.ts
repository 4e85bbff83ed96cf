import { Agent } from 'node:http';
import type { Readable } from 'node:stream';
import axios, { type AxiosError, type AxiosInstance, type AxiosResponse } from 'axios';

/**
 * An axios instance (`responseType: 'stream'`) on a keep-alive agent with one socket, whose adapter
 * records each attempt's response stream in `bodies` (of an answer or of a failed one): a body left
 * unread holds the only socket, so the next request waits. The agent is pushed to `agents` for the
 * spec to destroy after each test.
 */
export function oneSocketAxios(agents: Agent[]): { instance: AxiosInstance; bodies: Readable[] } {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(agent);
  const instance = axios.create({ httpAgent: agent, responseType: 'stream' });
  const bodies: Readable[] = [];
  const http = axios.getAdapter('http');
  instance.defaults.adapter = (config) =>
    http(config).then(
      (response: AxiosResponse) => (bodies.push(response.data as Readable), response),
      (error: AxiosError) => {
        bodies.push(error.response?.data as Readable);
        throw error;
      },
    );
  return { instance, bodies };
}
