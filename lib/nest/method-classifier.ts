import {
  type ClassifierConfig,
  classifierFromSpec,
  parseClassifier,
} from '../config/classifier-config.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import { Classifier, type Policy, PolicyConfigError } from '../core/index.js';
import { httpExceptionRule } from './http-exception.rule.js';

/**
 * What `@Resilient(name, { classifier })` accepts (DESIGN §4 "code classifiers per name through module
 * options or `@Resilient`"): a `Classifier` written in code (`Classifier.http.with(rule)`), or the
 * form config takes (`'default'`, `'http'`, `'grpc'`, or `{ base?, permanent?, transient?, throttled? }`,
 * see `ClassifierConfig`; in Nest its `'default'` and `'grpc'` bases also judge a thrown `HttpException`
 * by its status).
 */
export type ResilientClassifier = Classifier | ClassifierConfig;

/**
 * The classifier one decorated method runs with instead of its policy's, read once: checked at
 * `app.init()` by the explorer (or at the first call on an instance no application manages), then
 * reused. Each policy value it is applied to gets one derived policy (the same breaker, budget and
 * listeners: only the classifier differs), so a reload's new value gets a new one.
 * @internal
 */
export class MethodClassifier {
  private resolved: Classifier | undefined;
  private readonly derived = new WeakMap<Policy, Policy>();

  /**
   * @param value the `classifier` option as given (checked by {@link classifier}, not here)
   * @param where the decorated method, as errors name it: `@Resilient('payments') on Orders.place`
   */
  constructor(
    private readonly value: unknown,
    private readonly where: string,
  ) {}

  /**
   * The method's classifier.
   * @throws ResilienceConfigError whose problem names the method, the value and the rule, e.g.
   *   `@Resilient('payments') on Orders.place: classifier.permanent[0]: 99 is invalid: must be an error name or code …`
   */
  get classifier(): Classifier {
    if (this.resolved !== undefined) return this.resolved;
    const value = this.value;
    const field = `${this.where}: classifier`;
    if (value instanceof Classifier) return (this.resolved = value);
    if (typeof value === 'function') {
      throw new ResilienceConfigError([
        new PolicyConfigError(
          field,
          value,
          'must be a Classifier (a rule function goes in Classifier.of(rule) or Classifier.http.with(rule)) or a classifier config',
        ),
      ]);
    }
    const read = parseClassifier(value, field);
    if ('problems' in read) throw new ResilienceConfigError(read.problems);
    return (this.resolved = classifierFromSpec(read.spec, [httpExceptionRule]));
  }

  /** `policy` with this method's classifier: its breaker, budget and listeners stay the named policy's. */
  apply(policy: Policy): Policy {
    let derived = this.derived.get(policy);
    if (derived === undefined) {
      derived = policy.with({ classifier: this.classifier });
      this.derived.set(policy, derived);
    }
    return derived;
  }
}
