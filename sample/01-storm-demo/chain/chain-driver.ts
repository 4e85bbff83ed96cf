import { Agent } from 'node:http';
import { postCall } from '../post-call.js';
import { once } from 'node:events';
import type { Socket } from 'node:net';
import { PHASE_HEADER } from './protocol.js';

/** What one phase's calls got at the frontend. */
export interface PhaseCalls {
  /** Calls sent. */
  sent: number;
  /** Calls answered 2xx. */
  succeeded: number;
  /** Every call's time to its answer (or to being abandoned), ms. */
  readonly latencies: number[];
  /** Answers by status code; `error` for a failed or abandoned connection. */
  readonly statuses: Record<string, number>;
}

// How often the sender wakes up; calls that fell due since the last tick go out together.
const TICK_MS = 5;

/**
 * Act 2's load: an open-loop sender of `rate` calls per second to the frontend's `POST /work`,
 * whatever earlier calls are doing, each call carrying the index of the phase it was sent in and
 * abandoned after `callTimeoutMs`. `phaseAt(ms)` says which phase a moment of the run is in.
 */
export class ChainDriver {
  readonly phases: PhaseCalls[] = [];
  private readonly agent: Agent;
  private readonly sockets = new Set<Socket>();
  private inFlight = 0;

  constructor(
    private readonly url: string,
    private readonly rate: number,
    private readonly callTimeoutMs: number,
  ) {
    this.agent = new Agent({ keepAlive: true, maxSockets: 2000 });
  }

  /**
   * Sends for `durationMs`, filing each call under `phaseAt(elapsed ms)`, then waits for every call
   * to settle and every socket to close.
   */
  async run(durationMs: number, phaseAt: (elapsedMs: number) => number): Promise<PhaseCalls[]> {
    const total = Math.round((this.rate * durationMs) / 1000);
    const start = performance.now();
    let issued = 0;
    await new Promise<void>((resolve) => {
      let sending = true;
      const settleIfDone = (): void => {
        if (!sending && this.inFlight === 0) resolve();
      };
      const tick = (): void => {
        const elapsed = performance.now() - start;
        const due = Math.min(total, Math.floor((elapsed * this.rate) / 1000) + 1);
        for (; issued < due; issued++) this.send(phaseAt(elapsed), settleIfDone);
        if (issued >= total) {
          clearInterval(timer);
          sending = false;
          settleIfDone();
        }
      };
      const timer = setInterval(tick, TICK_MS);
      tick();
    });
    this.agent.destroy();
    await Promise.all(
      [...this.sockets].map((socket) => (socket.closed ? undefined : once(socket, 'close'))),
    );
    return this.phases;
  }

  private calls(phase: number): PhaseCalls {
    while (this.phases.length <= phase)
      this.phases.push({ sent: 0, succeeded: 0, latencies: [], statuses: {} });
    return this.phases[phase]!;
  }

  private send(phase: number, onSettled: () => void): void {
    const calls = this.calls(phase);
    calls.sent++;
    this.inFlight++;
    const sentAt = performance.now();
    let settled = false;
    const abandon = new AbortController();
    const timeout = setTimeout(() => abandon.abort(), this.callTimeoutMs);
    const settle = (status: string): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      this.inFlight--;
      calls.latencies.push(performance.now() - sentAt);
      calls.statuses[status] = (calls.statuses[status] ?? 0) + 1;
      if (status.startsWith('2')) calls.succeeded++;
      onSettled();
    };
    postCall(
      `${this.url}/work`,
      this.agent,
      abandon.signal,
      { [PHASE_HEADER]: String(phase) },
      this.sockets,
      settle,
    );
  }
}
