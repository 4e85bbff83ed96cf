// docs/streams.md; test/docs-streams.e2e-spec.ts runs it in a Nest application.
// #region nest
import { Injectable } from '@nestjs/common';
import { AttemptSignal, Resilient } from '../../lib/nest/index.js';

@Injectable()
export class Quotes {
  /** Each chunk of the quote stream as text; retried until the first chunk, a silence bounded by attemptTimeout. */
  @Resilient('quotes')
  async *ticks(url: string, @AttemptSignal() signal?: AbortSignal): AsyncGenerator<string> {
    const response = await fetch(url, { signal });
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) yield decoder.decode(chunk, { stream: true });
  }
}
// #endregion nest
