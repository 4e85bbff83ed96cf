import { Inject } from '@nestjs/common';
import { INJECT_POLICY_METADATA } from './resilience.constants.js';

/**
 * Every name any `@InjectPolicy` in the process has used; `ResilienceModule` provides a handle for
 * each. Process-level because it is filled at decoration time: `@InjectPolicy(name)` runs when its
 * class is defined, before any module instance exists, and Nest wants one provider per token when it
 * reads the module definition. It holds names only: each application's handle providers resolve
 * against that application's own registry. @internal
 */
export const injectedPolicyNames = new Set<string>();

/**
 * The injection token of the `PolicyHandle` for `name` (for `moduleRef.get(getPolicyToken('payments'))`
 * or a custom provider's `inject`).
 * @param name the registration name
 */
export function getPolicyToken(name: string): string {
  return `nresilience:policy:${name}`;
}

/**
 * Injects a stable `PolicyHandle` for the named policy (constructor parameter or property). The handle
 * always runs the registry's current policy, so a reload takes effect without re-injection.
 *
 * ```ts
 * constructor(@InjectPolicy('payments') private readonly payments: PolicyHandle) {}
 * ```
 * Requires `ResilienceModule` (global by default). A name that is not registered makes `app.init()`
 * reject with an `UnknownPolicyError` naming it (checked for providers and controllers of the app).
 * @param name the registration name, a non-empty string
 * @throws TypeError at decoration time when `name` is not a non-empty string.
 */
export function InjectPolicy(name: string): PropertyDecorator & ParameterDecorator {
  if (typeof name !== 'string' || name.length === 0) {
    throw new TypeError(
      `@InjectPolicy(name): name must be a non-empty string, got ${String(name)}`,
    );
  }
  injectedPolicyNames.add(name);
  const inject = Inject(getPolicyToken(name));
  return (target: object, key: string | symbol | undefined, index?: number) => {
    // Constructor parameters decorate the class itself; properties decorate the prototype.
    const type = typeof target === 'function' ? target : target.constructor;
    const names: string[] = Reflect.getOwnMetadata(INJECT_POLICY_METADATA, type) ?? [];
    if (!names.includes(name))
      Reflect.defineMetadata(INJECT_POLICY_METADATA, [...names, name], type);
    (inject as (target: object, key: string | symbol | undefined, index?: number) => void)(
      target,
      key,
      index,
    );
  };
}
