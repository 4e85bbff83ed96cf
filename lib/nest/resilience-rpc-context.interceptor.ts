import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  Optional,
} from '@nestjs/common';
import type { Observable } from 'rxjs';
import {
  Ambient,
  type AmbientChanges,
  ambientFromHeaders,
  PolicyConfigError,
  WallClock,
} from '../core/index.js';
import {
  RESILIENCE_CONTEXT_OPTIONS,
  type ResilienceContextOptions,
} from './resilience-context.middleware.js';

/** What a gRPC server call offers to read (grpc-js `ServerUnaryCall` and the streams; no grpc-js import). */
interface InboundCall {
  getDeadline?(): Date | number;
}

/** Inbound gRPC metadata: `get(key)` returns the values of a key (strings or Buffers). */
interface InboundMetadata {
  get(key: string): unknown[];
}

/**
 * The inbound half of deadline propagation for Nest microservices (DESIGN §3.9, §4): for each gRPC
 * handler call it reads the call's deadline (`grpc-timeout`, as grpc-js parsed it), our
 * `x-nresilience-remaining-ms`, Envoy's `x-envoy-expected-rq-timeout-ms`, `x-nresilience-criticality`
 * (clamped at critical) and the nested-retry marker into the ambient context the handler runs in.
 * Outbound calls the handler makes — gRPC through `createResilienceInterceptor`, HTTP, or any policy
 * with `useAmbientDeadline` — are then bounded by the tighter of the inbound time left and their own.
 * Malformed values are ignored; a passed deadline counts as 0 ms left. Other contexts (HTTP, other
 * RPC transports) pass through untouched, so it can be bound globally in a hybrid app.
 * `nested: 'singleShot'` (given here, or by `ResilienceContextModule.forRoot` when bound through
 * `APP_INTERCEPTOR`) handles a call carrying the nested-retry marker in a single-shot scope, as the
 * HTTP middleware does: every policy call makes one attempt, still marking what it sends.
 *
 * ```ts
 * app.useGlobalInterceptors(new ResilienceRpcContextInterceptor());        // or
 * providers: [{ provide: APP_INTERCEPTOR, useClass: ResilienceRpcContextInterceptor }]
 * ```
 */
@Injectable()
export class ResilienceRpcContextInterceptor implements NestInterceptor {
  private readonly singleShot: boolean;

  /**
   * @param options `{ nested?: 'report' | 'singleShot' }` (default `'report'`: a marked call is only
   *   recorded); the other fields of `ResilienceContextOptions` concern HTTP and are not read
   * @throws PolicyConfigError (field `nested`) unless it is `'report'` or `'singleShot'`
   */
  constructor(
    @Optional()
    @Inject(RESILIENCE_CONTEXT_OPTIONS)
    options?: Pick<ResilienceContextOptions, 'nested'>,
  ) {
    const nested = options?.nested;
    if (nested !== undefined && nested !== 'report' && nested !== 'singleShot')
      throw new PolicyConfigError('nested', nested, "must be 'report' or 'singleShot'");
    this.singleShot = nested === 'singleShot';
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'rpc') return next.handle();
    const changes = ResilienceRpcContextInterceptor.changesFor(
      context.getArgByIndex(1),
      context.getArgByIndex(2),
    );
    if (changes === undefined) return next.handle();
    if (this.singleShot && changes.nestedRetry === true) changes.singleShot = true;
    // Nest binds the handler to the async context `handle()` is called in.
    return Ambient.run(changes, () => next.handle());
  }

  /**
   * The ambient changes a gRPC call asks for, or `undefined` when `metadata` is not gRPC metadata
   * (another transport) or it asks for nothing.
   * @param metadata the handler's second argument (grpc-js `Metadata`)
   * @param call the handler's third argument (the grpc-js server call)
   */
  static changesFor(metadata: unknown, call: unknown): AmbientChanges | undefined {
    if (
      typeof metadata !== 'object' ||
      metadata === null ||
      typeof (metadata as InboundMetadata).get !== 'function'
    )
      return undefined;
    const read = (name: string): string[] | undefined => {
      const values = (metadata as InboundMetadata)
        .get(name)
        .filter((value) => typeof value === 'string' || Buffer.isBuffer(value));
      return values.length === 0 ? undefined : values.map(String);
    };
    const changes = ambientFromHeaders(read);
    const getDeadline = (call as InboundCall | null)?.getDeadline;
    if (typeof getDeadline === 'function') {
      const left = WallClock.until(getDeadline.call(call));
      if (left !== Infinity)
        changes.remaining = Math.max(0, Math.min(left, changes.remaining ?? Infinity));
    }
    return Object.keys(changes).length === 0 ? undefined : changes;
  }
}
