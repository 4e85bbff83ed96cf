import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  context,
  trace,
} from '@opentelemetry/api';
import {
  Ambient,
  type AttemptContext,
  type CallEvent,
  type CallObserver,
  type DependencyLabel,
  type ExecutablePolicy,
} from '../core/index.js';
import { isUnlabeledScopeKey } from '../core/internal.js';
import { AttributeSets, type Instruments } from './otel-instruments.js';
import { INSTRUMENTATION_NAME, TelemetryAttributes } from './telemetry-names.js';

/** The span of one logical call, and the attribute sets its metrics record with. */
class CallSpan {
  constructor(
    readonly span: Span,
    /** The caller's context with this span set: what each attempt's work runs in. */
    readonly scope: Context,
    readonly sets: AttributeSets,
  ) {}
}

/** A call's state: its span when one is recorded, else just its attribute sets (no allocation). */
type CallState = CallSpan | AttributeSets;

/**
 * The OpenTelemetry side of the telemetry seam (DESIGN §7): a `CallObserver` recording metrics
 * through one meter's instruments and, when `tracer` is given, one span per logical call.
 *
 * - `callStarted` resolves the attribute sets of the running instance once (policy name, and the
 *   host or service of a keyed instance, else the configured ones), makes the gauges observe that
 *   instance, and starts the span (a child of the caller's active context).
 * - `runAttempt` runs each attempt's work with the span's context active, so spans the work starts
 *   (an HTTP client's) are children of the call's span.
 * - `event` counts attempts, refusals, hedges, hedge wins, stalls and terminal calls, and adds span events.
 * - `callEnded` sets the span's outcome, reason, fallback (`served`, `failed`, when one ran) and status
 *   and ends it.
 * - `retired` stops the gauges observing an instance its scope let go.
 */
export class TelemetryObserver implements CallObserver<CallState> {
  // The last instance seen and its sets: a policy instance runs many calls in a row.
  private lastPolicy: ExecutablePolicy | undefined = undefined;
  private lastSets: AttributeSets | undefined = undefined;
  private readonly byInstance = new WeakMap<ExecutablePolicy, AttributeSets>();

  /**
   * @param instruments the meter's instruments
   * @param tracer where spans go; `undefined` records metrics only
   * @param host `nresilience.host` for instances that carry none of their own
   * @param service `nresilience.service` for instances that carry none of their own
   */
  constructor(
    private readonly instruments: Instruments,
    private readonly tracer: Tracer | undefined,
    private readonly host: string | undefined,
    private readonly service: string | undefined,
  ) {}

  callStarted(policy: ExecutablePolicy): CallState {
    const sets = this.setsOfInstance(policy);
    const tracer = this.tracer;
    if (tracer === undefined) return sets;
    try {
      const parent = context.active();
      const span = tracer.startSpan(
        policy.name === '' ? INSTRUMENTATION_NAME : `${INSTRUMENTATION_NAME} ${policy.name}`,
        { kind: SpanKind.INTERNAL, attributes: sets.base },
        parent,
      );
      if (!span.isRecording()) {
        span.end();
        return sets;
      }
      span.setAttribute(TelemetryAttributes.criticality, Ambient.criticality());
      return new CallSpan(span, trace.setSpan(parent, span), sets);
    } catch {
      // Telemetry never changes a call's outcome: a failing tracer only loses the span.
      return sets;
    }
  }

  runAttempt<T>(
    state: CallState,
    work: (context: AttemptContext) => T | PromiseLike<T>,
    attempt: AttemptContext,
  ): T | PromiseLike<T> {
    return state instanceof CallSpan
      ? context.with(state.scope, work, undefined, attempt)
      : work(attempt);
  }

  event(event: CallEvent, state: CallState | undefined): void {
    const instruments = this.instruments;
    const sets =
      state === undefined
        ? this.setsOfEvent(event)
        : state instanceof CallSpan
          ? state.sets
          : state;
    switch (event.kind) {
      case 'attempt':
        sets.attempt(event.verdict ?? 'unknown').count++;
        if (event.error === 'AttemptStalledError') instruments.stalls.add(1, sets.base);
        break;
      case 'rejected':
        instruments.rejections.add(1, sets.rejection(event.reason ?? 'rejected'));
        break;
      case 'hedged':
        instruments.hedges.add(1, sets.base);
        break;
      case 'streamResumed':
        instruments.streamResumed.add(1, sets.base);
        break;
      case 'nestedRetry':
        instruments.nestedRetries.add(1, sets.base);
        break;
      case 'limiterDegraded':
        instruments.limiterDegraded.add(1, sets.base);
        break;
    }
    if (event.isTerminal) {
      const call = sets.call(outcomeOf(event), event.reason ?? event.kind);
      call.count++;
      instruments.duration.record(event.duration, call.attributes);
      if (event.hedgeWon) instruments.hedgeWins.add(1, sets.base);
    }
    if (state instanceof CallSpan) addSpanEvent(state.span, event);
  }

  /**
   * A keyed instance left its scope (a host evicted by `maximumHosts`): its gauge series go, and once
   * no key records through its attribute sets, so do its calls and attempts series (dropped, not
   * folded into another series: a folded total would be counted twice by a cumulative exporter, which
   * keeps exporting a series it has seen, and would show as a spike of the other series under delta).
   */
  retired(policy: ExecutablePolicy): void {
    // The key's instance may never have run a call through this observer (new settings came after
    // its last call): its sets are found by its labels.
    const dependency = policy.dependency;
    const sets =
      this.byInstance.get(policy) ??
      (dependency === undefined ? undefined : this.peekSets(policy.name, dependency));
    if (sets === undefined) return;
    this.byInstance.delete(policy);
    if (this.lastPolicy === policy) {
      this.lastPolicy = undefined;
      this.lastSets = undefined;
    }
    this.instruments.unobserve(policy, sets.base);
    if (dependency !== undefined) this.instruments.release(sets, dependency);
  }

  callEnded(state: CallState, terminal: CallEvent): void {
    if (!(state instanceof CallSpan)) return;
    const span = state.span;
    const A = TelemetryAttributes;
    const outcome = outcomeOf(terminal);
    span.setAttributes({
      [A.outcome]: outcome,
      [A.reason]: terminal.reason ?? terminal.kind,
      [A.attempt]: terminal.attempt,
    });
    if (terminal.fallback !== undefined) span.setAttribute(A.fallback, terminal.fallback);
    if (!isAnswer(outcome))
      span.setStatus({ code: SpanStatusCode.ERROR, message: terminal.reason ?? terminal.kind });
    span.end();
  }

  /** The sets of a running instance, resolved once per instance; a new instance joins the gauges. */
  private setsOfInstance(policy: ExecutablePolicy): AttributeSets {
    if (policy === this.lastPolicy) return this.lastSets!;
    let sets = this.byInstance.get(policy);
    if (sets === undefined) {
      sets = this.setsOf(policy.name, policy.dependency);
      this.byInstance.set(policy, sets);
      // A key of a scope without labels (a tenant) has its own state but no series of its own (its key
      // may be an id): it must not take over the name's.
      if (policy.dependency !== undefined || !isUnlabeledScopeKey(policy))
        this.instruments.observe(policy, sets.base);
      if (policy.dependency !== undefined) sets.holders.add(policy.dependency);
    }
    this.lastPolicy = policy;
    this.lastSets = sets;
    return sets;
  }

  /** The sets of an event that belongs to no call (a breaker transition). */
  private setsOfEvent(event: CallEvent): AttributeSets {
    const last = this.lastSets;
    if (
      last !== undefined &&
      this.lastPolicy!.name === event.policy &&
      this.lastPolicy!.dependency === event.dependency
    )
      return last;
    // A keyed instance's event outside a call (a breaker transition) never brings back dropped sets.
    if (event.dependency === undefined) return this.setsOf(event.policy, undefined);
    return (
      this.peekSets(event.policy, event.dependency) ??
      new AttributeSets(
        event.policy,
        event.dependency.host ?? this.host,
        event.dependency.service ?? this.service,
        this.instruments,
      )
    );
  }

  private peekSets(policy: string, dependency: DependencyLabel): AttributeSets | undefined {
    return this.instruments.peekSets(
      policy,
      dependency.host ?? this.host,
      dependency.service ?? this.service,
    );
  }

  private setsOf(policy: string, dependency: DependencyLabel | undefined): AttributeSets {
    return this.instruments.setsOf(
      policy,
      dependency?.host ?? this.host,
      dependency?.service ?? this.service,
    );
  }
}

/**
 * A terminal event's `nresilience.outcome`: its kind (`succeeded`, `failed`, `rejected`), except that a
 * call the policy's fallback served is `fallback` (its reason still says why the call itself stopped:
 * `limited`, `attemptsExhausted`, …), and a call ended by a Permanent verdict (an answer such as a 404,
 * passed through or thrown) is `answered` (reason `permanent`), so a failure rate over `failed` counts
 * only calls whose caller got an error. A call whose fallback threw keeps its kind (`failed`,
 * `rejected`): its caller got the fallback's error.
 */
export function outcomeOf(terminal: CallEvent): string {
  const fallback = terminal.fallback;
  if (fallback === 'served') return 'fallback';
  return fallback === undefined &&
    terminal.kind === 'failed' &&
    terminal.reason === 'permanent' &&
    terminal.verdict === 'Permanent'
    ? 'answered'
    : terminal.kind;
}

/** Outcomes whose caller got a value or an answer: their span has no error status. */
function isAnswer(outcome: string): boolean {
  return outcome === 'succeeded' || outcome === 'answered' || outcome === 'fallback';
}

function addSpanEvent(span: Span, event: CallEvent): void {
  const A = TelemetryAttributes;
  switch (event.kind) {
    case 'attempt': {
      const attributes: Attributes = {
        [A.attempt]: event.attempt,
        [A.outcome]: event.verdict,
        [A.duration]: event.duration,
      };
      if (event.error !== undefined) attributes[A.errorType] = event.error;
      span.addEvent('attempt', attributes);
      break;
    }
    case 'retrying':
      span.addEvent('retrying', {
        [A.attempt]: event.attempt,
        [A.outcome]: event.verdict,
        [A.delay]: event.delay,
      });
      break;
    case 'succeeded':
    case 'failed':
      break;
    default: {
      const attributes: Attributes = {};
      if (event.attempt > 0) attributes[A.attempt] = event.attempt;
      if (event.reason !== undefined) attributes[A.reason] = event.reason;
      if (event.delay > 0) attributes[A.delay] = event.delay;
      if (event.error !== undefined) attributes[A.errorType] = event.error;
      span.addEvent(event.kind, attributes);
    }
  }
}
