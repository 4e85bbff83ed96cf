import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { LogSampling } from '../telemetry/logging-listener.js';
import { ModuleOptionsReading, readModuleOptions } from './module-settings.js';
import { ResilienceModule } from './resilience.module.js';

/** The messages the module options reader gives for `telemetry` and `logging`. */
const messages = (telemetry: unknown, logging: unknown) =>
  (ModuleOptionsReading.of({ policies: { p: {} }, telemetry, logging }).error?.problems ?? []).map(
    (problem) => problem.message,
  );
const resolveLogging = (logging: unknown) =>
  readModuleOptions({ policies: { p: {} }, logging }).logging;
const PLAIN =
  'must be a plain object (an object literal or a JSON/YAML mapping; not an array, Map, Date, RegExp, class instance or an object inheriting properties)';
const METER =
  'must be an OpenTelemetry MeterProvider (an object with getMeter(name)), e.g. from the OpenTelemetry SDK';

/** What `ResilienceModule.forRoot(options)` fails to start with. */
async function startUpError(options: Record<string, unknown>): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ policies: { p: {} }, ...options })],
    }).compile();
    await moduleRef.init();
    await moduleRef.close();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('telemetry and logging module options, field by field', () => {
  it('refuses an unknown logging key, naming it and the known ones (it used to leave logging on)', () => {
    expect(messages(undefined, { profil: 'off' })).toEqual([
      'logging.profil: "off" is invalid: is not a known logging option (profile, sampling)',
    ]);
  });

  it('refuses a bad profile, sampling, null and objects that are not plain', () => {
    expect(messages(undefined, { profile: null })).toEqual([
      "logging.profile: null is invalid: must be 'off', 'default' or 'verbose'",
    ]);
    expect(messages(undefined, { sampling: { oneIn: 2, every: 3 } })).toEqual([
      'logging.sampling.every: 3 is invalid: is not a known sampling option (oneIn)',
    ]);
    expect(messages(undefined, { sampling: { oneIn: 0 } })).toEqual([
      'logging.sampling.oneIn: 0 is invalid: must be an integer >= 1 (keep one traffic record in n)',
    ]);
    expect(messages(undefined, { sampling: {} })).toEqual([
      'logging.sampling.oneIn: undefined is invalid: must be an integer >= 1 (keep one traffic record in n)',
    ]);
    expect(messages(undefined, { sampling: null })).toEqual([
      `logging.sampling: null is invalid: ${PLAIN}`,
    ]);
    expect(messages(undefined, new Map())).toEqual([`logging: Map(0) is invalid: ${PLAIN}`]);
    expect(messages(undefined, 'loud')).toEqual([
      "logging: \"loud\" is invalid: must be 'off', 'default' or 'verbose'",
    ]);
    expect(resolveLogging({ profile: 'verbose', sampling: LogSampling.oneIn(4) })).toEqual({
      profile: 'verbose',
      sampling: { oneIn: 4 },
    });
  });

  it('refuses a meter or tracer provider that is no provider, and unknown telemetry keys', () => {
    expect(messages({ meterProvider: {} }, undefined)).toEqual([
      `telemetry.meterProvider: {} is invalid: ${METER}`,
    ]);
    expect(messages({ meterProvider: 'prometheus' }, undefined)).toEqual([
      `telemetry.meterProvider: "prometheus" is invalid: ${METER}`,
    ]);
    expect(messages({ tracerProvider: { getMeter: () => ({}) } }, undefined)).toEqual([
      'telemetry.tracerProvider: {"getMeter":[function]} is invalid: must be an OpenTelemetry TracerProvider (an object with getTracer(name)), e.g. from the OpenTelemetry SDK',
    ]);
    expect(messages({ trace: false }, undefined)).toEqual([
      'telemetry.trace: false is invalid: is not a known telemetry option (meterProvider, tracerProvider, traces)',
    ]);
    expect(messages({ traces: null }, undefined)).toEqual([
      'telemetry.traces: null is invalid: must be true or false',
    ]);
    expect(messages(new Date(0), undefined)).toEqual([
      `telemetry: Date(1970-01-01T00:00:00.000Z) is invalid: ${PLAIN}`,
    ]);
  });

  it('a bad meter provider stops start-up with a ResilienceConfigError, never a raw TypeError', async () => {
    const error = await startUpError({
      telemetry: { meterProvider: {} },
      logging: { profil: 'off' },
    });
    expect(error).toBeInstanceOf(ResilienceConfigError);
    expect((error as Error).message).toBe(
      [
        'Invalid resilience config (2 problems):',
        `  - telemetry.meterProvider: {} is invalid: ${METER}`,
        '  - logging.profil: "off" is invalid: is not a known logging option (profile, sampling)',
      ].join('\n'),
    );
  });

  it('a provider that throws when asked for its meter stops start-up with a ResilienceConfigError naming telemetry', async () => {
    const meterProvider = {
      getMeter() {
        throw new TypeError('meter registry closed');
      },
    };
    const error = await startUpError({ telemetry: { meterProvider } });
    expect(error).toBeInstanceOf(ResilienceConfigError);
    expect((error as Error).message).toBe(
      'Invalid resilience config (1 problem):\n  - telemetry: {"meterProvider":{"getMeter":[function]}} is invalid: could not be attached: its provider threw "meter registry closed"',
    );
  });
});
