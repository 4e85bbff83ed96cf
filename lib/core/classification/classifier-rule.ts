import type { Verdict } from './verdict.js';

/** One attempt's outcome as a classifier sees it: a returned value or a thrown error. */
export type Outcome<T = unknown> =
  | { readonly ok: true; readonly value: T; readonly error?: undefined }
  | { readonly ok: false; readonly value?: undefined; readonly error: unknown };

/** Facts about the attempt that a rule may use. */
export interface ClassifyContext {
  /** True when the caller's own signal is aborted (a caller cancellation, never retried). */
  readonly callerAborted: boolean;
}

/** A classifier rule: a verdict when it recognises the outcome, `undefined` to let the next rule decide. */
export type ClassifierRule = (outcome: Outcome, context: ClassifyContext) => Verdict | undefined;
