// docs/streams.md; test/docs-streams.e2e-spec.ts runs it against a loopback server that breaks the stream.
// #region checkpoint
import { Resilience } from '../../lib/core/index.js';

interface Change {
  readonly seq: number;
  readonly key: string;
}

/** The changes a `/changes?from=n` endpoint streams, one JSON object a line. */
async function* changesSince(
  base: string,
  from: number,
  signal: AbortSignal,
): AsyncGenerator<Change> {
  const response = await fetch(`${base}/changes?from=${from}`, { signal });
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of response.body!) {
    rest += decoder.decode(chunk, { stream: true });
    for (let newline = rest.indexOf('\n'); newline >= 0; newline = rest.indexOf('\n')) {
      yield JSON.parse(rest.slice(0, newline)) as Change;
      rest = rest.slice(newline + 1);
    }
  }
}

const feed = Resilience.default.with({ name: 'changes', attemptTimeout: 5000, restarts: 3 });

/** Every change of the feed, each once and in order, however often its connection breaks. */
export async function readChanges(base: string): Promise<{ seqs: number[]; restarts: number }> {
  const changes = await feed.run({
    start: 0,
    checkpoint: (change: Change) => change.seq + 1, // where to re-open once this change is delivered
    source: (from, ctx) => changesSince(base, from, ctx.signal),
  });
  const seqs: number[] = [];
  for await (const change of changes) seqs.push(change.seq);
  return { seqs, restarts: changes.restarts };
}
// #endregion checkpoint
