import type { RejectionReason } from '../errors.js';

/**
 * The gRPC trailer with which one of our services says its UNAVAILABLE is a refusal of its own
 * guards (`BudgetExhausted`, `DependencyUnavailable`, `RateLimited`, `QuotaExhausted`), beside
 * `grpc-retry-pushback-ms`: the gRPC half of the wire contract between hops whose HTTP half is the
 * problem type `urn:nresilience:problem:call-rejected`. A client interceptor of the library reads it
 * as a `RelayedRefusalError`.
 */
export const REFUSAL_METADATA = 'x-nresilience-refusal';

/**
 * The reasons a hop passes up as a relayed refusal. `Limited` (a full concurrency limit) is not one:
 * it says this replica is busy at this instant, which the caller's next attempt, often on another
 * replica, need not meet.
 */
const RELAYED_REASONS: ReadonlySet<string> = new Set<RejectionReason>([
  'BudgetExhausted',
  'DependencyUnavailable',
  'RateLimited',
  'QuotaExhausted',
]);

/**
 * The refusal reason `value` names when it is one a service below passes up (a string, or a
 * Buffer as gRPC metadata may hold), else `undefined`.
 * @internal
 */
export function relayedReasonOf(value: unknown): RejectionReason | undefined {
  const text = Buffer.isBuffer(value) ? value.toString('latin1') : value;
  return typeof text === 'string' && RELAYED_REASONS.has(text)
    ? (text as RejectionReason)
    : undefined;
}
