/**
 * The simulator (DESIGN §8): `Simulate.policy(p).against(Dependency…).under(Load…).for(ms).run(seed)`.
 */
export { VirtualClock } from './virtual-clock.js';
export {
  Dependency,
  DependencyFailureError,
  DependencyOverloadedError,
  DependencyTimeoutError,
  type DependencyCapacity,
  type HealthyDependencyOptions,
  type BrownoutOptions,
  type OutageOptions,
  type FaultWindow,
} from './dependency.js';
export { Load, type ArrivalProcess, type LoadStep, type ConstantLoadOptions, type StepLoadOptions } from './load.js';
export {
  SimulationReport,
  RECOVERY_LEVEL,
  RECOVERY_SECONDS,
  type SecondReport,
  type SimulatedBreakerState,
  type DependencyCounters,
  type SimulationReportJSON,
} from './report.js';
export { Simulate, SimulationBuilder, type SimulationRunOptions } from './simulate.js';
