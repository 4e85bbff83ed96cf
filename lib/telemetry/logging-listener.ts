import {
  type CallEvent,
  type CallObserver,
  type Clock,
  type Policy,
  PolicyConfigError,
  type StopReason,
} from '../core/index.js';
import {
  checkValue,
  given,
  integerRule,
  oneOfRule,
  optionProblems,
  SPAN_RULE,
} from '../core/internal.js';

/** Severity of a log record, named as Nest's `Logger` methods are (lowest first). */
export type ResilienceLogLevel = 'verbose' | 'debug' | 'log' | 'warn';

/**
 * Where the logging listener writes: one logger per policy. A Nest `Logger` with a context
 * (`new Logger('NResilience.payments')`) fits as it is; `isLevelEnabled`, when present, lets the
 * listener skip formatting records nobody will see (counting and sampling still happen).
 */
export interface ResilienceLogger {
  /** Writes an informational record. */
  log(message: string): void;
  /** Writes a warning. */
  warn(message: string): void;
  /** Writes a debug record. */
  debug(message: string): void;
  /** Writes a verbose (trace) record. */
  verbose(message: string): void;
  /** Whether records at `level` are written at all. */
  isLevelEnabled?(level: ResilienceLogLevel): boolean;
}

/**
 * How much the listener writes (DESIGN §7):
 * - `off`: no listener at all (no cost).
 * - `default`: quiet when healthy: no traffic records at all, whatever the application's logger levels
 *   (a stock Nest app prints verbose and debug); incidents at `warn` with flood control, breaker
 *   half-open and recovering at `debug`, closed at `log`; a nested retry one warning per (policy, host or service)
 *   window with the count of the calls since the previous one, nothing for the calls in between.
 * - `verbose`: the same, plus every traffic record (attempts, retries, successes, failures) at `log`,
 *   subject to sampling.
 */
export type LoggingProfile = 'off' | 'default' | 'verbose';

/**
 * Exact log sampling of traffic records (the `verbose` profile): keep the `oneIn`-th, `2 × oneIn`-th, …
 * traffic record per policy while healthy.
 */
export interface LogSampling {
  /** Keep one traffic record in this many (an integer >= 1; 1 keeps every record). */
  readonly oneIn: number;
}

const ONE_IN_RULE = integerRule(1, Number.MAX_SAFE_INTEGER, 'keep one traffic record in n');

/**
 * The problems of a sampling given at `path` (`logging.sampling`): it must be a plain object
 * `{ oneIn }` (what `LogSampling.oneIn(n)` makes) with `oneIn` an integer >= 1 and no other key.
 * The listener and the module's `logging` option both check with it. @internal
 */
export function samplingProblems(sampling: unknown, path: string): PolicyConfigError[] {
  const problems = optionProblems(sampling, { oneIn: ONE_IN_RULE }, path, 'sampling option');
  if (problems.length === 0 && (sampling as Partial<LogSampling>).oneIn === undefined)
    problems.push(new PolicyConfigError(`${path}.oneIn`, undefined, ONE_IN_RULE.rule));
  return problems;
}

/** The profiles a listener runs (`'off'` is a profile of `withLogging` and the module option, not of a listener). */
const LISTENER_PROFILE_RULE = oneOfRule(
  ['default', 'verbose'] as const,
  "must be 'default' or 'verbose' for a listener ('off' attaches none)",
);

/** Sampling constructors. */
export const LogSampling = {
  /** Every record (the default). */
  all: Object.freeze({ oneIn: 1 }) as LogSampling,
  /**
   * Keeps exactly every `n`th traffic record per policy while the policy is healthy, and every record
   * for the incident window (one minute) after an incident. Incident and state records are never sampled.
   * @throws PolicyConfigError when `n` is not an integer >= 1.
   */
  oneIn(n: number): LogSampling {
    return Object.freeze({ oneIn: checkValue(ONE_IN_RULE, 'sampling.oneIn', n) });
  },
} as const;

/** Options of the logging listener. */
export interface LoggingOptions {
  /** Default `'default'`. */
  profile?: LoggingProfile;
  /** Default: every record (`LogSampling.all`). */
  sampling?: LogSampling;
  /** Flood-control repeat window per policy and reason, ms. Default 30 000. */
  repeatWindow?: number;
  /** How long after an incident sampling is suspended, ms. Default 60 000. */
  incidentWindow?: number;
  /** Time source for the windows. Default: the policy's clock (`withLogging`). */
  clock?: Clock;
}

/** Default flood-control repeat window, ms. */
export const REPEAT_WINDOW_MS = 30_000;
/** Default time after an incident during which every record is kept, ms. */
export const INCIDENT_WINDOW_MS = 60_000;

/**
 * Most repeat windows one policy's flood control keeps, one per (host or service, reason): a keyed
 * policy (the HTTP client's per-origin instances) warns per host, so one flapping host never
 * silences another, and hosts that come and go cannot grow the state without bound. Beyond it, a
 * window already over goes first, else the one opened longest ago (that key may then warn again
 * before its 30 s are up).
 */
export const MAXIMUM_REPEAT_WINDOWS = 256;

interface Repeat {
  /** Warnings for this reason are demoted until then. */
  until: number;
  /** Records demoted since the last warning. */
  demoted: number;
}

/** Per-policy state: sampling count, incident window, repeat windows by host or service and reason. */
class PolicyLogState {
  traffic = 0;
  incidentUntil = -Infinity;
  readonly repeats = new Map<string, Repeat>();
  constructor(readonly name: string) {}
}

/**
 * The logging listener (DESIGN §7): turns `CallEvent`s into log records whose level carries their
 * meaning, with flood control and exact sampling. Time comes from the given clock only.
 *
 * - Traffic (attempts, retries, successes, failures, hedges, resumptions, drains, which guard refused): only in the
 *   `verbose` profile, at `log`, subject to sampling while healthy. The `default` profile writes none,
 *   so a healthy service is quiet whatever its logger levels.
 * - Incidents (`warn`): breaker opened, refusals (budget exhausted, dependency unavailable, limited —
 *   a quota's refusal included), nested retry, stall (`AttemptStalledError`), saturation. Flood control: per policy,
 *   dependency (the host or service of a keyed instance) and reason, the first record warns and
 *   opens a repeat window (30 s); repeats inside it are written at `debug` and counted; the next
 *   warning after the window carries the count. A nested retry (a middle hop's call that may retry,
 *   healthy as it may be) is one warning per window under `default`, its repeats only counted — never
 *   a record per call at any level; `verbose` writes them at `debug`. At most
 *   {@link MAXIMUM_REPEAT_WINDOWS} windows per policy are kept.
 *   Every incident record (demoted or not) suspends sampling for the incident window (60 s).
 * - Breaker state: half-open and recovering at `debug`, closed (recovered) at `log`.
 *
 * An observer of events only (no call state, no frame around attempts): attach it with
 * `policy.withListener(listener)` or {@link withLogging}.
 */
export class LoggingListener implements CallObserver<undefined> {
  private readonly profile: 'default' | 'verbose';
  private readonly oneIn: number;
  private readonly repeatWindow: number;
  private readonly incidentWindow: number;
  private readonly states = new Map<string, PolicyLogState>();
  private last: PolicyLogState | undefined;

  /**
   * @param logger where records go (one logger per policy: its context names the policy)
   * @param clock the policy's clock
   * @throws PolicyConfigError for an invalid profile, sampling or window
   */
  constructor(
    private readonly logger: ResilienceLogger,
    private readonly clock: Clock,
    options: Omit<LoggingOptions, 'clock'> = {},
  ) {
    this.profile = checkValue(
      LISTENER_PROFILE_RULE,
      'logging.profile',
      given(options.profile, 'default'),
    );
    const sampling = given(options.sampling, LogSampling.all);
    const problems = samplingProblems(sampling, 'logging.sampling');
    if (problems.length > 0) throw problems[0];
    this.oneIn = sampling.oneIn;
    this.repeatWindow = checkValue(
      SPAN_RULE,
      'logging.repeatWindow',
      given(options.repeatWindow, REPEAT_WINDOW_MS),
    );
    this.incidentWindow = checkValue(
      SPAN_RULE,
      'logging.incidentWindow',
      given(options.incidentWindow, INCIDENT_WINDOW_MS),
    );
  }

  /** Logs one event (the observer's `event`). */
  event(event: CallEvent): void {
    this.record(event);
  }

  /** Logs one event. */
  record(event: CallEvent): void {
    const state = this.stateFor(event.policy);
    switch (event.kind) {
      case 'attempt':
        if (event.error === 'AttemptStalledError') return this.incident(state, event, 'stall');
        return this.traffic(state, event);
      case 'succeeded':
      case 'retrying':
      case 'failed':
      case 'hedged':
      case 'streamResumed':
      case 'draining':
      case 'rejectedByQuota': // which guard refused; the terminal `rejected` event is the incident
        return this.traffic(state, event);
      case 'rejected':
        return this.incident(state, event, event.reason ?? 'rejected');
      case 'breakerOpened':
      case 'nestedRetry':
      case 'saturationDetected':
      case 'limiterDegraded':
        return this.incident(state, event, event.kind);
      case 'limiterRecovered':
        return this.write('log', event, '');
      case 'breakerHalfOpened':
        return this.write('debug', event, '');
      case 'breakerClosed':
        return this.write('log', event, '');
    }
  }

  private stateFor(name: string): PolicyLogState {
    const last = this.last;
    if (last !== undefined && last.name === name) return last;
    let state = this.states.get(name);
    if (state === undefined) {
      state = new PolicyLogState(name);
      this.states.set(name, state);
    }
    this.last = state;
    return state;
  }

  private traffic(state: PolicyLogState, event: CallEvent): void {
    if (this.profile !== 'verbose') return;
    if (this.oneIn > 1 && this.clock.now() >= state.incidentUntil) {
      // Healthy: exact sampling, every oneIn-th traffic record of this policy.
      state.traffic++;
      if (state.traffic % this.oneIn !== 0) return;
    }
    this.write('log', event, '');
  }

  private incident(state: PolicyLogState, event: CallEvent, reason: string): void {
    const now = this.clock.now();
    state.incidentUntil = now + this.incidentWindow;
    const key = repeatKey(event, reason);
    const repeats = state.repeats;
    let repeat = repeats.get(key);
    if (repeat === undefined) {
      if (repeats.size >= MAXIMUM_REPEAT_WINDOWS) dropOne(repeats, now);
      repeat = { until: -Infinity, demoted: 0 };
      repeats.set(key, repeat);
    }
    // A nested retry is a healthy call of a middle hop: under `default` its repeats are only counted.
    const quiet = this.profile === 'default' && event.kind === 'nestedRetry';
    if (now < repeat.until) {
      repeat.demoted++;
      if (!quiet) this.write('debug', event, '');
      return;
    }
    const demoted = repeat.demoted;
    repeat.until = now + this.repeatWindow;
    repeat.demoted = 0;
    // Kept in the order windows opened, so the oldest is the first one found.
    repeats.delete(key);
    repeats.set(key, repeat);
    const since = quiet ? 'not logged' : 'logged at debug';
    this.write(
      'warn',
      event,
      demoted > 0
        ? ` (${demoted} similar ${demoted === 1 ? 'record' : 'records'} ${since} since the previous warning)`
        : '',
    );
  }

  private write(level: ResilienceLogLevel, event: CallEvent, suffix: string): void {
    const logger = this.logger;
    if (logger.isLevelEnabled !== undefined && !logger.isLevelEnabled(level)) return;
    const message = describeEvent(event) + suffix;
    switch (level) {
      case 'verbose':
        return logger.verbose(message);
      case 'debug':
        return logger.debug(message);
      case 'log':
        return logger.log(message);
      case 'warn':
        return logger.warn(message);
    }
  }
}

/**
 * The text of a record: `event.toString()`, with breaker transitions spelled out, and the host or
 * service of a keyed instance last (`[payments] Breaker opened for 5.7s after 21 failures in 3.1s
 * (host pay.example.com; last: ECONNREFUSED)`).
 */
export function describeEvent(event: CallEvent): string {
  if (event.kind === 'breakerOpened') return describeOpening(event);
  return describeKind(event) + describeDependency(event);
}

/**
 * A breaker opening: the break, what it opened on (a trip's evidence), where, and the last failure's
 * cause (`event.error`: the socket code, else the error's name; none on a trip of slowness). A
 * re-opening after one failed half-open probe (or one failure while recovering) says so rather than
 * reading like a one-failure trip: `[payments] Breaker re-opened for 1.0s: the half-open probe failed
 * after 300ms (last: ECONNRESET)`.
 */
function describeOpening(event: CallEvent): string {
  const trip = event.trip;
  const again = trip === 'probe' || trip === 'slowProbe' || trip === 'recovery';
  let text = `[${event.policy}] Breaker ${again ? 're-opened' : 'opened'}`;
  if (event.delay > 0) text += ` for ${readable(event.delay)}`;
  const count = event.attempt;
  if (trip === 'probe') {
    text += `: the half-open probe failed after ${readable(event.duration)}`;
  } else if (trip === 'slowProbe') {
    text += `: the half-open probe was slow (${readable(event.duration)})`;
  } else if (trip === 'recovery') {
    text += ': an attempt failed while recovering';
  } else if (count > 0) {
    const what = event.verdict === 'Ok' ? 'slow attempt' : 'failure';
    text += ` after ${count} ${what}${count === 1 ? '' : 's'}`;
    if (event.duration > 0) text += ` in ${readable(event.duration)}`;
  }
  const where = describeDependency(event);
  if (event.error === undefined) return text + where;
  return `${text} (${where === '' ? '' : `${where.slice(2, -1)}; `}last: ${event.error})`;
}

/** Milliseconds as a person reads them: `850ms` below a second, `5.7s` above. */
function readable(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)}ms` : `${(ms / 1000).toFixed(1)}s`;
}

/**
 * What the opt-in recovering state does (DESIGN §3.6): it admits the lower of a clock ramp and an AIMD
 * estimate (fast answers add a step, a slow one halves it), from 5 % until every attempt passes and it
 * closes; one failure re-opens it.
 */
const RECOVERING =
  'admitting a growing share of attempts (it grows with time and fast answers; a failure re-opens the breaker)';

function describeKind(event: CallEvent): string {
  switch (event.kind) {
    case 'breakerHalfOpened':
      return event.breakerState === 'recovering'
        ? `[${event.policy}] Breaker recovering: ${RECOVERING}`
        : `[${event.policy}] Breaker half-open: probing`;
    case 'breakerClosed':
      return `[${event.policy}] Breaker closed`;
    case 'limiterDegraded':
      return `[${event.policy}] Shared rate limit degraded: the store failed (${event.error ?? 'unknown'}), running on this process's share`;
    case 'limiterRecovered':
      return `[${event.policy}] Shared rate limit shared again: the store answers`;
    case 'rejected':
      return describeRefusal(event) ?? event.toString();
    default:
      return event.toString();
  }
}

/** Why a refusal refused, in words, by stop reason. */
const REFUSALS: Partial<Record<StopReason, string>> = {
  budgetExhausted:
    'the retry budget is spent (retries used up their share of recent calls; the dependency keeps failing)',
  dependencyUnavailable:
    'the circuit breaker is open (the dependency failed too often; probes tell when it is back)',
  limited: "the policy's limit is full (its concurrency or rate limit)",
};

/**
 * A refusal as a sentence: what was refused (a retry after attempt N, or the call before its first
 * attempt), why, and how the call ended, e.g. `[payments] Retry refused after attempt #1 (Transient):
 * the retry budget is spent (…); the call ended after 100ms with CallRejectedError` (`with the
 * fallback's value (instead of CallRejectedError)` when the policy's fallback served it, `with
 * TypeError, thrown by the fallback` when it threw).
 */
function describeRefusal(event: CallEvent): string | undefined {
  const why = event.reason === undefined ? undefined : REFUSALS[event.reason];
  if (why === undefined) return undefined;
  const what =
    event.attempt > 0
      ? `Retry refused after attempt #${event.attempt}${event.verdict === undefined ? '' : ` (${event.verdict})`}`
      : 'Call refused before its first attempt';
  const ended = `the call ended after ${Math.round(event.duration)}ms${endedWith(event)}`;
  return `[${event.policy}] ${what}: ${why}; ${ended}`;
}

/** What a refused call ended with: its error, or what its fallback made of it. */
function endedWith(event: CallEvent): string {
  const error = event.error;
  switch (event.fallback) {
    case 'served':
      return ` with the fallback's value${error === undefined ? '' : ` (instead of ${error})`}`;
    case 'failed':
      return ` with ${error ?? 'an error'}, thrown by the fallback`;
    default:
      return error === undefined ? '' : ` with ${error}`;
  }
}

function describeDependency(event: CallEvent): string {
  const dependency = event.dependency;
  if (dependency === undefined) return '';
  if (dependency.host !== undefined) return ` (host ${dependency.host})`;
  return dependency.service === undefined ? '' : ` (service ${dependency.service})`;
}

/** The flood-control key of an incident: its reason, and the host or service of a keyed instance. */
function repeatKey(event: CallEvent, reason: string): string {
  const dependency = event.dependency;
  return dependency === undefined
    ? reason
    : `${reason} ${dependency.host ?? ''} ${dependency.service ?? ''}`;
}

/** Makes room for one repeat window: the first one already over, else the one opened longest ago. */
function dropOne(repeats: Map<string, Repeat>, now: number): void {
  for (const [key, repeat] of repeats) {
    if (now >= repeat.until) {
      repeats.delete(key);
      return;
    }
  }
  repeats.delete(repeats.keys().next().value!);
}

/**
 * `policy` with a logging listener added (after any listener it has; `withListener` semantics, so
 * telemetry attached before or after keeps working). Profile `'off'` returns `policy` unchanged.
 * Time comes from `options.clock`, else the policy's clock.
 *
 * ```ts
 * const payments = withLogging(Resilience.http.with({ name: 'payments' }), new Logger('NResilience.payments'), {
 *   sampling: LogSampling.oneIn(20),
 * });
 * ```
 * @throws PolicyConfigError for an invalid profile, sampling or window
 */
export function withLogging(
  policy: Policy,
  logger: ResilienceLogger,
  options: LoggingOptions = {},
): Policy {
  if (options.profile === 'off') return policy;
  const listener = new LoggingListener(logger, options.clock ?? policy.options.clock, options);
  return policy.withListener(listener);
}
