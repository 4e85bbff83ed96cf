/** The instances scopes made for keys without a label: see {@link isUnlabeledScopeKey}. */
const unlabeledKeys = new WeakSet<object>();

/** Records that `policy` is the instance a `PolicyScope` made for a key without a dependency label. @internal */
export function markUnlabeledScopeKey(policy: object): void {
  unlabeledKeys.add(policy);
}

/**
 * Whether `policy` is the instance a `PolicyScope` made for a key without a dependency label (a
 * tenant, a user): it runs with the key's own state under the name's settings, so telemetry never
 * lets it stand for the name.
 * @internal
 */
export function isUnlabeledScopeKey(policy: object): boolean {
  return unlabeledKeys.has(policy);
}
