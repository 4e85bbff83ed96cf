import type { CallEvent, CallEventKind, CallEventListener } from '../core/index.js';

/**
 * A call-event listener that keeps every event, so a test can assert on what the policy decided
 * (attempted, retried, gave up) rather than only on the value it returned.
 *
 * ```ts
 * const recorder = new EventRecorder();
 * await policy.withListener(recorder.record).run((ctx) => seq.next(ctx));
 * expect(recorder.kinds).toEqual(['attempt', 'retrying', 'attempt', 'succeeded']);
 * ```
 */
export class EventRecorder {
  private readonly recorded: CallEvent[] = [];

  /**
   * The listener: a bound function, so it can be passed on its own
   * (`policy.withListener(recorder.record)` or `policy.with({ onEvent: recorder.record })`).
   */
  readonly record: CallEventListener = (event: CallEvent): void => {
    this.recorded.push(event);
  };

  /** Every event recorded since construction or the last {@link EventRecorder.clear}, oldest first (a live view). */
  get events(): readonly CallEvent[] {
    return this.recorded;
  }

  /** The kinds of the recorded events, oldest first (a new array on each read). */
  get kinds(): CallEventKind[] {
    return this.recorded.map((event) => event.kind);
  }

  /** The recorded events of one kind, oldest first (a new array). */
  ofKind(kind: CallEventKind): CallEvent[] {
    return this.recorded.filter((event) => event.kind === kind);
  }

  /** The recorded terminal events (`succeeded`, `failed`, `rejected`…): one per finished call. */
  get terminal(): CallEvent[] {
    return this.recorded.filter((event) => event.isTerminal);
  }

  /** Forgets every recorded event. */
  clear(): void {
    this.recorded.length = 0;
  }

  /** One event per line in its human form (`[payments] Retrying #1 Transient (102ms) +200ms`). */
  toString(): string {
    return this.recorded.map((event) => event.toString()).join('\n');
  }
}
