import { type AbortSubscription, subscribeAbort, unsubscribeAbort } from '../signals/abort-link.js';
import type { Clock, TimerHandle } from '../time/clock.js';

/**
 * How a wait for a limiter ended: a slot or token was handed over, the caller's deadline passed, or
 * no token came within the wait allowed (a shared rate limit whose store answered too late: Limited).
 */
export const QueueExit = Object.freeze({ Granted: 0, Expired: 1, Refused: 2 } as const);
/** One of the {@link QueueExit} values. */
export type QueueExit = (typeof QueueExit)[keyof typeof QueueExit];

/**
 * One caller waiting for a slot: a node of the queue's doubly linked list, so a caller whose signal
 * aborts or whose deadline passes leaves from the middle in O(1). Allocated only for a caller that
 * has to wait; the free-slot path never builds one.
 */
class Waiter {
  prev: Waiter | undefined = undefined;
  next: Waiter | undefined = undefined;
  timer: TimerHandle | undefined = undefined;
  subscription: AbortSubscription | undefined = undefined;
  clock: Clock | undefined = undefined;
  constructor(
    readonly resolve: (exit: QueueExit) => void,
    readonly reject: (reason: unknown) => void,
  ) {}
}

/**
 * The FIFO queue of a concurrency limiter (DESIGN §3.8): callers wait in arrival order; a caller
 * leaves at once when its signal aborts (the promise rejects with the signal's reason) or when its
 * deadline passes (resolves {@link QueueExit.Expired}); its place is not consumed. The listener put
 * on a caller's signal and the deadline timer are removed however the wait ends.
 * @internal the limiter's
 */
export class LimitQueue {
  private head: Waiter | undefined = undefined;
  private tail: Waiter | undefined = undefined;
  private count = 0;

  /** Callers waiting now. */
  get size(): number {
    return this.count;
  }

  /**
   * Adds a caller at the tail.
   * @param clock the clock the deadline timer runs on
   * @param deadlineAt clock reading (ms) at which the caller stops waiting; `Infinity` for never
   * @param signal the caller's cancellation, if any (must not be aborted already)
   */
  enqueue(clock: Clock, deadlineAt: number, signal: AbortSignal | undefined): Promise<QueueExit> {
    return new Promise<QueueExit>((resolve, reject) => {
      const waiter = new Waiter(resolve, reject);
      waiter.clock = clock;
      this.link(waiter);
      if (signal !== undefined) {
        waiter.subscription = subscribeAbort(signal, () => {
          waiter.subscription = undefined;
          this.leave(waiter);
          reject(signal.reason);
        });
      }
      if (deadlineAt !== Infinity) {
        waiter.timer = clock.setTimer(deadlineAt - clock.now(), () => {
          waiter.timer = undefined;
          this.leave(waiter);
          resolve(QueueExit.Expired);
        });
      }
    });
  }

  /** Hands a slot to the caller at the head (it resolves {@link QueueExit.Granted}); false when none waits. */
  grantNext(): boolean {
    const waiter = this.head;
    if (waiter === undefined) return false;
    this.leave(waiter);
    waiter.resolve(QueueExit.Granted);
    return true;
  }

  private link(waiter: Waiter): void {
    waiter.prev = this.tail;
    if (this.tail === undefined) this.head = waiter;
    else this.tail.next = waiter;
    this.tail = waiter;
    this.count++;
  }

  /** Unlinks `waiter` and drops its timer and signal listener. */
  private leave(waiter: Waiter): void {
    if (waiter.prev === undefined) this.head = waiter.next;
    else waiter.prev.next = waiter.next;
    if (waiter.next === undefined) this.tail = waiter.prev;
    else waiter.next.prev = waiter.prev;
    waiter.prev = waiter.next = undefined;
    this.count--;
    if (waiter.timer !== undefined) {
      waiter.clock!.clearTimer(waiter.timer);
      waiter.timer = undefined;
    }
    if (waiter.subscription !== undefined) {
      unsubscribeAbort(waiter.subscription);
      waiter.subscription = undefined;
    }
  }
}
