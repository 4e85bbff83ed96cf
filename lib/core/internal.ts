/**
 * The core's internal entry: what the library's other packages (config, nest, http, grpc, telemetry,
 * health, testing, cli) share with the core beyond its public surface, `./index.ts`. Not in the
 * package's `exports` map, so an application cannot import it; a test
 * (`test/core-surface.e2e-spec.ts`) fails when a file outside `lib/core` imports any other core
 * file. Everything public is imported from `./index.ts`, never from here.
 *
 * - the rules module: value rules, the shared option rules and how a value is described in an error;
 * - the clock rule, the saturation rule, the rate limit's rules and its shared lease arithmetic (`reserveLease`);
 * - one listener per caller signal (`subscribeAbort`);
 * - marking an error as the dependency's failure (for exception filters and logs);
 * - naming a failure in a word a log reader knows (`failureCause`: `ECONNREFUSED`, `HTTP 502`, `UNAVAILABLE`);
 * - `warnOnce`, the one-time warning channel;
 * - whether a policy is a scope's key without a label (telemetry keeps it off the name's series);
 * - which refusal reasons a hop passes up (`relayedReasonOf`, the HTTP and gRPC clients' shared list).
 *
 * @internal
 */
export * from './rules/value-rule.js';
export * from './rules/option-rules.js';
export { describeValue } from './rules/describe-value.js';
export { CLOCK_RULE } from './time/clock-rule.js';
export { SATURATION_RULE } from './limits/saturation.js';
export { MEASURED_BACKOFF_RULES } from './backoff/backoff.js';
export { RATE_RULES } from './limits/rate-settings.js';
export { reserveLease, type LeaseDecision } from './limits/gcra-bucket.js';
export * from './signals/abort-link.js';
export * from './diagnostics/dependency-failure.js';
export { failureCause } from './classification/failure-cause.js';
export { warnOnce } from './diagnostics/warnings.js';
export { isUnlabeledScopeKey } from './policy/unlabeled-keys.js';
export { relayedReasonOf } from './classification/relayed-refusal.js';
