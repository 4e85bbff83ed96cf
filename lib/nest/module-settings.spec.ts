import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { FakeClock } from '../core/index.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { ModuleOptionsReading, readModuleOptions } from './module-settings.js';
import { PolicyRegistry } from './policy-registry.js';
import { ResilienceModule } from './resilience.module.js';

/** Module options whose every field counts how often it is read. */
function countedOptions(fields: Record<string, unknown>): {
  options: object;
  reads: Record<string, number>;
} {
  const reads: Record<string, number> = {};
  const options = {};
  for (const [key, value] of Object.entries(fields)) {
    reads[key] = 0;
    Object.defineProperty(options, key, {
      enumerable: true,
      get: () => {
        reads[key]!++;
        return value;
      },
    });
  }
  return { options, reads };
}

describe('module options, read once', () => {
  it('reads every option once per module, whoever consumes it (registry, instrumentation, grace)', async () => {
    const { options, reads } = countedOptions({
      policies: { payments: { attempts: 2 } },
      clock: new FakeClock(),
      telemetry: false,
      logging: 'verbose',
      shutdown: { grace: '2s' },
    });
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRootAsync({ useFactory: () => options })],
    }).compile();
    await moduleRef.init();
    expect(moduleRef.get(PolicyRegistry).get('payments').options.attempts).toBe(2);
    await moduleRef.close();
    expect(reads).toEqual({ policies: 1, clock: 1, telemetry: 1, logging: 1, shutdown: 1 });
  });

  it('returns a frozen value with every field resolved (durations in ms, defaults filled in)', () => {
    const clock = new FakeClock();
    const settings = readModuleOptions({
      policies: { payments: {} },
      clock,
      shutdown: { grace: '5s' },
      telemetry: { traces: false },
    });
    expect(Object.isFrozen(settings)).toBe(true);
    expect(settings.clock).toBe(clock);
    expect(settings.shutdownGrace).toBe(5000);
    expect(settings.logging).toEqual({ profile: 'default', sampling: { oneIn: 1 } });
    expect(settings.telemetry).toEqual({
      option: { traces: false },
      meterProvider: undefined,
      tracerProvider: undefined,
      traces: false,
    });
    expect(settings.source).toBeUndefined();
    expect([...settings.inline!.policies.keys()]).toEqual(['payments']);
    expect(readModuleOptions({ policies: {}, telemetry: false }).telemetry).toBe(false);
  });

  it('collects every problem of every field in one error; the reading keeps it for init', () => {
    const reading = ModuleOptionsReading.of({
      policies: { p: { attempts: 0 } },
      shutdown: { grace: -1 },
      logging: 'loud',
    });
    expect(reading.valid).toBeUndefined();
    expect(() => reading.settings).toThrow(ResilienceConfigError);
    expect(reading.error!.problems.map((problem) => problem.field)).toEqual([
      'shutdown.grace',
      'logging',
      'policies.p.attempts',
    ]);
  });
});
