import { Inject, Injectable, type NestMiddleware, Optional } from '@nestjs/common';
import { Ambient, ambientFromHeaders } from '../core/index.js';
import {
  PROBLEM_JSON,
  ProblemTypes,
  type ResilienceProblem,
} from './resilience-exception.filter.js';

/** Options of the inbound context (`ResilienceContextModule.forRoot`). All durations are milliseconds. */
export interface ResilienceContextOptions {
  /**
   * Answer 504 (`application/problem+json`, reason `DeadlineExceeded`) before the handler runs when
   * the request arrives with less than `reserve` ms left (a remaining-time header below it). Off by
   * default: a request may still be answerable (from a cache), and refusing it is a decision about
   * your service.
   */
  rejectExpired?: { reserve: number };
  /**
   * What a request carrying the nested-retry marker (`X-NResilience-Retrying: 1`: the client above
   * will retry it) changes here. `'report'` (default): nothing but the record — policies called while
   * handling it report a `nestedRetry` event and retry as usual. `'singleShot'`: its handling runs in
   * a single-shot scope (`Ambient.singleShot`): every policy call makes one attempt, leaving the
   * retrying to the layer above; outbound HTTP calls still stamp the marker on their first attempt,
   * so a single-shot hop below does the same. Retries of the client above arrive unmarked (the marker
   * is on first attempts only) and are handled with the policies' own attempts.
   */
  nested?: 'report' | 'singleShot';
  /** Routes the middleware skips (Nest's `MiddlewareConsumer.exclude` forms: paths or `{ path, method }`). */
  exclude?: (string | { path: string; method: number })[];
}

/** Injection token of {@link ResilienceContextOptions}. */
export const RESILIENCE_CONTEXT_OPTIONS = Symbol('NResilience.ContextOptions');

/** The raw Node request both adapters give middleware (Express's extends it): only its headers are read. */
export interface RawRequest {
  headers: Record<string, string | string[] | undefined>;
}
/** The raw Node response both adapters give middleware: enough to answer an early 504. */
export interface RawResponse {
  statusCode: number;
  setHeader(name: string, value: string): unknown;
  end(body: string): unknown;
}

/**
 * Reads the inbound request's remaining time (`X-NResilience-Remaining-Ms`, Envoy's
 * `x-envoy-expected-rq-timeout-ms`; the tighter wins), criticality (`X-NResilience-Criticality`,
 * clamped at critical) and nested-retry marker (`X-NResilience-Retrying: 1`) into the ambient context
 * for everything after it (DESIGN §3.9, §4). Malformed values (`-1`, `abc`, above a day) are ignored.
 * With `rejectExpired`, a request with less than `reserve` ms left is answered 504 here; with
 * `nested: 'singleShot'`, a marked request is handled in a single-shot scope.
 * Works on Express and Fastify (raw Node objects); `ResilienceContextModule` applies it to every route.
 */
@Injectable()
export class ResilienceContextMiddleware implements NestMiddleware {
  private readonly reserve: number | undefined;
  private readonly singleShot: boolean;

  /** @param options `{ rejectExpired?, nested? }`; none = read the context, never reject, report nested retries */
  constructor(@Optional() @Inject(RESILIENCE_CONTEXT_OPTIONS) options?: ResilienceContextOptions) {
    this.reserve = options?.rejectExpired?.reserve;
    this.singleShot = options?.nested === 'singleShot';
  }

  use(req: RawRequest, res: RawResponse, next: (error?: unknown) => void): void {
    const changes = ambientFromHeaders((name) => req.headers[name]);
    if (
      this.reserve !== undefined &&
      changes.remaining !== undefined &&
      changes.remaining < this.reserve
    ) {
      const problem: ResilienceProblem = {
        type: ProblemTypes.deadlineExceeded,
        title: 'Gateway Timeout',
        status: 504,
        detail: `The request arrived with ${changes.remaining} ms left, less than the ${this.reserve} ms answering it needs.`,
        reason: 'DeadlineExceeded',
      };
      res.statusCode = 504;
      res.setHeader('content-type', PROBLEM_JSON);
      res.end(JSON.stringify(problem));
      return;
    }
    if (this.singleShot && changes.nestedRetry === true) changes.singleShot = true;
    Ambient.run(changes, next);
  }
}
