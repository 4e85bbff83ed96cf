// Nothing recorded yet: a stop on any subject, `undefined` included, is told apart from none.
const NONE: unique symbol = Symbol('none');

/**
 * What the classifier needs to know about one outbound call: handed to its policy as
 * `RunOptions.facts`, so every attempt's classification reads it as `ClassifyContext.facts`
 * (the HTTP hosts' rule: a request not safe to repeat makes a retryable failure final), and where
 * that rule records the outcome it stopped the call on, for the transport's final error.
 */
export class CallFacts {
  /** True when the request may be sent again after any retryable failure (idempotent, or keyed). */
  readonly repeatable: boolean;
  private stoppedOn: unknown = NONE;

  /** @param repeatable see {@link CallFacts.repeatable} */
  constructor(repeatable: boolean) {
    this.repeatable = repeatable;
  }

  /** The classifier made `subject`'s (an answer's, an error's) retryable verdict final only because the request is not repeatable. */
  stopAsNotRepeatable(subject: unknown): void {
    this.stoppedOn = subject;
  }

  /** Whether the classifier stopped the call on `subject` only because the request is not repeatable. */
  stoppedAsNotRepeatable(subject: unknown): boolean {
    return this.stoppedOn === subject;
  }
}
