import { type Policy, stopReasonOf } from '../core/index.js';
import { failureCause, markDependencyFailure } from '../core/internal.js';
import { GrpcStatusError, grpcCodeName } from './grpc-status.error.js';

/**
 * Records on `error`, what a gRPC call of the interceptor ended with, that the dependency failed on
 * every attempt allowed (an exception filter answers 502 and names it): attempts exhausted, or a
 * policy that adds nothing ending on the attempt's own status. The cause is the status code's name
 * (`UNAVAILABLE`), or the error's for a failure that never reached a status. Refusals, deadlines
 * and cancellations are left unmarked: their class says what they are.
 * @param dependency the service (or method) the call went to
 */
export function markGrpcFailure(error: unknown, policy: Policy, dependency: string): void {
  const stop = stopReasonOf(error);
  if (stop !== 'attemptsExhausted' && !(stop === undefined && error instanceof GrpcStatusError))
    return;
  markDependencyFailure(error, {
    policy: policy.options.name,
    dependency,
    cause:
      error instanceof GrpcStatusError
        ? (grpcCodeName(error.code) ?? String(error.code))
        : failureCause(error),
    ending: 'attemptsExhausted',
  });
}
