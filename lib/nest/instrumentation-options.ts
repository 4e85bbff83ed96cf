import {
  type LoggingProfile,
  LogSampling,
  samplingProblems,
} from '../telemetry/logging-listener.js';
import { PolicyConfigError } from '../core/index.js';
import {
  BOOLEAN_RULE,
  isPlainObject,
  oneOfRule,
  optionProblems,
  sectionRule,
  valueRule,
  type ValueRule,
} from '../core/internal.js';

/**
 * The `telemetry` and `logging` module options checked field by field, with paths
 * (`telemetry.meterProvider`, `logging.profile`), so a typo (`logging: { profil: 'off' }`) or a
 * provider that is no provider stops the application at start-up with a `ResilienceConfigError`
 * instead of leaving logging on or failing later with a `TypeError` from inside OpenTelemetry.
 */

/** An object with a method `method` (OpenTelemetry providers are interfaces: checked by shape). */
function providerRule(kind: string, method: string): ValueRule {
  return valueRule(
    `must be an OpenTelemetry ${kind} (an object with ${method}(name)), e.g. from the OpenTelemetry SDK`,
    (v) => {
      return typeof v === 'object' && typeof (v as Record<string, unknown>)[method] === 'function';
    },
  );
}

const TELEMETRY_RULES = {
  meterProvider: providerRule('MeterProvider', 'getMeter'),
  tracerProvider: providerRule('TracerProvider', 'getTracer'),
  traces: BOOLEAN_RULE,
};

const PROFILES = ['off', 'default', 'verbose'] as const;
const PROFILE_RULE = oneOfRule<LoggingProfile>(PROFILES);
const LOGGING_RULES = { profile: PROFILE_RULE, sampling: null };

/** Problems of the `telemetry` module option (`true`, `false` or `{ meterProvider?, tracerProvider?, traces? }`). */
export function telemetryProblems(telemetry: unknown): PolicyConfigError[] {
  if (telemetry === undefined || typeof telemetry === 'boolean') return [];
  if (!isPlainObject(telemetry)) {
    return [
      new PolicyConfigError(
        'telemetry',
        telemetry,
        sectionRule(
          telemetry,
          'must be true, false or { meterProvider?, tracerProvider?, traces? }',
        ),
      ),
    ];
  }
  return optionProblems(telemetry, TELEMETRY_RULES, 'telemetry', 'telemetry option');
}

/** The logging settings a valid `logging` option resolves to (`undefined` for `'off'`). */
export type ResolvedLogging = { profile: 'default' | 'verbose'; sampling: LogSampling } | undefined;

/**
 * Reads the `logging` module option: a profile, or `{ profile?, sampling? }` (own keys only, no others).
 * @returns the resolved settings, or the problems found (each naming `logging…`, the value and the rule)
 */
export function readLogging(
  logging: unknown,
): { logging: ResolvedLogging } | { problems: PolicyConfigError[] } {
  if (logging === undefined) return { logging: { profile: 'default', sampling: LogSampling.all } };
  if (typeof logging === 'string') {
    if (!PROFILE_RULE.accepts(logging))
      return { problems: [new PolicyConfigError('logging', logging, PROFILE_RULE.rule)] };
    return {
      logging: logging === 'off' ? undefined : { profile: logging, sampling: LogSampling.all },
    };
  }
  if (!isPlainObject(logging)) {
    return {
      problems: [
        new PolicyConfigError(
          'logging',
          logging,
          sectionRule(logging, "must be 'off', 'default', 'verbose' or { profile, sampling }"),
        ),
      ],
    };
  }
  const problems = optionProblems(logging, LOGGING_RULES, 'logging', 'logging option');
  if (logging.sampling !== undefined)
    problems.push(...samplingProblems(logging.sampling, 'logging.sampling'));
  if (problems.length > 0) return { problems };
  const profile = (logging.profile ?? 'default') as LoggingProfile;
  const sampling =
    logging.sampling === undefined
      ? LogSampling.all
      : LogSampling.oneIn((logging.sampling as LogSampling).oneIn);
  return { logging: profile === 'off' ? undefined : { profile, sampling } };
}
