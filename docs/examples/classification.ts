// docs/classification.md; test/classification.e2e-spec.ts runs it.
// #region classification
import { Classifier, PolicyRegistry, Verdict } from '../../lib/nest/index.js';

class StaleIndexError extends Error {}

const registry = PolicyRegistry.create({
  defaults: { classifier: 'http' }, // or 'default', 'grpc' (Classifier.grpc; needs no @grpc/grpc-js)
  policies: {
    payments: {
      classifier: {
        base: 'http',
        permanent: ['ValidationError', 404, 409],
        transient: ['ECONNRESET'],
        throttled: [429],
      },
    },
    search: {},
  },
  // Written in code, by name (replaces the config's classifier for that name, across reloads):
  classifiers: {
    search: Classifier.http.with(Classifier.when(StaleIndexError, Verdict.permanent)),
  },
});
// #endregion classification

/** What each policy's classifier makes of a few errors. */
export function classifyExamples(): Record<string, string> {
  const context = { callerAborted: false };
  const payments = registry.get('payments').options.classifier;
  const search = registry.get('search').options.classifier;
  const result = {
    validation: payments.classifyError(
      Object.assign(new Error('bad input'), { name: 'ValidationError' }),
      context,
    ).kind,
    conflict: payments.classifyError(Object.assign(new Error('taken'), { status: 409 }), context)
      .kind,
    reset: payments.classifyError(
      Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      context,
    ).kind,
    stale: search.classifyError(new StaleIndexError('stale'), context).kind,
    badGateway: search.classifyError(Object.assign(new Error('upstream'), { status: 502 }), context)
      .kind,
  };
  registry.onModuleDestroy();
  return result;
}
