import type { PolicyOptions } from './policy-options.js';
import type { ResolvedPolicyOptions } from '../execution/executable-policy.js';
import { ResilienceWarningCodes, warnOnce } from '../diagnostics/warnings.js';

function label(name: string): string {
  return name === '' ? 'an unnamed policy' : `policy '${name}'`;
}

/**
 * Warns once per policy name when the deadline cannot hold what the policy asks for: `attemptTimeout`
 * at or above `deadline` (a slow first attempt uses the whole call), or attempts whose timeouts alone
 * (backoff not counted, so this is a lower bound) pass the deadline before the last attempt starts.
 * Run when a policy instance is first used, so a chain of `with()` calls is judged by its result.
 * @internal
 */
export function checkDeadlineFits(o: ResolvedPolicyOptions): void {
  const { deadline, attemptTimeout, attempts } = o;
  if (deadline === undefined || attemptTimeout === undefined) return;
  if (attemptTimeout >= deadline) {
    warnOnce(
      ResilienceWarningCodes.deadlineFitsAttempts,
      o.name,
      `${label(o.name)}: attemptTimeout (${attemptTimeout} ms) is not shorter than deadline (${deadline} ms), so a slow first attempt uses the whole call and no retry can follow. ` +
        'Make attemptTimeout shorter than the deadline (about deadline / attempts) or drop one of them.',
    );
    return;
  }
  // Attempt k starts no earlier than (k - 1) timeouts into the call when the attempts before it time out.
  const fits = Math.min(attempts, Math.ceil(deadline / attemptTimeout));
  if (fits >= attempts) return;
  warnOnce(
    ResilienceWarningCodes.deadlineFitsAttempts,
    o.name,
    `${label(o.name)}: deadline ${deadline} ms passes before attempt ${attempts} can start when attempts time out (${attempts - 1} × attemptTimeout ${attemptTimeout} ms, backoff not counted): ` +
      `at most ${fits} of the ${attempts} attempts can run. Raise deadline above ${(attempts - 1) * attemptTimeout} ms, shorten attemptTimeout, or set attempts to ${fits}.`,
  );
}

/**
 * Warns once per policy name when `with({ onEvent })` replaces listeners the policy had (telemetry,
 * logging, `withListener`). `with({ onEvent: undefined })` removes them without a word: to replace them
 * on purpose, remove then add (`with({ onEvent: undefined }).withListener(fn)`).
 * @internal
 */
export function checkListenerReplaced(base: ResolvedPolicyOptions, changes: PolicyOptions): void {
  if (base.onEvent === undefined || changes.onEvent === undefined) return;
  warnOnce(
    ResilienceWarningCodes.replacedListeners,
    base.name,
    `${label(base.name)}: with({ onEvent }) replaced the listeners it had, so its telemetry and logging stopped. Use withListener(fn) to add a listener instead.`,
  );
}
