import { Observable, isObservable } from 'rxjs';
import {
  AmbientCriticality,
  Criticality as Levels,
  type Criticality as Level,
} from '../core/index.js';
import { CRITICALITY_METADATA } from './resilience.constants.js';

/** A criticality level (`sheddable < sheddablePlus < critical < criticalPlus`). */
export type Criticality = Level;

/**
 * Runs `method` (any function) with `level` as the ambient criticality, lowered to what the inbound
 * context already carries (an inbound header can lower a handler's level, never raise it). An
 * Observable result keeps the level for its subscription. @internal
 */
export function withCriticality<F extends (this: unknown, ...args: unknown[]) => unknown>(
  level: Level,
  method: F,
): F {
  return function criticality(this: unknown, ...args: unknown[]): unknown {
    const effective = AmbientCriticality.lower(level, AmbientCriticality.current());
    const result = AmbientCriticality.run(effective, () => method.apply(this, args));
    if (!isObservable(result)) return result;
    return new Observable((subscriber) =>
      AmbientCriticality.run(effective, () => result.subscribe(subscriber)),
    );
  } as F;
}

function decorate(level: Level): MethodDecorator {
  if (!Levels.levels.includes(level)) {
    throw new TypeError(
      `@Criticality(level): level must be one of ${Levels.levels.join(', ')}, got ${String(level)}`,
    );
  }
  return <T>(
    target: object,
    key: string | symbol,
    descriptor: TypedPropertyDescriptor<T>,
  ): TypedPropertyDescriptor<T> => {
    const original = descriptor.value as unknown;
    if (typeof original !== 'function') {
      throw new TypeError(
        `@Criticality('${level}') belongs on a method; ${(target as { constructor?: { name?: string } }).constructor?.name}.${String(key)} is not one`,
      );
    }
    const wrapper = withCriticality(level, original as (...args: unknown[]) => unknown);
    for (const metadataKey of Reflect.getOwnMetadataKeys(original))
      Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapper);
    Reflect.defineMetadata(CRITICALITY_METADATA, level, wrapper);
    Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
    Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
    descriptor.value = wrapper as T;
    return descriptor;
  };
}

/**
 * `@Criticality('sheddable')` on a handler or any provider method: the method's work, and every
 * policy call it makes (through its awaits, or for the subscription of the Observable it returns),
 * runs at that criticality (DESIGN §3.9). The level is lowered to what the inbound request carries
 * (`X-NResilience-Criticality`, read by the inbound middleware; from the wire it is clamped at
 * `critical`): a header can lower it, never raise it. Unlabeled work is `critical`. Policies with
 * `useAmbientCriticality: true` apply the budget rule: `sheddable` work retries only while at least
 * half the retry budget would remain. Works above or below `@Resilient`, route decorators and the
 * like (their metadata is kept). Also the level names and helpers of the core's `Criticality`
 * (`Criticality.levels`, `Criticality.fromWire`, …).
 * @param level `'sheddable' | 'sheddablePlus' | 'critical' | 'criticalPlus'`
 * @throws TypeError at decoration time for an unknown level or a non-method
 */
export const Criticality: typeof Levels & ((level: Level) => MethodDecorator) = Object.assign(
  decorate,
  Levels,
);
