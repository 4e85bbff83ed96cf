import type { KeyedFamily } from '../core/index.js';

/**
 * The keyed families built from each registered name (the hosts of a resilient fetch or of the
 * `HttpService` adapter, the services of a gRPC interceptor), held weakly: a client that is dropped
 * stops being reported. The health indicator reads their keys under the name. @internal
 */
export class KeyedFamilies {
  private readonly families = new Map<string, WeakRef<KeyedFamily>[]>();

  /** Records `family` under `name` (once). */
  track(name: string, family: KeyedFamily): void {
    const refs = this.live(name);
    if (!refs.some((ref) => ref.deref() === family)) refs.push(new WeakRef(family));
    this.families.set(name, refs);
  }

  /** The families of `name` still in use; empty when none. */
  of(name: string): KeyedFamily[] {
    const families: KeyedFamily[] = [];
    for (const ref of this.live(name)) {
      const family = ref.deref();
      if (family !== undefined) families.push(family);
    }
    return families;
  }

  /** The weak references of `name` whose family is still alive (dead ones are dropped). */
  private live(name: string): WeakRef<KeyedFamily>[] {
    const refs = (this.families.get(name) ?? []).filter((ref) => ref.deref() !== undefined);
    if (refs.length === 0) this.families.delete(name);
    else this.families.set(name, refs);
    return refs;
  }
}
