// docs/rate-limits.md; test/redis/nest-module.e2e-spec.ts boots it against a real Redis.
// #region nest
import { Module } from '@nestjs/common';
import { ResilienceModule } from '../../lib/nest/index.js';

@Module({
  imports: [
    ResilienceModule.forRoot({
      // Every replica: one Redis, one 500/s limit for the whole fleet.
      redis: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' },
      policies: {
        openai: {
          attempts: 3,
          limit: {
            rate: { limit: 500, per: 1000, burst: 50, shared: true, expectedInstances: 10 },
          },
        },
      },
    }),
  ],
})
export class AppModule {}
// #endregion nest
