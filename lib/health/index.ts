/**
 * `@nresilience/nestjs/health`: the terminus health indicator. A separate entry point because it
 * imports `@nestjs/terminus` (an optional peer): `@nresilience/nestjs` itself loads without it.
 *
 * @module @nresilience/nestjs/health
 */
export {
  type BreakerHealth,
  type GuardedReadable,
  type LimiterHealth,
  type RateLimitHealth,
  DEFAULT_HEALTH_KEYS,
  type PolicyHealth,
  type PolicyHealthStatus,
  ResilienceHealthIndicator,
  type ResilienceHealthOptions,
  type ScopeReadable,
} from './resilience-health.indicator.js';
export { ResilienceHealthModule } from './resilience-health.module.js';
