import type { StatusObject } from '@grpc/grpc-js';
import { GrpcStatus, REFUSAL_METADATA, RelayedRefusalError, readPushback } from '../core/index.js';
import { relayedReasonOf } from '../core/internal.js';

/**
 * The refusal one of our services below answered, when `status` is one: UNAVAILABLE with
 * `x-nresilience-refusal` naming a refusal reason, its pushback (`grpc-retry-pushback-ms`) as the
 * hint. Passed up at once as the fetch does (Permanent: no retry, no second guarded pause, no
 * breaker evidence).
 * @param dependency the service (or method) the call went to, named in the error (asked only for a refusal)
 */
export function relayedRefusal(
  status: StatusObject,
  dependency: () => string,
): RelayedRefusalError | undefined {
  if (status.code !== GrpcStatus.UNAVAILABLE) return undefined;
  const reason = relayedReasonOf(status.metadata?.get(REFUSAL_METADATA)[0]);
  if (reason === undefined) return undefined;
  const pushback = readPushback(status.metadata);
  return new RelayedRefusalError(
    reason,
    typeof pushback === 'number' ? pushback : undefined,
    dependency(),
  );
}
