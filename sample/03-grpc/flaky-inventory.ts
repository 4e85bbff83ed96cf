import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { SeededRandom } from '@nresilience/nestjs/testing';

/** Where the sample's proto is, from the built file (dist-sample/sample/03-grpc) or the source. */
export const INVENTORY_PROTO = new URL('../../../sample/03-grpc/inventory.proto', import.meta.url)
  .pathname;

/**
 * A real gRPC Inventory service on 127.0.0.1 that fails a share of its calls with UNAVAILABLE,
 * independently (a seeded draw per call), and counts every call that reaches it.
 */
export class FlakyInventory {
  /** Calls that reached the service (every attempt of every logical call). */
  received = 0;

  private constructor(
    private readonly server: grpc.Server,
    /** `127.0.0.1:<port>`. */
    readonly address: string,
  ) {}

  /**
   * @param failureRate share of calls answered UNAVAILABLE, 0..1
   * @param seed seed of the failure draws
   */
  static async start(failureRate: number, seed: number): Promise<FlakyInventory> {
    const definition = protoLoader.loadSync(INVENTORY_PROTO, { keepCase: true });
    const shop = grpc.loadPackageDefinition(definition).shop as grpc.GrpcObject;
    const server = new grpc.Server();
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, bound) =>
        error ? reject(error) : resolve(bound),
      ),
    );
    const inventory = new FlakyInventory(server, `127.0.0.1:${port}`);
    const random = new SeededRandom(seed);
    server.addService((shop.Inventory as grpc.ServiceClientConstructor).service, {
      Reserve: (
        call: grpc.ServerUnaryCall<{ sku: string }, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        inventory.received++;
        if (random.next() < failureRate)
          callback({ code: grpc.status.UNAVAILABLE, details: 'inventory is flaky' });
        else callback(null, { sku: call.request.sku, attempt: inventory.received });
      },
    });
    return inventory;
  }

  /** Stops the server. */
  close(): void {
    this.server.forceShutdown();
  }
}
