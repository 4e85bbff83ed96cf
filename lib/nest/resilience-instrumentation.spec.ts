import { Logger } from '@nestjs/common';
import { FakeClock, Resilience } from '../core/index.js';
import { LogSampling } from '../telemetry/logging-listener.js';
import { ModuleOptionsReading, readModuleOptions } from './module-settings.js';
import { NestResilienceLogger, PolicyInstrumentation } from './resilience-instrumentation.js';

/** What the module options reader resolves `logging` to. */
const resolveLogging = (logging: unknown) =>
  readModuleOptions({ policies: { p: {} }, logging }).logging;
/** The problems the module options reader finds in `telemetry` and `logging`. */
const instrumentationProblems = (telemetry: unknown, logging: unknown) =>
  ModuleOptionsReading.of({ policies: { p: {} }, telemetry, logging }).error?.problems ?? [];

describe('logging module option', () => {
  it('resolves profiles and sampling; off is no listener', () => {
    expect(resolveLogging(undefined)).toEqual({ profile: 'default', sampling: { oneIn: 1 } });
    expect(resolveLogging('verbose')).toEqual({ profile: 'verbose', sampling: { oneIn: 1 } });
    expect(resolveLogging('off')).toBeUndefined();
    expect(resolveLogging({ profile: 'off', sampling: LogSampling.oneIn(5) })).toBeUndefined();
    expect(resolveLogging({ sampling: LogSampling.oneIn(20) })).toEqual({
      profile: 'default',
      sampling: { oneIn: 20 },
    });
    expect(resolveLogging({ sampling: { oneIn: 3 } })).toEqual({
      profile: 'default',
      sampling: { oneIn: 3 },
    });
  });

  it('reports every problem with its path, value and rule', () => {
    expect(instrumentationProblems('yes', { profile: 'loud' }).map((p) => p.message)).toEqual([
      'telemetry: "yes" is invalid: must be true, false or { meterProvider?, tracerProvider?, traces? }',
      "logging.profile: \"loud\" is invalid: must be 'off', 'default' or 'verbose'",
    ]);
    expect(instrumentationProblems(undefined, { sampling: { oneIn: 0 } })[0]!.message).toContain(
      'logging.sampling',
    );
    expect(instrumentationProblems(false, 7)[0]!.message).toContain(
      "logging: 7 is invalid: must be 'off', 'default', 'verbose' or { profile, sampling }",
    );
    expect(instrumentationProblems(true, 'default')).toEqual([]);
  });
});

describe('NestResilienceLogger and PolicyInstrumentation', () => {
  afterEach(() => Logger.overrideLogger(true));

  it('logs through Nest with the context NResilience.<policy>, leaving level filtering to the app logger', () => {
    const written: [string, unknown, unknown][] = [];
    Logger.overrideLogger({
      log: (m, c) => written.push(['log', m, c]),
      warn: (m, c) => written.push(['warn', m, c]),
      error: (m, c) => written.push(['error', m, c]),
      debug: (m, c) => written.push(['debug', m, c]),
      verbose: (m, c) => written.push(['verbose', m, c]),
    });
    const logger = new NestResilienceLogger('payments');
    logger.warn('w');
    logger.verbose('v');
    expect(written).toEqual([
      ['warn', 'w', 'NResilience.payments'],
      ['verbose', 'v', 'NResilience.payments'],
    ]);
    // Nest 11's static Logger.isLevelEnabled is false without explicit levels: never consult it.
    expect((logger as { isLevelEnabled?: unknown }).isLevelEnabled).toBeUndefined();
  });

  it('pins a logging listener per name: the same listener across rebuilds of the policy', async () => {
    const lines: string[] = [];
    const logger = {
      log: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
      debug: (m: string) => lines.push(m),
      verbose: (m: string) => lines.push(m),
    };
    const instrumentation = new PolicyInstrumentation(
      { profile: 'verbose', sampling: LogSampling.oneIn(2) },
      undefined,
      true,
      () => logger,
    );
    const clock = new FakeClock();
    const first = instrumentation.instrument('p', Resilience.default.with({ name: 'p', clock }));
    await first.run(() => 1); // records 1, 2 (2 kept)
    const second = instrumentation.instrument(
      'p',
      Resilience.default.with({ name: 'p', clock, attempts: 5 }),
    );
    await second.run(() => 1); // records 3, 4 (4 kept)
    expect(lines).toEqual(['[p] Succeeded #1 (0ms)', '[p] Succeeded #1 (0ms)']);
    expect(instrumentation.telemetryEnabled).toBe(false);
  });
});
