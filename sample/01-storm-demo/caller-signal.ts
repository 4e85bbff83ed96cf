import type { IncomingMessage, ServerResponse } from 'node:http';

/** Why a checkout's payments call was cancelled: the shopper's connection closed before the answer. */
export class CallerGoneError extends Error {
  override readonly name = 'CallerGoneError';
  constructor() {
    super('the caller closed the connection before the checkout answered');
  }
}

/**
 * A signal that aborts (reason {@link CallerGoneError}) when the connection of `request` closes
 * before `response` has been sent — the shopper gave up — so the checkout stops calling payments for
 * an answer nobody will read. A request whose connection had already closed when the handler ran is
 * aborted at once: on a busy machine requests wait in the socket buffer, and the driver may have
 * abandoned them by the time they are parsed. The listener goes when the response closes either way.
 */
export function callerSignal(request: IncomingMessage, response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const abandoned = (): void => {
    if (!response.writableFinished) controller.abort(new CallerGoneError());
  };
  if (request.socket.destroyed) {
    abandoned();
    return controller.signal;
  }
  // 'close' fires once, on the response finishing or its connection closing: no listener outlives it.
  response.once('close', abandoned);
  return controller.signal;
}
