/**
 * A policy name is not registered: thrown by `PolicyRegistry.get` (and so by a `PolicyHandle` or a
 * `@Resilient` method) and, at `app.init()`, for every name a `@Resilient` method or an `@InjectPolicy`
 * uses without a matching entry in `policies`. The message names the missing names, where they are
 * used (when known) and the registered names.
 */
export class UnknownPolicyError extends Error {
  override readonly name = 'UnknownPolicyError';

  /**
   * @param missing the unknown names
   * @param known the names registered now
   * @param usages for each missing name, where it is used (`@Resilient on PaymentsService.charge`)
   */
  constructor(
    readonly missing: readonly string[],
    readonly known: readonly string[],
    usages: ReadonlyMap<string, readonly string[]> = new Map(),
  ) {
    const list = missing.map((name) => {
      const where = usages.get(name);
      return where && where.length > 0 ? `"${name}" (${where.join(', ')})` : `"${name}"`;
    });
    const registered =
      known.length === 0
        ? 'no policies are registered'
        : `registered policies: ${known.map((n) => `"${n}"`).join(', ')}`;
    super(
      `Unknown resilience polic${missing.length === 1 ? 'y' : 'ies'} ${list.join(', ')}; ${registered}. ` +
        'Add it to ResilienceModule.forRoot({ policies: { ... } }).',
    );
  }
}
