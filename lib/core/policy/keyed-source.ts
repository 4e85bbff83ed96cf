import type { Policy } from './policy.js';
import type { PolicyScopeEntry } from './policy-scope.js';

/** A family of keyed policies as health reads it: a `PolicyScope`, or the HTTP client's hosts. */
export interface KeyedFamily {
  /** Keys held now. */
  readonly size: number;
  /** Readings of up to `limit` keys, oldest first. */
  entries(limit?: number): PolicyScopeEntry<unknown>[];
}

/**
 * Where a keyed family (the HTTP client's per-host state, the gRPC interceptor's per-service state)
 * takes its settings from so that it follows config reloads: what a Nest `PolicyHandle`
 * (`registry.handle(name)`) offers.
 */
export interface KeyedPolicySource {
  /**
   * The settings keys take now: the name's current policy with its retry budget and breaker
   * resolved per key instead of the ones pinned to the name. The same object until a reload
   * changes the name's config.
   */
  readonly keyedTemplate: Policy;
  /**
   * Told once by each family built from this source, so that health reads its keys under the
   * source's name (optional; the family is held weakly).
   */
  trackKeys?(family: KeyedFamily): void;
}

/** Whether `source` is a {@link KeyedPolicySource} (has a `keyedTemplate`). */
export function isKeyedPolicySource(source: unknown): source is KeyedPolicySource {
  return typeof source === 'object' && source !== null && 'keyedTemplate' in source;
}
