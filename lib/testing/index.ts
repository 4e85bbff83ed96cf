/**
 * `@nresilience/nestjs/testing`: prove a policy instead of hoping (DESIGN §8).
 * Script a dependency ({@link Sequence}, {@link ScriptedFetch}), control time ({@link FakeClock}),
 * assert on intent ({@link EventRecorder}) and inject faults inside the policy ({@link Chaos}).
 */
export { FakeClock } from '../core/fake-clock.js';
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
export { Chaos, ChaosFaultError, type ChaosOptions, type ChaosFetchOptions, type ChaosStats } from './chaos.js';
export { SeededRandom, MAX_SEED } from './seeded-random.js';
