/**
 * A bad command-line argument or config value: the CLI prints the message and exits with code 2.
 * The message names the flag or field, the value and the rule, e.g.
 * `--seed: "x" is invalid: must be an integer in [0, 4294967295]`.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError';

  /**
   * @param field the flag (`--seed`) or config path (`policies.payments.attempts`)
   * @param value the value given (shown JSON-quoted; omitted when `undefined` and `rule` says why)
   * @param rule what the value must be
   */
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly rule: string,
  ) {
    super(
      `${field}: ${value === undefined ? 'missing' : `${JSON.stringify(value)} is invalid`}: ${rule}`,
    );
  }
}

/** A usage error carrying a complete, preformatted message (config files with several problems). */
export class UsageMessage extends Error {
  override readonly name = 'UsageMessage';
}
