import { type Policy, Resilience } from '../core/index.js';

/** The ready-made policies a config can start from (`Resilience.default`, `.http`, `.conservative`). */
export type PresetName = 'default' | 'http' | 'conservative';

/** The preset names, in the order error messages list them. */
export const PRESET_NAMES: readonly PresetName[] = ['default', 'http', 'conservative'];

/** The preset policy of a name. */
export function presetPolicy(name: PresetName): Policy {
  return name === 'http'
    ? Resilience.http
    : name === 'conservative'
      ? Resilience.conservative
      : Resilience.default;
}
