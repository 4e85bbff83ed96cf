import type { PolicyRegistry } from './policy-registry.js';

/**
 * How a `@Resilient` method finds the registry of the application its instance belongs to (DESIGN §4),
 * without process-wide "current registry" state:
 * 1. the registry Nest injected into the instance (the decorator declares an optional property
 *    dependency under {@link BOUND_REGISTRY}, so every instance Nest creates — singleton, transient or
 *    request-scoped, at start-up or per request — carries its own application's registry);
 * 2. the registry the application's explorer bound the instance to at start-up (instances whose
 *    module cannot see the registry, e.g. `isGlobal: false` without an import);
 * 3. for an instance Nest does not manage: the one application alive, if exactly one is.
 * A binding outlives `app.close()`: a call that enters while the application closes is still served.
 * @internal
 */

/** The own property under which Nest injects the application's registry into a `@Resilient` instance. @internal */
export const BOUND_REGISTRY = Symbol('nresilience.registry');

// Process-level by necessity: an instance Nest does not manage (made with `new`) carries no link to
// any application, so rule 3 can only ask which applications are running. Each module instance adds
// its own registry at start-up and removes it at shutdown; `bound` is keyed by instance, so two
// applications never share an entry.
const alive: PolicyRegistry[] = [];
const bound = new WeakMap<object, PolicyRegistry>();

/** `registry`'s application has started (its checks passed): unmanaged instances may use it. @internal */
export function bindRegistry(registry: PolicyRegistry): void {
  unbindRegistry(registry);
  alive.push(registry);
}

/** `registry`'s application has shut down (or failed to start). @internal */
export function unbindRegistry(registry: PolicyRegistry): void {
  const index = alive.indexOf(registry);
  if (index >= 0) alive.splice(index, 1);
}

/** Binds a discovered instance to its application's registry (the explorer, at start-up). @internal */
export function bindInstance(instance: object, registry: PolicyRegistry): void {
  bound.set(instance, registry);
}

/**
 * The registry for calls on `instance`.
 * @returns the registry, or the number of applications alive (0 or several) when none is bound
 * @internal
 */
export function registryFor(instance: unknown): PolicyRegistry | number {
  if (instance !== null && (typeof instance === 'object' || typeof instance === 'function')) {
    const injected = (instance as { [BOUND_REGISTRY]?: PolicyRegistry })[BOUND_REGISTRY];
    if (injected !== undefined) return injected;
    const explored = bound.get(instance);
    if (explored !== undefined) return explored;
  }
  return alive.length === 1 ? alive[0]! : alive.length;
}
