import { ConfigurableModuleBuilder, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { getPolicyToken, injectedPolicyNames } from './inject-policy.decorator.js';
import { readExceptionFilter } from './module-settings.js';
import { PolicyRegistry } from './policy-registry.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.constants.js';
import {
  ResilienceBadGatewayFilter,
  ResilienceExceptionFilter,
} from './resilience-exception.filter.js';
import type {
  ResilienceModuleExtras,
  ResilienceModuleOptions,
} from './resilience-module-options.interface.js';

/**
 * Adds the module-level choices (global, exception filter) and one `PolicyHandle` provider per name
 * used by `@InjectPolicy` anywhere in the process. The handle providers are computed when Nest reads
 * the module (at `compile()`/`NestFactory.create`), after every decorated class has been loaded, not
 * when `forRoot()` runs (which may be before some classes are defined).
 */
function defineModule(definition: DynamicModule, extras: ResilienceModuleExtras): DynamicModule {
  const base: Provider[] = [...(definition.providers ?? [])];
  const filter = exceptionFilterClass(extras.exceptionFilter);
  if (filter !== undefined) base.push({ provide: APP_FILTER, useClass: filter });
  const handles = (): Provider[] =>
    [...injectedPolicyNames].map((name) => ({
      provide: getPolicyToken(name),
      useFactory: (registry: PolicyRegistry) => registry.handle(name),
      inject: [PolicyRegistry],
    }));
  return {
    ...definition,
    global: extras.isGlobal !== false,
    get providers(): Provider[] {
      return [...base, ...handles()];
    },
    get exports() {
      return [PolicyRegistry, ...[...injectedPolicyNames].map(getPolicyToken)];
    },
  };
}

/**
 * The filter class `exceptionFilter` asks for, or `undefined` for none.
 * @throws PolicyConfigError naming `exceptionFilter`, the value and the rule for anything but a boolean or `{ badGateway?: boolean }`
 */
function exceptionFilterClass(value: unknown): typeof ResilienceExceptionFilter | undefined {
  const filter = readExceptionFilter(value);
  if (filter === undefined) return undefined;
  return filter.badGateway ? ResilienceBadGatewayFilter : ResilienceExceptionFilter;
}

// OPTIONS_TYPE and ASYNC_OPTIONS_TYPE exist for their types only (Nest's documented pattern).
/* eslint-disable @typescript-eslint/no-unused-vars */
const { ConfigurableModuleClass, OPTIONS_TYPE, ASYNC_OPTIONS_TYPE } =
  new ConfigurableModuleBuilder<ResilienceModuleOptions>({
    optionsInjectionToken: RESILIENCE_MODULE_OPTIONS,
  })
    .setClassMethodName('forRoot')
    .setExtras<ResilienceModuleExtras>({ isGlobal: true, exceptionFilter: false }, defineModule)
    .build();
/* eslint-enable @typescript-eslint/no-unused-vars */

/** The generated base class of `ResilienceModule` (static `forRoot` and `forRootAsync`). @internal */
export const ConfigurableResilienceModule = ConfigurableModuleClass;

/** What `ResilienceModule.forRoot(...)` accepts: `ResilienceModuleOptions` plus `isGlobal` and `exceptionFilter`. */
export type ResilienceForRootOptions = typeof OPTIONS_TYPE;

/**
 * What `ResilienceModule.forRootAsync(...)` accepts: `{ imports?, inject?, useFactory?, useClass?,
 * useExisting? }` (the factory returns `ResilienceModuleOptions`) plus `isGlobal` and `exceptionFilter`.
 */
export type ResilienceForRootAsyncOptions = typeof ASYNC_OPTIONS_TYPE;
