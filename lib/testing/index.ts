/**
 * `@nresilience/nestjs/testing`: prove a policy instead of hoping (DESIGN §8).
 * Script a dependency ({@link Sequence}, {@link ScriptedFetch}), control time ({@link FakeClock}),
 * assert on intent ({@link EventRecorder}), inject faults inside the policy ({@link Chaos}), and
 * price a policy over minutes of modelled traffic ({@link Simulate}).
 *
 * @module @nresilience/nestjs/testing
 */
export { FakeClock } from '../core/index.js';
export { Sequence, type SequenceOptions, type SequenceCallContext } from './sequence.js';
export { EventRecorder } from './event-recorder.js';
export {
  ScriptedFetch,
  type ScriptedFetchOptions,
  type ScriptedResponseOptions,
  type ScriptedErrorOptions,
  type RecordedRequest,
} from './scripted-fetch.js';
export type { FetchFunction, HeaderValues, ResponseBody } from './fetch-function.js';
export {
  Chaos,
  ChaosFaultError,
  type ChaosOptions,
  type ChaosFetchOptions,
  type ChaosStats,
} from './chaos.js';
export { SeededRandom, MAX_SEED } from './seeded-random.js';
export {
  MemoryRateStore,
  type MemoryRateStoreOptions,
  type MemoryStoreMode,
  StoreUnavailableError,
} from './memory-rate-store.js';
export {
  Simulate,
  SimulationBuilder,
  SimulationReport,
  VirtualClock,
  Dependency,
  DependencyFailureError,
  DependencyOverloadedError,
  DependencyTimeoutError,
  Load,
  AdaptiveThrottle,
  AwsRetry,
  ScenarioMatrix,
  MatrixReport,
  MATRIX_SCENARIOS,
  MATRIX_RATE,
  MATRIX_VARIANTS,
  BUDGET_REFERENCES,
  MATRIX_SEEDS,
  matrixScenario,
  RECOVERY_LEVEL,
  RECOVERY_SECONDS,
  type AwsRetryMode,
  type SimulationRunOptions,
  type SecondReport,
  type SimulatedBreakerState,
  type DependencyCounters,
  type SimulationReportJSON,
  type DependencyCapacity,
  type HealthyDependencyOptions,
  type BrownoutOptions,
  type OutageOptions,
  type FaultWindow,
  type TailOptions,
  type ArrivalProcess,
  type LoadStep,
  type ConstantLoadOptions,
  type StepLoadOptions,
  type AdaptiveThrottleOptions,
  type MatrixScenario,
  type MatrixVariant,
  type MatrixOptions,
  type MatrixCell,
  type MatrixRow,
  ChainBuilder,
  ChainReport,
  HopAnswerError,
  ChainMatrix,
  ChainMatrixReport,
  CHAIN_SCENARIOS,
  CHAIN_MATRIX_RATE,
  naiveHop,
  type ChainRunOptions,
  type NestedRetryMode,
  type ChainSecond,
  type ChainReportJSON,
  type ChainScenario,
  type ChainVariant,
  type ChainMatrixOptions,
  type ChainMatrixCell,
  type ChainMatrixRow,
} from './simulation/index.js';
export {
  renderTimeSeriesChart,
  niceAxisMax,
  type TimeSeriesChart,
  type ChartPanel,
  type ChartSeries,
  type ChartBand,
} from './simulation/time-series-chart.js';
