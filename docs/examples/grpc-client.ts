// docs/grpc.md; test/docs-examples.e2e-spec.ts runs it against a loopback gRPC server.
// #region grpc
import { Backoff, Resilience } from '../../lib/core/index.js';
import { createResilienceInterceptor } from '../../lib/grpc/index.js';

// Unary calls of the Echo service may be retried (they are safe to repeat); UNAVAILABLE is retried,
// INVALID_ARGUMENT and the like are answers. Backoff off only to keep the example quick.
export const interceptor = createResilienceInterceptor({
  policy: Resilience.http.with({ name: 'echo', attemptTimeout: 1000, backoff: Backoff.none }),
  repeatable: ['nresilience.test.Echo'],
});
// const client = new EchoClient(address, credentials.createInsecure(), { interceptors: [interceptor] });
// #endregion grpc
