// docs/http.md; test/docs-examples.e2e-spec.ts runs it against a loopback server.
// #region http
import { Backoff, Resilience } from '../../lib/core/index.js';
import { createResilientFetch, markRepeatable } from '../../lib/http/index.js';

// One breaker and one retry budget per origin; backoff off only to keep the example quick.
const http = createResilientFetch({
  policy: Resilience.http.with({ name: 'prices', attemptTimeout: 2000, backoff: Backoff.none }),
});

/** A GET answered 503 then 200, and a POST made repeatable with an idempotency key. */
export async function fetchPrices(base: string) {
  const quote = await http(`${base}/quote/sku-1`); // 503 (no Retry-After) is retried: two requests, one 200 here
  const order = await http(
    `${base}/orders`,
    markRepeatable({ method: 'POST', body: '{"sku":"sku-1"}' }, 'order-42'),
  );
  return { quote: [quote.status, await quote.text()], order: order.status, hosts: http.hosts.size };
}
// #endregion http
