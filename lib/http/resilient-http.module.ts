import {
  type DynamicModule,
  Inject,
  Injectable,
  Module,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { PolicyRegistry } from '../nest/index.js';
import { installResilientAdapter } from './axios-adapter.js';
import type { HostPolicies } from './host-policies.js';
import {
  type ResilientFetch,
  type ResilientFetchOptions,
  createResilientFetch,
} from './resilient-fetch.js';

/** Options of {@link ResilientHttpModule.register}: the resilient fetch's, with a registered policy name. */
export interface ResilientHttpModuleOptions extends Omit<ResilientFetchOptions, 'policy'> {
  /**
   * The `ResilienceModule` policy every host starts from (its settings, with a breaker and budget per
   * host); reloads of it apply, each host keeping its state. Health reports the hosts under this name.
   */
  policy: string;
  /**
   * Also run `@nestjs/axios`'s `HttpService` (the one visible to this module) under the policy, at
   * its adapter seam (see `installResilientAdapter`). Needs `@nestjs/axios` and `axios`. Default false.
   */
  httpService?: boolean;
}

/**
 * The injection token of the resilient fetch `ResilientHttpModule.register({ policy })` provides (what
 * `@InjectResilientFetch(policy)` injects): use it to inject without the decorator, or to replace the
 * fetch in a test (`overrideProvider(getResilientFetchToken('payments')).useValue(fake)`).
 * @param policy the registered policy name
 * @returns `'NResilience.ResilientFetch.<policy>'`
 */
export function getResilientFetchToken(policy: string): string {
  return `NResilience.ResilientFetch.${policy}`;
}

/** The injection token of the `HttpService` per-host state for `policy`. */
export function getResilientHttpServiceToken(policy: string): string {
  return `NResilience.ResilientHttpService.${policy}`;
}

/** Injects the resilient fetch `ResilientHttpModule.register({ policy })` provides (a `ResilientFetch`). */
export const InjectResilientFetch = (policy: string): ParameterDecorator =>
  Inject(getResilientFetchToken(policy));

const REQUIRED_NAMES = Symbol('NResilience.ResilientHttpNames');

/** Checks at start-up that the policy names the module was registered with exist. */
@Injectable()
class RequiredPolicyNames implements OnApplicationBootstrap {
  constructor(
    private readonly registry: PolicyRegistry,
    @Inject(REQUIRED_NAMES) private readonly name: string,
  ) {}

  onApplicationBootstrap(): void {
    this.registry.require(
      new Map([[this.name, [`ResilientHttpModule.register({ policy: '${this.name}' })`]]]),
    );
  }
}

/**
 * Outbound HTTP for Nest under a named policy of `ResilienceModule` (which must be imported, and is
 * global by default):
 *
 * ```ts
 * @Module({ imports: [ResilienceModule.forRoot({ policies: { payments: { preset: 'http' } } }), ResilientHttpModule.register({ policy: 'payments' })] })
 * class AppModule {}
 *
 * constructor(@InjectResilientFetch('payments') private readonly http: ResilientFetch) {}
 * ```
 * With `httpService: true` the module's `HttpService` (import `HttpModule` beside it) runs every
 * request under the policy too. A policy name that is not registered fails `app.init()`.
 */
@Module({})
export class ResilientHttpModule {
  /**
   * The module providing the resilient fetch for the named policy (and, with `httpService`, running
   * the visible `HttpService` under it).
   * @param options `{ policy, httpService?, …resilient fetch options }`
   * @throws PolicyConfigError (when the app starts) for a bad fetch option; UnknownPolicyError for an unknown name
   */
  static register(options: ResilientHttpModuleOptions): DynamicModule {
    const { policy: name, httpService, ...fetchOptions } = options;
    const fetchToken = getResilientFetchToken(name);
    const providers: DynamicModule['providers'] = [
      { provide: REQUIRED_NAMES, useValue: name },
      RequiredPolicyNames,
      {
        provide: fetchToken,
        useFactory: (registry: PolicyRegistry): ResilientFetch =>
          createResilientFetch({ ...fetchOptions, policy: registry.handle(name) }),
        inject: [PolicyRegistry],
      },
    ];
    const exports: string[] = [fetchToken];
    if (httpService === true) {
      const serviceToken = getResilientHttpServiceToken(name);
      providers.push({
        provide: serviceToken,
        useFactory: async (
          moduleRef: ModuleRef,
          registry: PolicyRegistry,
        ): Promise<HostPolicies> => {
          const { HttpService } = await import('@nestjs/axios');
          const service = moduleRef.get(HttpService, { strict: false });
          const { propagateCriticality, wallClock, maximumHosts } = fetchOptions;
          return installResilientAdapter(service.axiosRef, {
            policy: registry.handle(name),
            propagateCriticality,
            wallClock,
            maximumHosts,
          });
        },
        inject: [ModuleRef, PolicyRegistry],
      });
      exports.push(serviceToken);
    }
    return { module: ResilientHttpModule, providers, exports };
  }
}
