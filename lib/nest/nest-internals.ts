import {
  CONTROLLER_WATERMARK,
  INJECTABLE_WATERMARK,
  PROPERTY_DEPS_METADATA,
} from '@nestjs/common/constants.js';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';

// The one place the per-application binding reads Nest internals, none of them public API: the
// metadata keys `@Injectable()`, `@Controller()` and property injection write, and what an
// `InstanceWrapper` holds. Request-scoped and transient providers need them (a registry per
// instance, whatever module made it). Tested on Nest 11.2 (test/compat/nest11-commonjs) and 12.5
// (the repository's own suites, test/compat/nest12-esm and nest12-swc); a Nest major that renames one
// fails those suites here first.

/** What Nest's `@Injectable()` and `@Controller()` store on a class. */
const MANAGED_CLASS_WATERMARKS = [INJECTABLE_WATERMARK, CONTROLLER_WATERMARK];

/** Whether Nest creates instances of `type` itself: it carries `@Injectable()` or `@Controller()`. */
export function isNestManagedClass(type: object): boolean {
  return MANAGED_CLASS_WATERMARKS.some((key) => Reflect.getMetadata(key, type) === true);
}

/** Whether `type` already declares a property dependency injected into `key` (`@Inject()` on a property). */
export function declaresPropertyDependency(type: object, key: string | symbol): boolean {
  const declared: unknown = Reflect.getMetadata(PROPERTY_DEPS_METADATA, type);
  return (
    Array.isArray(declared) &&
    declared.some((dependency: { key?: unknown }) => dependency.key === key)
  );
}

/** The instances a wrapper already holds: its singleton, or the transient ones made for each consumer. */
export function staticInstances(wrapper: InstanceWrapper): object[] {
  if (!wrapper.isDependencyTreeStatic()) return [];
  const held = wrapper.isTransient
    ? wrapper.getStaticTransientInstances().map((entry) => entry?.instance)
    : [wrapper.instance];
  return held.filter(
    (instance): instance is object => instance !== null && typeof instance === 'object',
  );
}
