import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleDestroy,
  Optional,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { type Clock, SystemClock } from '../core/index.js';
import { type ModuleOptionsReading, RESILIENCE_SETTINGS } from './module-settings.js';

/**
 * The module's shutdown grace (DESIGN §4 "Shutdown"). From the moment the application starts
 * closing (its first shutdown hook) {@link shuttingDown} is true, so the health indicator's
 * readiness answers down at once; with `shutdown: { grace }` set, also:
 * - every answer from then on carries `Connection: close` (HTTP/1; in-flight ones too, unless their
 *   headers already went out) and the idle keep-alive connections are closed, so keep-alive clients
 *   reconnect — to another instance once the load balancer has moved on — and `app.close()` is not
 *   held by a client that keeps its connection busy;
 * - on SIGTERM, {@link wait} holds the shutdown for the grace (the registry waits on it before it
 *   drains): the server keeps accepting and answering, retries included; then Nest closes the server,
 *   which stops accepting, answers what it accepted, and closes what is idle. Any other close
 *   (`app.close()` from code, SIGINT) does not wait.
 *
 * Nest runs `onModuleDestroy` of every module before the grace: resources the handlers need during
 * it are best closed in `onApplicationShutdown` (after the server stopped). With Nest's own
 * `return503OnClosing` app option the adapter answers 503 from the start of shutdown instead.
 */
@Injectable()
export class ShutdownGrace
  implements OnApplicationBootstrap, OnModuleDestroy, OnApplicationShutdown
{
  private closing = false;
  private server: Server | undefined;
  // Responses whose headers are not out yet: told `Connection: close` when the shutdown begins.
  private readonly pending = new Set<ServerResponse>();
  private waiting: Promise<void> | undefined;

  /**
   * @param options the module options as read once (`shutdownGrace`, `clock`)
   * @param adapters the application's HTTP adapter, absent in a context without one
   * @internal created by `ResilienceModule`
   */
  constructor(
    @Inject(RESILIENCE_SETTINGS) private readonly options: ModuleOptionsReading,
    @Optional() private readonly adapters?: HttpAdapterHost,
  ) {}

  /** Whether the application has begun shutting down (readiness answers down from then on). */
  get shuttingDown(): boolean {
    return this.closing;
  }

  /** The grace in ms, `undefined` without `shutdown` (or with options the registry refused at start-up). */
  private get grace(): number | undefined {
    return this.options.valid?.shutdownGrace;
  }

  /** Watches the HTTP server's requests when a grace is set (nothing otherwise). Called by Nest. */
  onApplicationBootstrap(): void {
    if (this.grace === undefined) return;
    const server = this.adapters?.httpAdapter?.getHttpServer() as Server | undefined;
    if (typeof server?.prependListener !== 'function') return;
    this.server = server;
    server.prependListener('request', this.onRequest);
  }

  /** The application starts closing: readiness down, and with a grace keep-alive connections told to go. Called by Nest. */
  onModuleDestroy(): void {
    this.begin();
  }

  /**
   * Begins the shutdown (once) and, on SIGTERM with a grace set, returns a promise that resolves
   * when the grace has passed on the module's clock; `undefined` (nothing to wait for) otherwise.
   * @param signal the signal that closes the application, as Nest passes it (`undefined` for `app.close()`)
   */
  wait(signal: string | undefined): Promise<void> | undefined {
    this.begin();
    const grace = this.grace;
    if (signal !== 'SIGTERM' || grace === undefined || grace === 0) return undefined;
    this.waiting ??= new Promise<void>((resolve) => {
      const clock: Clock = this.options.valid?.clock ?? SystemClock.instance;
      clock.setTimer(grace, resolve);
    });
    return this.waiting;
  }

  /** Stops watching the server. Called by Nest. */
  onApplicationShutdown(): void {
    this.server?.removeListener('request', this.onRequest);
    this.server = undefined;
    this.pending.clear();
  }

  private begin(): void {
    if (this.closing) return;
    this.closing = true;
    if (this.server === undefined) return;
    for (const response of this.pending) letGo(response);
    this.pending.clear();
    this.server.closeIdleConnections?.();
  }

  private readonly onRequest = (request: IncomingMessage, response: ServerResponse): void => {
    // HTTP/2 has no Connection header (a session ends with GOAWAY when the server closes).
    if (request.httpVersionMajor !== 1) return;
    if (this.closing) {
      letGo(response);
      return;
    }
    this.pending.add(response);
    response.once('close', () => this.pending.delete(response));
  };
}

/** Ends `response`'s connection after it, when its headers are still to be sent. */
function letGo(response: ServerResponse): void {
  if (!response.headersSent) response.setHeader('connection', 'close');
}
