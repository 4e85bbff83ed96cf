import type { Verdict } from './verdict.js';

/** One attempt's outcome as a classifier sees it: a returned value or a thrown error. */
export type Outcome<T = unknown> =
  | { readonly ok: true; readonly value: T; readonly error?: undefined }
  | { readonly ok: false; readonly value?: undefined; readonly error: unknown };

/** Facts about the attempt that a rule may use. */
export interface ClassifyContext {
  /** True when the caller's own signal is aborted (a caller cancellation, never retried). */
  readonly callerAborted: boolean;
  /**
   * The call's own facts, as the caller gave them (`RunOptions.facts`), the same object at every
   * attempt; `undefined` when it gave none. A rule may read it and record on it (the outbound
   * clients' `CallFacts`: whether the request may be sent again).
   */
  readonly facts?: object;
}

/** A classifier rule: a verdict when it recognises the outcome, `undefined` to let the next rule decide. */
export type ClassifierRule = (outcome: Outcome, context: ClassifyContext) => Verdict | undefined;
