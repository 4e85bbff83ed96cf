// docs/streams.md; test/docs-streams.e2e-spec.ts runs it against a loopback server.
// #region body
import { Resilience } from '../../lib/core/index.js';

const policy = Resilience.default.with({ name: 'prices', attemptTimeout: 2000 });

/** Reads a streamed response body through the policy: the sizes of its chunks, as they arrive. */
export async function streamPrices(url: string): Promise<number[]> {
  const prices = await policy.run(async (ctx) => {
    const response = await fetch(url, { signal: ctx.signal });
    return response.body!; // a ReadableStream<Uint8Array>: an AsyncIterable
  });
  const sizes: number[] = [];
  for await (const chunk of prices) sizes.push(chunk.byteLength);
  return sizes;
}
// #endregion body
