import {
  type DynamicModule,
  Inject,
  type MiddlewareConsumer,
  Module,
  type NestModule,
} from '@nestjs/common';
import { PolicyConfigError } from '../core/index.js';
import { checkValue, SPAN_RULE } from '../core/internal.js';
import {
  RESILIENCE_CONTEXT_OPTIONS,
  ResilienceContextMiddleware,
  type ResilienceContextOptions,
} from './resilience-context.middleware.js';

/**
 * The inbound half of deadline, criticality and nested-retry propagation (DESIGN §3.9, §4): applies
 * `ResilienceContextMiddleware` to every route (global prefix included; `exclude` skips routes). Policies with `useAmbientDeadline` are then
 * bounded by the tighter of their own deadline and the caller's time left, outbound resilient calls
 * forward the remaining time and report `nestedRetry` for a caller that retries.
 *
 * ```ts
 * @Module({ imports: [ResilienceModule.forRoot({ … }), ResilienceContextModule.forRoot({ rejectExpired: { reserve: 50 } })] })
 * ```
 * Why a middleware rather than an interceptor: it runs before guards, pipes and interceptors, so they
 * all see the context and an expired request is refused before any of them runs; route exclusion and
 * the global prefix apply to it the usual way. Fastify's middleware chain once lost
 * `AsyncLocalStorage` for requests with a body (fastify/middie#124); with Nest 12's Fastify adapter the
 * e2e tests see the context in the handler of a POST with a body on both adapters.
 */
@Module({})
export class ResilienceContextModule implements NestModule {
  /** @param options the options given to `forRoot` (injected) */
  constructor(
    @Inject(RESILIENCE_CONTEXT_OPTIONS) private readonly options: ResilienceContextOptions,
  ) {}

  /**
   * The module reading the inbound context on every route (global, so import it once).
   * @param options `{ rejectExpired?: { reserve }, nested?: 'report' | 'singleShot', exclude? }`
   * @throws PolicyConfigError (field `rejectExpired.reserve`) unless the reserve is a duration in ms >= 0
   *   (or Infinity); (field `nested`) unless it is `'report'` or `'singleShot'`
   */
  static forRoot(options: ResilienceContextOptions = {}): DynamicModule {
    if (options.rejectExpired !== undefined)
      checkValue(SPAN_RULE, 'rejectExpired.reserve', options.rejectExpired?.reserve);
    if (
      options.nested !== undefined &&
      options.nested !== 'report' &&
      options.nested !== 'singleShot'
    ) {
      throw new PolicyConfigError('nested', options.nested, "must be 'report' or 'singleShot'");
    }
    return {
      module: ResilienceContextModule,
      global: true,
      providers: [
        { provide: RESILIENCE_CONTEXT_OPTIONS, useValue: options },
        ResilienceContextMiddleware,
      ],
    };
  }

  /** Applies the middleware to every route but the excluded ones. Called by Nest. */
  configure(consumer: MiddlewareConsumer): void {
    const applied = consumer.apply(ResilienceContextMiddleware);
    const excluded = this.options.exclude ?? [];
    (excluded.length > 0
      ? applied.exclude(...(excluded as Parameters<typeof applied.exclude>))
      : applied
    ).forRoutes('{*splat}');
  }
}
