// docs/grpc.md, "In Nest" (the whole file); test/docs-examples.e2e-spec.ts boots the module and reads the client.
import { join } from 'node:path';
import { Module } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { createResilienceInterceptor } from '../../lib/grpc/index.js';
import { PolicyRegistry, ResilienceModule } from '../../lib/nest/index.js';

const protoPath = join(process.cwd(), 'sample/03-grpc/inventory.proto');
const url = process.env.INVENTORY_GRPC ?? '127.0.0.1:50051';

@Module({
  imports: [
    ResilienceModule.forRoot({ policies: { inventory: { preset: 'http', attempts: 3 } } }),
    ClientsModule.registerAsync([
      {
        name: 'INVENTORY',
        inject: [PolicyRegistry],
        useFactory: (registry: PolicyRegistry) => ({
          transport: Transport.GRPC,
          options: {
            package: 'shop',
            protoPath,
            url,
            channelOptions: {
              interceptors: [
                createResilienceInterceptor({
                  policy: () => registry.keyedTemplate('inventory'),
                  repeatable: ['shop.Inventory'],
                }),
              ],
            },
          },
        }),
      },
    ]),
  ],
})
export class InventoryClientModule {}
