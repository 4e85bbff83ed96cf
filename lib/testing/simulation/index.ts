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
  type TailOptions,
} from './dependency.js';
export {
  Load,
  type ArrivalProcess,
  type LoadStep,
  type ConstantLoadOptions,
  type StepLoadOptions,
} from './load.js';
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
export { AdaptiveThrottle, type AdaptiveThrottleOptions } from './adaptive-throttle.js';
export { AwsRetry, type AwsRetryMode } from './aws-retry.js';
export {
  MATRIX_SCENARIOS,
  MATRIX_RATE,
  matrixScenario,
  type MatrixScenario,
} from './matrix-scenarios.js';
export {
  ScenarioMatrix,
  MatrixReport,
  MATRIX_VARIANTS,
  BUDGET_REFERENCES,
  MATRIX_SEEDS,
  type MatrixVariant,
  type MatrixOptions,
  type MatrixCell,
  type MatrixRow,
} from './matrix.js';
export {
  ChainBuilder,
  HopAnswerError,
  type ChainRunOptions,
  type NestedRetryMode,
} from './chain.js';
export { ChainReport, type ChainSecond, type ChainReportJSON } from './chain-report.js';
export {
  ChainMatrix,
  ChainMatrixReport,
  CHAIN_SCENARIOS,
  CHAIN_MATRIX_RATE,
  naiveHop,
  type ChainScenario,
  type ChainVariant,
  type ChainMatrixOptions,
  type ChainMatrixCell,
  type ChainMatrixRow,
} from './chain-matrix.js';
export {
  runFleet,
  ProviderThrottledError,
  type FleetLimitMode,
  type FleetSetup,
  type FleetRun,
  type StoreOutage,
} from './fleet.js';
export {
  FleetMatrix,
  FleetMatrixReport,
  FLEET_SCENARIOS,
  FLEET_RATES,
  FLEET_LIMIT,
  type FleetScenario,
  type FleetMatrixOptions,
  type FleetCell,
  type FleetRow,
} from './fleet-matrix.js';
