import { HedgeState } from './hedge-state.js';
import {
  type HedgeOptions,
  type ResolvedHedgeSettings,
  hedgeSettings,
  hedgeSettingsFrom,
} from './hedge-settings.js';

/**
 * A policy's `hedge` option as a value (DESIGN §3.8): a second attempt of a repeatable call starts
 * when the first has run longer than the live `quantile` of recent successful latency (30 s window,
 * armed after 20 successes), gated so that it never adds load when it cannot help. Resolved to a
 * {@link HedgeState} per owner (a policy instance or a scope key), created on first use;
 * `Hedge.using(state)` always resolves to that state (the config layer pins one per policy name).
 */
export class Hedge {
  private readonly perOwner: WeakMap<object, HedgeState> | undefined;

  private constructor(
    /** The settings a new state gets (the pinned state's at the time, for `using`). */
    readonly settings: ResolvedHedgeSettings,
    private readonly instance?: HedgeState,
  ) {
    this.perOwner = instance === undefined ? new WeakMap() : undefined;
  }

  /**
   * Hedges at the live `quantile` of recent successful latency.
   * @param quantile in (0, 1), e.g. 0.95 (a first attempt slower than 95 % of recent successes is hedged)
   * @param options `{ maximumConcurrent = 2, suppressAt = 0.5, winRate? }` (see {@link HedgeOptions})
   * @throws PolicyConfigError naming `hedge.<field>`, the value and the rule
   */
  static at(quantile: number, options?: HedgeOptions): Hedge {
    return new Hedge(hedgeSettings(quantile, options, 'hedge'));
  }

  /** A value that always resolves to `state` (its settings are the state's). */
  static using(state: HedgeState): Hedge {
    return new Hedge(state.settings, state);
  }

  /** A per-owner hedge of `settings` (already validated). */
  static of(settings: ResolvedHedgeSettings): Hedge {
    return new Hedge(settings);
  }

  /**
   * Reads the config form (`hedge:` of a policy or of `defaults` in config).
   * @param value `{ quantile: 0.95, maximumConcurrent: 2, suppressAt: 0.5, winRate?: 0.1 }`, or
   *   `false`/`undefined` for none
   * @param field the path errors name
   * @throws PolicyConfigError naming the path, the value and the rule
   */
  static settingsFrom(value: unknown, field = 'hedge'): ResolvedHedgeSettings | undefined {
    if (value instanceof Hedge) return value.settings;
    return hedgeSettingsFrom(value, field);
  }

  /** The state for `owner`, created on first use with these settings. */
  resolve(owner: object): HedgeState {
    if (this.instance !== undefined) return this.instance;
    let state = this.perOwner!.get(owner);
    if (state === undefined) {
      state = new HedgeState(this.settings);
      this.perOwner!.set(owner, state);
    }
    return state;
  }
}
