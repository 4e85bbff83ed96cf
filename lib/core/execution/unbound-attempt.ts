import type { AttemptHandle } from './attempt-context.js';

/**
 * The context of a first attempt nothing can abort — no caller signal, no deadline, no attempt
 * timeout — shared by every such call, so the success path allocates no context. Its
 * signal never aborts; each read returns a fresh one, so a listener a callee adds and never removes
 * dies with the signal it was added to instead of piling up on a shared one.
 */
export const UNBOUND_FIRST_ATTEMPT: AttemptHandle = Object.freeze({
  attempt: 1,
  bound: Infinity,
  remaining: Infinity,
  get signal(): AbortSignal {
    return new AbortController().signal;
  },
  // Nothing bounds it and no caller is linked: never aborted, nothing to drop when it settles.
  reason: undefined,
  abort(): void {},
  end(): void {},
});
