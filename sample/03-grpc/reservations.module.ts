import { Inject, Injectable, Module, type OnModuleInit } from '@nestjs/common';
import { ClientsModule, type ClientGrpc, Transport } from '@nestjs/microservices';
import { PolicyRegistry, ResilienceModule } from '@nresilience/nestjs';
import { createResilienceInterceptor } from '@nresilience/nestjs/grpc';
import { firstValueFrom, type Observable } from 'rxjs';
import { INVENTORY_PROTO } from './flaky-inventory.js';

interface Inventory {
  Reserve(request: { sku: string }): Observable<{ sku: string; attempt: number }>;
}

/** The two named policies the sample compares: the same but for the retry budget. */
export const POLICIES = { withBudget: 'inventory', withoutBudget: 'inventoryNoBudget' } as const;

/**
 * Calls the Inventory service through Nest's gRPC client, once per named policy: each client has the
 * resilience interceptor of its policy, read from the registry by name.
 */
@Injectable()
export class Reservations implements OnModuleInit {
  private readonly inventories = new Map<string, Inventory>();

  constructor(
    @Inject(POLICIES.withBudget) private readonly withBudget: ClientGrpc,
    @Inject(POLICIES.withoutBudget) private readonly withoutBudget: ClientGrpc,
  ) {}

  onModuleInit(): void {
    this.inventories.set(POLICIES.withBudget, this.withBudget.getService<Inventory>('Inventory'));
    this.inventories.set(
      POLICIES.withoutBudget,
      this.withoutBudget.getService<Inventory>('Inventory'),
    );
  }

  /** Reserves `sku` under the named policy; resolves true when the call succeeded. */
  async reserve(policy: string, sku: string): Promise<boolean> {
    try {
      await firstValueFrom(this.inventories.get(policy)!.Reserve({ sku }));
      return true;
    } catch {
      return false;
    }
  }
}

/** A gRPC client registration whose interceptor runs the registry's current policy `name`. */
function inventoryClient(name: string, address: string) {
  return {
    name,
    inject: [PolicyRegistry],
    useFactory: (registry: PolicyRegistry) => ({
      transport: Transport.GRPC as const,
      options: {
        package: 'shop',
        protoPath: INVENTORY_PROTO,
        url: address,
        loader: { keepCase: true },
        // Reserve is safe to repeat in this sample (the SKU is the idempotency key).
        channelOptions: {
          interceptors: [
            createResilienceInterceptor({
              policy: () => registry.keyedTemplate(name),
              repeatable: ['shop.Inventory'],
            }),
          ],
        },
      },
    }),
  };
}

/** The sample app: two named policies (3 attempts; with and without the retry budget) and their clients. */
@Module({})
export class ReservationsModule {
  static forRoot(address: string) {
    return {
      module: ReservationsModule,
      imports: [
        ResilienceModule.forRoot({
          policies: {
            [POLICIES.withBudget]: { attempts: 3 },
            [POLICIES.withoutBudget]: { attempts: 3, budget: false },
          },
        }),
        ClientsModule.registerAsync([
          inventoryClient(POLICIES.withBudget, address),
          inventoryClient(POLICIES.withoutBudget, address),
        ]),
      ],
      providers: [Reservations],
    };
  }
}
