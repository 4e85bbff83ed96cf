import { HttpException } from '@nestjs/common';
import { type ClassifierRule, WallClock, httpStatusVerdict } from '../core/index.js';
import { keptRetryAfter } from './http-exception-from.js';

/**
 * The Nest layer's rule under every registered policy's default classifier (DESIGN §4): a
 * thrown `HttpException` is judged by its status as `Classifier.http` judges one — a 404 or 400 is an
 * answer (Permanent: not retried, never breaker evidence), 408, 500, 502, 503, 504 are Transient, 429
 * is Throttled. One made by `httpExceptionFrom(response)` keeps the response's `Retry-After`, so a
 * 429 or 503 waits what the dependency asked; any other `HttpException` gives no pushback.
 */
export const httpExceptionRule: ClassifierRule = (outcome) =>
  !outcome.ok && outcome.error instanceof HttpException
    ? httpStatusVerdict(outcome.error.getStatus(), keptRetryAfter(outcome.error), WallClock.now())
    : undefined;
