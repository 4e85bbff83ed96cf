import { AsyncLocalStorage } from 'node:async_hooks';
import { Fallback, type Policy, PolicyConfigError } from '../core/index.js';

/** One call of a decorated method: what its fallback method is called on and with. */
interface FallbackCall {
  readonly self: unknown;
  readonly args: unknown[];
  /** Observable mode: runs the fallback method's result into the caller's subscriber. */
  readonly deliver: ((result: unknown) => Promise<unknown>) | undefined;
}

/**
 * `@Resilient(name, { fallback: 'method' })`: the method of the same class that answers a call its
 * policy stopped without a value (a refusal, attempts exhausted on Transient failures, the deadline;
 * never a Permanent answer), called on the same instance with the same arguments. Each policy value
 * it is applied to gets one derived policy whose core fallback (`Fallback.to`) finds the call it
 * stands in for through an `AsyncLocalStorage` entered around the call, so the breaker, budget,
 * limiter and listeners stay the named policy's and nothing is derived per call.
 * @internal
 */
export class MethodFallback {
  private readonly derived = new WeakMap<Policy, Policy>();
  private readonly calls = new AsyncLocalStorage<FallbackCall>();
  private readonly fallback: Fallback;

  /**
   * @param method the fallback method's name, as given
   * @param decorated the decorated method's name (a method may not be its own fallback)
   * @param where the decorated method, as errors name it: `@Resilient('prices') on Prices.latest`
   */
  constructor(
    readonly method: string,
    private readonly decorated: string | symbol,
    private readonly where: string,
  ) {
    this.fallback = Fallback.to(() => {
      const call = this.calls.getStore()!;
      // Checked at app.init() for the instances Nest manages; here for those it does not. The
      // method is read once, from its descriptor: no getter runs.
      const found = this.find(call.self as object);
      if (found instanceof PolicyConfigError) throw found;
      const result: unknown = found.apply(call.self, call.args);
      return call.deliver === undefined ? result : call.deliver(result);
    });
  }

  /**
   * The problem with this fallback on `prototype`, or `undefined` when it names a method of it (a
   * function held as a value: an accessor is refused unread, so no getter ever runs).
   * The problem names the class and method (`where`), the value and the rule.
   */
  check(prototype: object): PolicyConfigError | undefined {
    const found = this.find(prototype);
    return found instanceof PolicyConfigError ? found : undefined;
  }

  /** The fallback method `target` has, or the problem with it. */
  private find(target: object): ((...args: unknown[]) => unknown) | PolicyConfigError {
    if (this.method === this.decorated)
      return new PolicyConfigError(
        `${this.where}: fallback`,
        this.method,
        'must name another method of the class, not the decorated one',
      );
    const descriptor = findDescriptor(target, this.method);
    const value: unknown = descriptor?.value;
    if (typeof value === 'function') return value as (...args: unknown[]) => unknown;
    const found =
      descriptor === undefined || (value === undefined && descriptor.get === descriptor.set)
        ? 'the class has no such method'
        : descriptor.get !== undefined || descriptor.set !== undefined
          ? 'it is an accessor (get/set), not a method'
          : `it is a ${typeof value}, not a method`;
    return new PolicyConfigError(
      `${this.where}: fallback`,
      this.method,
      `must name a method of the same class (${found})`,
    );
  }

  /** `policy` with this fallback: its breaker, budget, limiter and listeners stay the named policy's. */
  apply(policy: Policy): Policy {
    let derived = this.derived.get(policy);
    if (derived === undefined) {
      derived = policy.with({ fallback: this.fallback });
      this.derived.set(policy, derived);
    }
    return derived;
  }

  /**
   * Runs `call` (the policy's run of one method call) so that its fallback, if it runs, calls the
   * fallback method on `self` with `args`; in Observable mode `deliver` takes the fallback method's
   * result (an Observable, a Promise or a value) to the caller's subscriber.
   */
  run<T>(
    self: unknown,
    args: unknown[],
    deliver: FallbackCall['deliver'],
    call: () => Promise<T>,
  ): Promise<T> {
    return this.calls.run({ self, args, deliver }, call);
  }
}

/** The descriptor of `key` on `target` or the nearest prototype that has it (nothing is read through a getter). */
function findDescriptor(target: object, key: string): PropertyDescriptor | undefined {
  for (
    let at: object | null = target;
    at !== null;
    at = Object.getPrototypeOf(at) as object | null
  ) {
    const descriptor = Object.getOwnPropertyDescriptor(at, key);
    if (descriptor !== undefined) return descriptor;
  }
  return undefined;
}
