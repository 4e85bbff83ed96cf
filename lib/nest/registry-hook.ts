import type { PolicyRegistry } from './policy-registry.js';

/**
 * The module-level hook through which `@Resilient` finds the registry at call time (a decorator runs
 * when its class is defined, long before any DI container exists). A `PolicyRegistry` binds itself
 * here when its module initializes and unbinds when the application closes.
 *
 * Lookup order: the registry bound to the instance's class (set at startup for every provider and
 * controller the application's `ResilienceModule` discovered), else the most recently initialized
 * registry still open. Two applications alive in one process therefore each use their own registry
 * for their own classes.
 * @internal
 */
const active: PolicyRegistry[] = [];
const byClass = new WeakMap<Function, PolicyRegistry>();

/** Makes `registry` the one `@Resilient` methods use by default (most recent wins). @internal */
export function bindRegistry(registry: PolicyRegistry): void {
  unbindRegistry(registry);
  active.push(registry);
}

/** Forgets `registry` (the application closed). @internal */
export function unbindRegistry(registry: PolicyRegistry): void {
  const index = active.indexOf(registry);
  if (index >= 0) active.splice(index, 1);
}

/** Pins the class of a discovered provider or controller to `registry`. @internal */
export function bindClass(type: Function, registry: PolicyRegistry): void {
  byClass.set(type, registry);
}

/** The registry for calls on `instance`, or undefined when no ResilienceModule is initialized. @internal */
export function registryFor(instance: unknown): PolicyRegistry | undefined {
  const type = (instance as { constructor?: unknown } | null | undefined)?.constructor;
  if (typeof type === 'function') {
    const pinned = byClass.get(type);
    if (pinned !== undefined && active.includes(pinned)) return pinned;
  }
  return active[active.length - 1];
}
