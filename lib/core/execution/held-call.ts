import { Verdict } from '../classification/verdict.js';
import type { CallObserver } from './executable-policy.js';
import type { Clock } from '../time/clock.js';
import { CallEvent, type CallEventInit } from '../events/call-events.js';
import { ended, tell } from './observer.js';
import { errorName } from './error-name.js';

/** What {@link HeldCall.hold} keeps of the call whose end it holds. */
export interface HeldCallSource {
  /** What the call read of its policy: its observer (`undefined` without one) and its clock. */
  readonly plan: { readonly listener: CallObserver | undefined; readonly clock: Clock };
  /** What the observer's `callStarted` returned for the call. */
  readonly state: unknown;
  /** Clock reading at the call's start, ms. */
  readonly start: number;
}

/**
 * A logical call whose accepted value is still being delivered after the executor accepted it — a
 * download whose body may break and be resumed (DESIGN §5 `resumeDownloads`) — kept open for its
 * observer so the call is observed once, whatever its resumes: one span, one terminal event, the
 * resumes being attempts of that call.
 *
 * Give it to a run as `RunOptions.hold`: when that call succeeds, its terminal event (and the
 * observer's `callEnded`, which ends the span) is held here instead of told. A run carrying the call
 * on (`RunOptions.continuing` with `held` set to this) is observed as that call — its observer
 * state, its start — and tells the one terminal event when it fails, or holds it again when it
 * succeeds (given `hold` too). The owner of the value must end it: {@link HeldCall.end} once the
 * value is done with (the body read to its end or cancelled), or with the error that made it fail.
 * A call that does not succeed is told as usual and nothing is held. Without an observer nothing is
 * held and `end` does nothing.
 */
export class HeldCall {
  private observer: CallObserver | undefined = undefined;
  private state: unknown = undefined;
  private clock: Clock | undefined = undefined;
  private terminal: CallEvent | undefined = undefined;
  /** Clock reading at which the held call started (its terminal event's duration counts from it). */
  private startedAt = 0;

  /** Whether a terminal event waits to be told. */
  get open(): boolean {
    return this.terminal !== undefined;
  }

  /**
   * Tells the held terminal event and ends the call for its observer; does nothing when none is held
   * (never held, already ended, or a run carrying it on is under way).
   * @param error when given, what made the accepted value fail after all (a download that could not
   *   be resumed without splicing): the call ends `failed` with stop reason `permanent`, this error's
   *   name, and the duration up to now, instead of the success it was held as
   */
  end(error?: unknown): void {
    const terminal = this.terminal;
    if (terminal === undefined) return;
    this.terminal = undefined;
    const told =
      error === undefined
        ? terminal
        : new CallEvent(
            {
              kind: 'failed',
              policy: terminal.policy,
              attempt: terminal.attempt,
              verdict: Verdict.permanent.kind,
              error: errorName(error),
              duration: this.clock!.now() - this.startedAt,
              reason: 'permanent',
              isTerminal: true,
            },
            terminal.dependency,
          );
    ended(this.observer!, this.state, told);
  }

  /**
   * Tells the observer an event of the held call (with its state, so it lands on the call's span),
   * e.g. `streamResumed`; nothing when no call is held.
   */
  report(init: Omit<CallEventInit, 'policy' | 'dependency'>): void {
    const terminal = this.terminal;
    if (terminal === undefined) return;
    tell(
      this.observer!,
      CallEvent.of({ ...init, policy: terminal.policy }, terminal.dependency),
      this.state,
    );
  }

  /**
   * Holds `terminal` instead of telling it (the executor, on a success).
   * @param call the call that succeeded: its plan's observer (`listener`) and clock, its observer state and start reading
   */
  hold(call: HeldCallSource, terminal: CallEvent): void {
    this.observer = call.plan.listener;
    this.state = call.state;
    this.clock = call.plan.clock;
    this.startedAt = call.start;
    this.terminal = terminal;
  }

  /**
   * Hands the held call to a run carrying it on (the executor): its observer state and start, the
   * held terminal dropped (the run tells or holds its own). `undefined` when none is held.
   */
  carry(): { readonly state: unknown; readonly start: number } | undefined {
    if (this.terminal === undefined) return undefined;
    this.terminal = undefined;
    return { state: this.state, start: this.startedAt };
  }
}
