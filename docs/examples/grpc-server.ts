// docs/grpc.md, "Server side" (the whole file); test/docs-examples.e2e-spec.ts boots the module.
import { Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { ResilienceModule, ResilienceRpcContextInterceptor } from '../../lib/nest/index.js';

@Module({
  imports: [
    // exceptionFilter: a refusal in a gRPC handler answers UNAVAILABLE with grpc-retry-pushback-ms.
    ResilienceModule.forRoot({
      policies: { stock: { preset: 'http', useAmbientDeadline: true } },
      exceptionFilter: true,
    }),
  ],
  // Reads grpc-timeout, the remaining-time and criticality metadata into the ambient context of each
  // handler, so the policies it calls (useAmbientDeadline) are bounded by the caller's time left.
  providers: [{ provide: APP_INTERCEPTOR, useClass: ResilienceRpcContextInterceptor }],
})
export class InventoryServerModule {}

// In a hybrid app, the global filter and interceptor reach the gRPC handlers only with inheritAppConfig:
// app.connectMicroservice({ transport: Transport.GRPC, options }, { inheritAppConfig: true });
