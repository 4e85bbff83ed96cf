import { type Agent, request } from 'node:http';
import type { Socket } from 'node:net';

/**
 * One bodiless POST of a load driver: `settle` is told the answer's status once its body has been
 * read (`error` for a failed or abandoned connection), and every socket it used joins `sockets`
 * until it closes, so the driver can wait for all of them. No body: the apps under test need none,
 * and parsing one would only take CPU from them.
 */
export function postCall(
  url: string,
  agent: Agent,
  signal: AbortSignal,
  headers: Record<string, string>,
  sockets: Set<Socket>,
  settle: (status: string) => void,
): void {
  const call = request(url, {
    method: 'POST',
    agent,
    signal,
    headers: { 'content-length': '0', ...headers },
  });
  call.on('response', (response) => {
    response.resume();
    response.on('end', () => settle(String(response.statusCode)));
    response.on('error', () => settle('error'));
  });
  call.on('error', () => settle('error'));
  call.on('socket', (socket: Socket) => {
    if (sockets.has(socket)) return;
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  call.end();
}
