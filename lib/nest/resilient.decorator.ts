import { Inject, Optional } from '@nestjs/common';
import { Observable, type Subscription, from, isObservable, of } from 'rxjs';
import { type Policy, PolicyConfigError } from '../core/index.js';
import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../core/internal.js';
import { attemptSignalIndex } from './attempt-signal.decorator.js';
import { BOUND_REGISTRY, registryFor } from './resilient-binding.js';
import { PolicyRegistry } from './policy-registry.js';
import { checkManagedClass, checkReturnType } from './resilient-checks.js';
import { declaresPropertyDependency } from './nest-internals.js';
import { type Criticality, withCriticality } from './criticality.decorator.js';
import { MethodClassifier, type ResilientClassifier } from './method-classifier.js';
import { MethodFallback } from './method-fallback.js';
import { noteMethodFailure } from './method-failures.js';
import {
  CRITICALITY_METADATA,
  RESILIENT_CLASSIFIER_METADATA,
  RESILIENT_FALLBACK_METADATA,
  RESILIENT_POLICY_METADATA,
} from './resilience.constants.js';
import { UnknownPolicyError } from './unknown-policy.error.js';

/** Options of {@link Resilient}. */
export interface ResilientOptions {
  /**
   * What the method returns. By default it is read from the `design:returntype` metadata that
   * TypeScript emits (`emitDecoratorMetadata`) for a declared return type: `Observable<T>` selects
   * the Observable mode, anything else the Promise mode. TypeScript emits `Object` when `Observable` is
   * imported with `import type`, so import it as a value. Set it when your build emits no metadata
   * (esbuild, SWC without metadata) or the return type is not declared. An `async *` method is
   * in the iterable mode without it; `'iterable'` selects that mode for a method that returns an
   * AsyncIterable some other way.
   */
  returns?: 'promise' | 'observable' | 'iterable';
  /**
   * How this method's outcomes become verdicts, instead of the policy's classifier: a `Classifier`
   * written in code (`Classifier.http.with(Classifier.when(StaleIndexError, Verdict.permanent))`) or the
   * config form (`'grpc'`, `{ base: 'http', permanent: [409] }`; see {@link ResilientClassifier}). Only
   * this method's calls use it; the breaker, the retry budget, the listeners and every other setting
   * stay the named policy's (its breaker counts this method's failures with the others'), and a reload
   * of the policy keeps it. Checked at `app.init()`: a bad one rejects start-up with a
   * `ResilienceConfigError` naming the class, the method, the value and the rule. Default: the policy's.
   */
  classifier?: ResilientClassifier;
  /**
   * The name of a method of the same class that answers a call the policy stopped without a value
   * of its own: refused (breaker, budget, limiter), attempts exhausted on Transient failures, or the
   * deadline passed — never a Permanent answer (a 404 stays a 404) nor the caller's cancellation. It
   * is called on the same instance with the same arguments, and what it returns (a value, a Promise,
   * or in Observable mode an Observable) is the call's outcome; a fallback that throws rejects with
   * its own error, the original as its `cause`. The call's terminal event says `fallback: 'served'` (or `'failed'`).
   * Checked at `app.init()`: a name that is not a method of the class (or is the decorated method, or
   * an accessor: a getter is never run to find a fallback) rejects start-up with a `ResilienceConfigError` naming the class, the method and the value.
   * Default: none.
   */
  fallback?: string;
}

/**
 * Runs every call of the decorated method through the named policy of the application's
 * `PolicyRegistry`; each attempt is a fresh invocation of the method on the same instance.
 * - Promise mode (the default): returns a Promise of the successful attempt's value, rejecting with
 *   the policy's final error; a synchronous method becomes asynchronous.
 * - Observable mode (declared `: Observable<T>`, or `{ returns: 'observable' }`): returns a cold
 *   Observable; failures before the first value are retried, later ones pass through; the policy's
 *   `attemptTimeout` bounds each silence between values (`AttemptStalledError`); unsubscribing
 *   aborts the call and ends the method's Observable.
 * - Iterable mode (an `async *` method, or `{ returns: 'iterable' }`): returns an AsyncIterable that
 *   runs the call when first pulled, with the stream rules of `policy.run` (docs/streams.md):
 *   retried until the first element, silences bounded, `break` ends the method's stream.
 * - `@AttemptSignal()` on a parameter receives each attempt's signal.
 *
 * Works above or below route, guard and interceptor decorators; the wrapper carries
 * `RESILIENT_POLICY_METADATA` = `name`. Decorator order, per-application binding and unmanaged
 * instances: docs/getting-started.md, "`@Resilient` methods".
 * @param name the registration name (`policies.<name>` in the module config), a non-empty string
 * @param options see {@link ResilientOptions}
 * @throws TypeError at decoration time for an empty name, a non-method, or a second `@Resilient` on the same method;
 *   PolicyConfigError (field `fallback`) for a `fallback` that is not a non-empty string; at `app.init()`, `UnknownPolicyError` for a name
 *   the registry does not have and `ResilienceConfigError` for a bad `classifier` or a `fallback` that is
 *   not another method of the class.
 */
export function Resilient(name: string, options: ResilientOptions = {}): MethodDecorator {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(`@Resilient(name): name must be a non-empty string, got ${String(name)}`);
  }
  if (
    options.fallback !== undefined &&
    (typeof options.fallback !== 'string' || options.fallback.length === 0)
  ) {
    throw new PolicyConfigError(
      'fallback',
      options.fallback,
      `must be the name of a method of the same class, a non-empty string (in @Resilient('${name}', { fallback }))`,
    );
  }
  if (
    options.returns !== undefined &&
    options.returns !== 'promise' &&
    options.returns !== 'observable' &&
    options.returns !== 'iterable'
  ) {
    throw new TypeError(
      `@Resilient('${name}', { returns }): returns must be 'promise', 'observable' or 'iterable', got ${String(options.returns)}`,
    );
  }
  return <T>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<T>,
  ): TypedPropertyDescriptor<T> => {
    const original = descriptor.value as unknown;
    const type = typeof target === 'function' ? target : target.constructor;
    const label = `${type?.name ?? 'anonymous'}.${String(key)}`;
    if (typeof original !== 'function')
      throw new TypeError(`@Resilient('${name}') belongs on a method; ${label} is not one`);
    if (Reflect.getMetadata(RESILIENT_POLICY_METADATA, original) !== undefined) {
      throw new TypeError(
        `@Resilient is applied twice to ${label}; nest policies explicitly instead`,
      );
    }
    const method = original as (...args: unknown[]) => unknown;
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, key);
    const iterable =
      options.returns === undefined
        ? isAsyncGeneratorFunction(method)
        : options.returns === 'iterable';
    const observable =
      options.returns === undefined
        ? !iterable && isObservableType(returnType)
        : options.returns === 'observable';
    if (options.returns === undefined && !iterable)
      checkReturnType(name, label, returnType, observable);
    if (typeof target !== 'function') injectRegistry(target);
    const classifier =
      options.classifier === undefined
        ? undefined
        : new MethodClassifier(options.classifier, `@Resilient('${name}') on ${label}`);
    const fallback =
      options.fallback === undefined
        ? undefined
        : new MethodFallback(options.fallback, key, `@Resilient('${name}') on ${label}`);
    const context: WrapContext = {
      name,
      label,
      method,
      target,
      key,
      signalIndex: undefined,
      classifier,
      fallback,
    };
    const plain = iterable
      ? iterableWrapper(context)
      : observable
        ? observableWrapper(context)
        : promiseWrapper(context);
    // @Criticality below @Resilient: the policy's retry decisions must see the level too.
    const level: unknown = Reflect.getMetadata(CRITICALITY_METADATA, original);
    const wrapper =
      typeof level === 'string' ? withCriticality(level as Criticality, plain) : plain;

    for (const metadataKey of Reflect.getOwnMetadataKeys(method)) {
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, method), wrapper);
    }
    Reflect.defineMetadata(RESILIENT_POLICY_METADATA, name, wrapper);
    if (classifier !== undefined)
      Reflect.defineMetadata(RESILIENT_CLASSIFIER_METADATA, classifier, wrapper);
    if (fallback !== undefined)
      Reflect.defineMetadata(RESILIENT_FALLBACK_METADATA, fallback, wrapper);
    Object.defineProperty(wrapper, 'name', { value: method.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: method.length, configurable: true });
    descriptor.value = wrapper as T;
    return descriptor;
  };
}

interface WrapContext {
  readonly name: string;
  readonly label: string;
  readonly method: (...args: unknown[]) => unknown;
  readonly target: object;
  readonly key: string | symbol;
  /** Index of the `@AttemptSignal()` parameter, read on first call (-1 = none). */
  signalIndex: number | undefined;
  /** The method's own classifier (`options.classifier`), if given. */
  readonly classifier: MethodClassifier | undefined;
  /** The method's fallback (`options.fallback`), if given. */
  readonly fallback: MethodFallback | undefined;
}

/** Declares, once per class, the optional property through which Nest hands each instance its application's registry. */
function injectRegistry(prototype: object): void {
  if (declaresPropertyDependency(prototype.constructor, BOUND_REGISTRY)) return;
  Inject(PolicyRegistry)(prototype, BOUND_REGISTRY);
  Optional()(prototype, BOUND_REGISTRY);
}

function policyFor(context: WrapContext, instance: unknown): Policy {
  checkManagedClass(context.name, context.label, instance);
  const registry = registryFor(instance);
  if (typeof registry === 'number') {
    // The instance was not created by a Nest application: the one running may serve it, no other guess is safe.
    throw new Error(
      registry === 0
        ? `@Resilient('${context.name}') on ${context.label} was called, but no ResilienceModule is initialized: ` +
            'import ResilienceModule.forRoot(...) in the application module and call this method after app.init(), on an instance the application created (a provider or controller)'
        : `@Resilient('${context.name}') on ${context.label} was called on an instance no Nest application created, while ${registry} applications ` +
            'with ResilienceModule are running, so whose policies to use is unknown: get the instance from the application it belongs to (a provider or controller, app.get(Class)) instead of creating it with new',
    );
  }
  if (!registry.has(context.name)) {
    throw new UnknownPolicyError(
      [context.name],
      registry.names(),
      new Map([[context.name, [`@Resilient on ${context.label}`]]]),
    );
  }
  const policy = registry.get(context.name);
  const classified = context.classifier === undefined ? policy : context.classifier.apply(policy);
  return context.fallback === undefined ? classified : context.fallback.apply(classified);
}

function signalIndexOf(context: WrapContext): number {
  return (context.signalIndex ??= attemptSignalIndex(context.target, context.key));
}

function isAbortSignal(value: unknown): value is AbortSignal {
  const signal = value as AbortSignal | null | undefined;
  return (
    typeof signal?.aborted === 'boolean' &&
    typeof signal.addEventListener === 'function' &&
    typeof signal.removeEventListener === 'function'
  );
}

function argsFor(args: unknown[], index: number, signal: AbortSignal): unknown[] {
  const copy = args.slice();
  copy[index] = signal;
  return copy;
}

function isObservableType(type: unknown): boolean {
  const prototype = (type as { prototype?: { subscribe?: unknown; pipe?: unknown } } | undefined)
    ?.prototype;
  return (
    typeof type === 'function' &&
    (type === Observable ||
      (typeof prototype?.subscribe === 'function' && typeof prototype.pipe === 'function'))
  );
}

function isAsyncGeneratorFunction(fn: (...args: unknown[]) => unknown): boolean {
  return (
    (fn as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag] === 'AsyncGeneratorFunction'
  );
}

function iterableWrapper(
  context: WrapContext,
): (this: unknown, ...args: unknown[]) => AsyncIterable<unknown> {
  return function resilient(this: unknown, ...args: unknown[]): AsyncIterable<unknown> {
    const self = this;
    // Lazy, as the method's own generator is: nothing runs until the first pull.
    return (async function* protectedStream(): AsyncGenerator<unknown> {
      const policy = policyFor(context, self);
      const index = signalIndexOf(context);
      const caller = index >= 0 && isAbortSignal(args[index]) ? args[index] : undefined;
      const run = (): Promise<unknown> =>
        policy.run(
          (attempt) =>
            context.method.apply(self, index >= 0 ? argsFor(args, index, attempt.signal) : args),
          caller === undefined ? undefined : { signal: caller },
        );
      const stream = await (context.fallback === undefined
        ? run()
        : context.fallback.run(self, args, undefined, run));
      if (!isAsyncIterable(stream)) {
        throw new TypeError(
          `@Resilient('${context.name}'): ${context.label} is in the iterable mode but produced ${describeKind(stream)}; return an AsyncIterable or drop { returns: 'iterable' }`,
        );
      }
      yield* stream;
    })();
  };
}

function isAsyncIterable(value: unknown): value is AsyncIterable<unknown> {
  return (
    typeof (value as { [Symbol.asyncIterator]?: unknown } | null | undefined)?.[
      Symbol.asyncIterator
    ] === 'function'
  );
}

function describeKind(value: unknown): string {
  return value === null
    ? 'null'
    : typeof value === 'object'
      ? `an object (${(value as object).constructor?.name ?? 'Object'})`
      : typeof value;
}

function promiseWrapper(
  context: WrapContext,
): (this: unknown, ...args: unknown[]) => Promise<unknown> {
  return async function resilient(this: unknown, ...args: unknown[]): Promise<unknown> {
    const policy = policyFor(context, this);
    const index = signalIndexOf(context);
    const caller = index >= 0 && isAbortSignal(args[index]) ? args[index] : undefined;
    const self = this;
    const run = (): Promise<unknown> =>
      policy.run(
        (attempt) => {
          const result = context.method.apply(
            self,
            index >= 0 ? argsFor(args, index, attempt.signal) : args,
          );
          if (isObservable(result)) {
            throw new TypeError(
              `@Resilient('${context.name}'): ${context.label} returned an Observable, but its return type is not declared as Observable; ` +
                "declare it (`: Observable<T>`, with Observable imported as a value, not by `import type`) or use @Resilient(name, { returns: 'observable' })",
            );
          }
          return result;
        },
        caller === undefined ? undefined : { signal: caller },
      );
    if (context.fallback !== undefined) return context.fallback.run(self, args, undefined, run);
    try {
      return await run();
    } catch (error) {
      // For the opt-in 502's log line: which policy and method ran out of attempts, and on what.
      noteMethodFailure(error, policy.name || context.name, context.label);
      throw error;
    }
  };
}

function observableWrapper(
  context: WrapContext,
): (this: unknown, ...args: unknown[]) => Observable<unknown> {
  return function resilient(this: unknown, ...args: unknown[]): Observable<unknown> {
    const self = this;
    return new Observable<unknown>((subscriber) => {
      let policy: Policy;
      try {
        policy = policyFor(context, self);
      } catch (error) {
        subscriber.error(error);
        return;
      }
      const index = signalIndexOf(context);
      const caller = index >= 0 && isAbortSignal(args[index]) ? args[index] : undefined;
      // Aborted by unsubscribe or by the caller's signal; the policy's run is cancelled with it.
      const controller = new AbortController();
      // Through the core's fan-out: many calls sharing one request signal put one listener on it.
      let link: AbortSubscription | undefined;
      if (caller?.aborted) controller.abort(caller.reason);
      else if (caller !== undefined)
        link = subscribeAbort(caller, () => controller.abort(caller.reason));
      let inner: Subscription | undefined;

      /** Runs `source` (a fallback's, or one no policy rule wraps) into the subscriber: settles at its first value, completion, or an error before either. */
      const forward = (source: Observable<unknown>, signal: AbortSignal): Promise<void> =>
        new Promise<void>((resolve, reject) => {
          let settled = false;
          const onAbort = (): void => {
            if (settled) return;
            settled = true;
            inner?.unsubscribe();
            reject(signal.reason);
          };
          const settle = (): void => {
            settled = true;
            signal.removeEventListener('abort', onAbort);
          };
          if (signal.aborted) return onAbort();
          signal.addEventListener('abort', onAbort, { once: true });
          inner = source.subscribe({
            next: (value) => {
              if (!settled) {
                settle();
                resolve();
              }
              subscriber.next(value);
            },
            error: (error: unknown) => {
              if (settled) subscriber.error(error);
              else {
                settle();
                reject(error);
              }
            },
            complete: () => {
              if (!settled) {
                settle();
                resolve();
              }
              subscriber.complete();
            },
          });
          if (subscriber.closed) inner.unsubscribe();
        });
      let closed = false;
      // The accepted attempt's values, pulled as fast as they come (an Observable's subscriber is always ready).
      let stream: AsyncIterator<unknown> | undefined;
      const run = (): Promise<unknown> =>
        policy.run(
          (attempt) =>
            toObservable(
              context.method.apply(self, index >= 0 ? argsFor(args, index, attempt.signal) : args),
            ),
          { signal: controller.signal },
        );
      const deliver = (result: unknown): Promise<void> =>
        forward(toObservable(result), controller.signal);
      (context.fallback === undefined ? run() : context.fallback.run(self, args, deliver, run))
        .then(async (accepted: unknown) => {
          if (closed) {
            if (isAsyncIterable(accepted)) void accepted[Symbol.asyncIterator]().return?.();
            return;
          }
          // A policy that adds nothing hands the Observable back as it is; a fallback delivered its own.
          if (isObservable(accepted)) return forward(accepted, controller.signal);
          if (!isAsyncIterable(accepted)) return;
          stream = accepted[Symbol.asyncIterator]();
          for (;;) {
            const next = await stream.next();
            if (closed) return;
            if (next.done === true) return subscriber.complete();
            subscriber.next(next.value);
          }
        })
        .then(undefined, (error: unknown) => {
          if (!closed) subscriber.error(error);
        });

      return () => {
        closed = true;
        if (link !== undefined) unsubscribeAbort(link);
        controller.abort();
        inner?.unsubscribe();
        void stream?.return?.();
      };
    });
  };
}

function toObservable(result: unknown): Observable<unknown> {
  return isObservable(result) ? result : isPromiseLike(result) ? from(result) : of(result);
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof (value as PromiseLike<unknown> | null | undefined)?.then === 'function';
}
