import { Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { attemptSignalIndex } from './attempt-signal.decorator.js';
import { ResilienceConfigError } from '../config/resilience-config.error.js';
import type { PolicyConfigError } from '../core/index.js';
import type { MethodClassifier } from './method-classifier.js';
import type { MethodFallback } from './method-fallback.js';
import { PolicyRegistry } from './policy-registry.js';
import {
  INJECT_POLICY_METADATA,
  RESILIENT_CLASSIFIER_METADATA,
  RESILIENT_FALLBACK_METADATA,
  RESILIENT_POLICY_METADATA,
} from './resilience.constants.js';
import { bindInstance, bindRegistry, unbindRegistry } from './resilient-binding.js';
import { staticInstances } from './nest-internals.js';

/**
 * Finds what the application's providers and controllers use of this module, the way
 * `@nestjs/schedule` finds its jobs (`DiscoveryService` + `MetadataScanner`): the policy names of
 * `@Resilient` methods and `@InjectPolicy` handles (checked against the registry), `@AttemptSignal()`
 * parameters without `@Resilient`, and the instances with `@Resilient` methods, which it binds to this
 * application's registry. Instances created later (request-scoped, or transient ones resolved after
 * start-up) get the registry from Nest itself, through the property the decorator declares.
 * @internal
 */
@Injectable()
export class ResilientExplorer implements OnApplicationShutdown {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly registry: PolicyRegistry,
  ) {}

  /**
   * Scans, binds and checks; then unmanaged instances may use this registry (see `resilient-binding`).
   * Called by `ResilienceModule` once the registry has loaded its config.
   * @throws UnknownPolicyError naming each unknown name and where it is used;
   *   TypeError for `@AttemptSignal()` on a method without `@Resilient`;
   *   ResilienceConfigError for a bad `@Resilient(name, { classifier })` or a `fallback` that is not
   *   another method of the class, naming class, method and value.
   */
  explore(): void {
    const usages = new Map<string, string[]>();
    const use = (name: string, where: string): void => {
      const list = usages.get(name) ?? [];
      if (!list.includes(where)) list.push(where);
      usages.set(name, list);
    };
    const orphanSignals: string[] = [];
    const optionProblems: PolicyConfigError[] = [];
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const type: unknown = wrapper.metatype;
      if (typeof type !== 'function' || wrapper.inject) continue; // factory providers: nothing decorated
      const injected: unknown = Reflect.getMetadata(INJECT_POLICY_METADATA, type);
      if (Array.isArray(injected))
        for (const name of injected) use(name, `@InjectPolicy in ${type.name}`);
      const prototype: unknown = type.prototype;
      if (prototype === null || typeof prototype !== 'object') continue;
      let resilient = false;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const fn = (prototype as Record<string, unknown>)[method];
        const name: unknown =
          typeof fn === 'function' ? Reflect.getMetadata(RESILIENT_POLICY_METADATA, fn) : undefined;
        if (typeof name === 'string') {
          resilient = true;
          use(name, `@Resilient on ${type.name}.${method}`);
          checkClassifier(fn as object, optionProblems);
          const fallback = Reflect.getMetadata(RESILIENT_FALLBACK_METADATA, fn as object) as
            MethodFallback | undefined;
          const problem = fallback?.check(prototype);
          if (problem !== undefined) optionProblems.push(problem);
        } else if (attemptSignalIndex(prototype, method) >= 0) {
          orphanSignals.push(`${type.name}.${method}`);
        }
      }
      if (resilient)
        for (const instance of staticInstances(wrapper)) bindInstance(instance, this.registry);
    }
    if (orphanSignals.length > 0) {
      throw new TypeError(
        `@AttemptSignal() needs @Resilient(name) on the same method: ${orphanSignals.join(', ')}`,
      );
    }
    if (optionProblems.length > 0) throw new ResilienceConfigError(optionProblems);
    this.registry.require(usages);
    bindRegistry(this.registry);
  }

  /** The application has shut down: unmanaged instances stop using its registry. Called by Nest. */
  onApplicationShutdown(): void {
    unbindRegistry(this.registry);
  }
}

/** Reads a method's own classifier now, so a bad one stops start-up; its problems are pushed (once per method). */
function checkClassifier(method: object, problems: PolicyConfigError[]): void {
  const own = Reflect.getMetadata(RESILIENT_CLASSIFIER_METADATA, method) as
    MethodClassifier | undefined;
  try {
    void own?.classifier;
  } catch (error) {
    if (!(error instanceof ResilienceConfigError)) throw error;
    for (const problem of error.problems)
      if (!problems.some((seen) => seen.message === problem.message)) problems.push(problem);
  }
}
