/**
 * Where the library's run-time warnings go: a policy shape that is probably a mistake (a deadline its
 * attempts cannot fit in, listeners replaced by `with({ onEvent })`, …), reported once per policy name
 * and kind. The same mistakes are caught before run time by `@nresilience/nestjs/eslint-plugin`.
 */
export type WarningSink = (code: ResilienceWarningCode, message: string) => void;

/** The kinds of run-time warning, each named for the lint rule that catches it in the source. */
export const ResilienceWarningCodes = {
  /** `attemptTimeout` ≥ `deadline`, or timed-out attempts that leave the last one no room (`deadline-fits-attempts`). */
  deadlineFitsAttempts: 'NRESILIENCE_DEADLINE_FITS_ATTEMPTS',
  /** `with({ onEvent })` on a policy that had listeners (`no-replaced-listeners`). */
  replacedListeners: 'NRESILIENCE_REPLACED_LISTENERS',
  /** `@Resilient` on a method declared to return neither a Promise nor an Observable, or on a class Nest does not manage (`resilient-method`). */
  resilientMethod: 'NRESILIENCE_RESILIENT_METHOD',
} as const;

/** One of {@link ResilienceWarningCodes}. */
export type ResilienceWarningCode =
  (typeof ResilienceWarningCodes)[keyof typeof ResilienceWarningCodes];

/** Node's own channel for library warnings: `process.on('warning')`, `--no-warnings`, `--throw-deprecation` all apply. */
const processWarning: WarningSink = (code, message) =>
  process.emitWarning(message, { type: 'NResilienceWarning', code });

let sink: WarningSink = processWarning;
const seen = new Set<string>();
/** Past this many distinct (code, key) pairs nothing more is remembered or reported: names made per call must not grow memory. */
const MAXIMUM_REMEMBERED = 1000;

/**
 * Sends run-time warnings to `next` (`ResilienceModule` routes them to the Nest logger);
 * `undefined` restores the default, `process.emitWarning` with type `NResilienceWarning`. A sink that
 * throws loses only that warning.
 * @returns the sink that was in place
 */
export function setWarningSink(next: WarningSink | undefined): WarningSink {
  const previous = sink;
  sink = next ?? processWarning;
  return previous;
}

/**
 * Reports `message` unless this `code` was already reported for `key` (a policy name, a method)
 * in this process. @internal
 */
export function warnOnce(
  code: ResilienceWarningCode,
  key: string,
  message: string,
  to: WarningSink = sink,
): void {
  const id = `${code}\u0000${key}`;
  if (seen.has(id) || seen.size >= MAXIMUM_REMEMBERED) return;
  seen.add(id);
  try {
    to(code, message);
  } catch {
    // A broken sink must not break the call that noticed the mistake.
  }
}
