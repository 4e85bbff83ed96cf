import { ResilienceWarningCodes } from '../core/index.js';
import { warnOnce } from '../core/internal.js';
import { nestWarningSink } from './nest-warnings.js';
import { isNestManagedClass } from './nest-internals.js';

/** Classes already looked at: the check runs on every call, the metadata is read once per class. */
const checked = new WeakSet<object>();

/**
 * Warns once per method when `@Resilient` decorates a method whose declared return type (the
 * `design:returntype` TypeScript emits) is a known non-Promise type: the wrapper makes it async, so
 * callers get a Promise of what they expected directly. `Object` (an interface, a union, a type-only
 * import) and a missing type say nothing and are not reported.
 * @internal
 */
export function checkReturnType(
  policy: string,
  label: string,
  returnType: unknown,
  observable: boolean,
): void {
  if (
    observable ||
    typeof returnType !== 'function' ||
    returnType === Object ||
    returnType === Promise
  )
    return;
  warnOnce(
    ResilienceWarningCodes.resilientMethod,
    label,
    `@Resilient('${policy}') on ${label}: its declared return type ${returnType.name} is neither a Promise nor an Observable, so the wrapper makes it async ` +
      `(callers get Promise<${returnType.name}>). Declare Promise<T> (and make it async) or return an Observable.`,
    nestWarningSink,
  );
}

/**
 * Warns once per class when a `@Resilient` method is called on an instance of a class without
 * `@Injectable()`/`@Controller()`: Nest never creates it, so the module never binds it to its own
 * registry (it uses the one application running, and fails while several run) and never checks its policy names.
 * @internal
 */
export function checkManagedClass(policy: string, label: string, instance: unknown): void {
  const type = (instance as { constructor?: unknown } | null | undefined)?.constructor;
  if (typeof type !== 'function' || checked.has(type)) return;
  checked.add(type);
  if (isNestManagedClass(type)) return;
  warnOnce(
    ResilienceWarningCodes.resilientMethod,
    type.name || label,
    `@Resilient('${policy}') on ${label}: ${type.name || 'its class'} has no @Injectable() or @Controller(), so Nest never creates it and the module never binds it to its policies. ` +
      'Add @Injectable() and register it as a provider.',
    nestWarningSink,
  );
}
