/** Injection token of the resolved `ResilienceModuleOptions` (what `forRoot` got or `forRootAsync`'s factory returned). */
export const RESILIENCE_MODULE_OPTIONS = 'RESILIENCE_MODULE_OPTIONS';

/** Metadata key `@Resilient` puts on the wrapped method: the policy name (read it with `Reflector.get`). */
export const RESILIENT_POLICY_METADATA = 'nresilience:resilient-policy';

/** Metadata key `@AttemptSignal` puts on `(prototype, method)`: the index of the signal parameter. */
export const ATTEMPT_SIGNAL_METADATA = 'nresilience:attempt-signal';

/** Metadata key `@InjectPolicy` puts on the class: the policy names it injects. */
export const INJECT_POLICY_METADATA = 'nresilience:inject-policy';

/** Metadata key set by `@Criticality(level)` on the method's wrapper (value: the level). */
export const CRITICALITY_METADATA = 'nresilience:criticality';

/** Metadata key `@Resilient(name, { classifier })` puts on the wrapped method: its `MethodClassifier`. @internal */
export const RESILIENT_CLASSIFIER_METADATA = 'nresilience:resilient-classifier';

/** Metadata key `@Resilient(name, { fallback })` puts on the wrapped method: its `MethodFallback`. @internal */
export const RESILIENT_FALLBACK_METADATA = 'nresilience:resilient-fallback';
