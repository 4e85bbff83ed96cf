/**
 * What one attempt's outcome means (DESIGN §3.3).
 * - `Ok`: a usable answer.
 * - `Transient`: a failure worth retrying; the only verdict that is evidence against the dependency.
 * - `Throttled`: the dependency asked us to slow down; may carry `retryAfter` (ms) server pushback.
 * - `Permanent`: retrying cannot help (bad input, caller abort); the call stops.
 * - `Limited`: this process refused itself (self-imposed throttle); the dependency was never contacted.
 */
export type VerdictKind = 'Ok' | 'Transient' | 'Throttled' | 'Permanent' | 'Limited';

/** A classified attempt outcome. `retryAfter` (ms) is the server's pushback, on `Throttled` only. */
export interface Verdict {
  readonly kind: VerdictKind;
  readonly retryAfter?: number;
  /**
   * True when this call must not repeat the attempt although its kind would allow it: a
   * non-idempotent request whose outcome is ambiguous (a reset or a 5xx after the server may have
   * acted). The breaker still counts it as the kind says. Set with {@link Verdict.final}.
   */
  readonly final?: boolean;
}

const ok: Verdict = Object.freeze({ kind: 'Ok' });
const transient: Verdict = Object.freeze({ kind: 'Transient' });
const throttled: Verdict = Object.freeze({ kind: 'Throttled' });
const permanent: Verdict = Object.freeze({ kind: 'Permanent' });
const limited: Verdict = Object.freeze({ kind: 'Limited' });

/** Verdict constructors; the constant verdicts are shared frozen objects (no allocation per attempt). */
export const Verdict = {
  ok,
  transient,
  permanent,
  limited,
  /**
   * A throttled verdict, with the server's requested wait when it sent one.
   * @param retryAfter milliseconds the server asked us to wait; ignored unless finite and >= 0.
   */
  throttled(retryAfter?: number): Verdict {
    if (retryAfter === undefined || !Number.isFinite(retryAfter) || retryAfter < 0)
      return throttled;
    return Object.freeze({ kind: 'Throttled', retryAfter });
  },
  /**
   * `verdict` marked final: the call stops on it instead of retrying, and the breaker and events see
   * its kind unchanged (DESIGN §5: a POST is not repeated after a reset, a timeout or a 5xx).
   */
  final(verdict: Verdict): Verdict {
    return verdict.final === true ? verdict : Object.freeze({ ...verdict, final: true });
  },
} as const;

/** True for verdicts after which the executor may retry (`Transient`, `Throttled`, unless marked final). */
export function isRetryable(verdict: Verdict): boolean {
  return (verdict.kind === 'Transient' || verdict.kind === 'Throttled') && verdict.final !== true;
}
