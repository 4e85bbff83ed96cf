import { ATTEMPT_SIGNAL_METADATA } from './resilience.constants.js';

/**
 * Marks the parameter of a `@Resilient` method that receives the attempt's `AbortSignal` (aborted on
 * attempt timeout, deadline, or caller cancellation). If the caller passed an `AbortSignal` in that
 * position, it becomes the call's cancellation signal (`policy.run(..., { signal })`), and each attempt
 * still receives its own attempt signal there.
 *
 * ```ts
 * @Resilient('payments')
 * async charge(order: Order, @AttemptSignal() signal?: AbortSignal) {
 *   return fetch(url, { method: 'POST', body: JSON.stringify(order), signal });
 * }
 * ```
 * Only one parameter per method may carry it. Using it on a method without `@Resilient` makes
 * `app.init()` reject (for providers and controllers of the app).
 * @throws TypeError at decoration time on a constructor parameter or a second parameter of the same method.
 */
export function AttemptSignal(): ParameterDecorator {
  return (target: object, key: string | symbol | undefined, index: number) => {
    if (key === undefined)
      throw new TypeError(
        '@AttemptSignal() belongs on a method parameter, not a constructor parameter',
      );
    const existing: number | undefined = Reflect.getOwnMetadata(
      ATTEMPT_SIGNAL_METADATA,
      target,
      key,
    );
    if (existing !== undefined && existing !== index) {
      throw new TypeError(
        `@AttemptSignal() is on parameters ${existing} and ${index} of ${describe(target, key)}; only one parameter may receive the attempt signal`,
      );
    }
    Reflect.defineMetadata(ATTEMPT_SIGNAL_METADATA, index, target, key);
  };
}

/** The parameter index `@AttemptSignal()` marked on `(prototype, method)`, or -1. @internal */
export function attemptSignalIndex(target: object, key: string | symbol): number {
  const index: unknown = Reflect.getMetadata(ATTEMPT_SIGNAL_METADATA, target, key);
  return typeof index === 'number' ? index : -1;
}

function describe(target: object, key: string | symbol): string {
  const type = typeof target === 'function' ? target : target.constructor;
  return `${type?.name ?? 'anonymous'}.${String(key)}`;
}
