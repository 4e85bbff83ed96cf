// docs/configuration.md; test/docs-examples.e2e-spec.ts runs it.
// #region reload
import { PolicyRegistry, ResilienceConfigError } from '../../lib/nest/index.js';

const registry = PolicyRegistry.create({ policies: { payments: { attempts: 3, breaker: true } } });
const payments = registry.handle('payments'); // what @InjectPolicy('payments') injects
// #endregion reload

/** A good reload takes effect on the same handle; a bad one is refused and changes nothing. */
export function reloadPayments() {
  const breakerBefore = payments.current.breaker();
  // #region reload
  registry.reload({
    policies: { payments: { attempts: 2, breaker: { consecutiveFailures: 10 } } },
  });
  // payments.current.options.attempts → 2; the breaker object and its state are kept

  let refusal = '';
  try {
    registry.reload({ policies: { payments: { attempts: 0 } } });
  } catch (error) {
    refusal = (error as ResilienceConfigError).message; // names policies.payments.attempts, 0 and the rule
  }
  // payments.current.options.attempts → still 2
  // #endregion reload
  const result = {
    attempts: payments.current.options.attempts,
    sameBreaker: payments.current.breaker() === breakerBefore,
    refusal,
  };
  registry.onModuleDestroy();
  return result;
}
