import 'reflect-metadata';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Injectable, Logger } from '@nestjs/common';
import { ResilienceWarningCodes } from '../core/index.js';
import { PolicyRegistry } from './policy-registry.js';
import { bindRegistry, unbindRegistry } from './resilient-binding.js';
import { Resilient } from './resilient.decorator.js';

const records: [string, unknown][] = [];
const original = Logger.prototype.warn;
Logger.prototype.warn = function (this: Logger, message: unknown) {
  records.push([(this as unknown as { context?: string }).context ?? '', message]);
};
afterAll(() => {
  Logger.prototype.warn = original;
});

describe('@Resilient run-time checks (Nest logger, context NResilience)', () => {
  it('a declared non-Promise return type is reported once, at decoration', () => {
    class Rates {
      @Resilient('rates')
      rate(): number {
        return 1;
      }
    }
    void Rates;
    expect(records).toEqual([
      [
        'NResilience',
        "@Resilient('rates') on Rates.rate: its declared return type Number is neither a Promise nor an Observable, so the wrapper makes it async (callers get Promise<Number>). " +
          `Declare Promise<T> (and make it async) or return an Observable. [${ResilienceWarningCodes.resilientMethod}]`,
      ],
    ]);
    records.splice(0);
  });

  it('Promise, Observable, undeclared and { returns } say nothing', () => {
    class Fine {
      @Resilient('rates')
      async a(): Promise<number> {
        return 1;
      }
      @Resilient('rates', { returns: 'promise' })
      b(): number {
        return 1;
      }
    }
    void Fine;
    expect(records).toEqual([]);
  });

  it('a call on a class Nest does not manage is reported once per class; @Injectable() classes are not', async () => {
    const registry = PolicyRegistry.create({ policies: { ledger: { attempts: 1 } } });
    bindRegistry(registry);
    try {
      class Ledger {
        @Resilient('ledger')
        async post(): Promise<string> {
          return 'ok';
        }
      }
      @Injectable()
      class Managed {
        @Resilient('ledger')
        async post(): Promise<string> {
          return 'ok';
        }
      }
      const ledger = new Ledger();
      expect([await ledger.post(), await ledger.post(), await new Managed().post()]).toEqual([
        'ok',
        'ok',
        'ok',
      ]);
      expect(records).toEqual([
        [
          'NResilience',
          "@Resilient('ledger') on Ledger.post: Ledger has no @Injectable() or @Controller(), so Nest never creates it and the module never binds it to its policies. " +
            `Add @Injectable() and register it as a provider. [${ResilienceWarningCodes.resilientMethod}]`,
        ],
      ]);
    } finally {
      unbindRegistry(registry);
      records.splice(0);
    }
  });
});
