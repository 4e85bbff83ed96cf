import { HttpException } from '@nestjs/common';
import { type ClassifierRule, httpStatusVerdict } from '../core/index.js';

/**
 * The Nest layer's rule under every registered policy's default classifier (DESIGN §4): a
 * thrown `HttpException` is judged by its status as `Classifier.http` judges one — a 404 or 400 is an
 * answer (Permanent: not retried, never breaker evidence), 408, 500, 502, 503, 504 are Transient, 429
 * is Throttled. An `HttpException` carries no `Retry-After`, so it never gives pushback.
 */
export const httpExceptionRule: ClassifierRule = (outcome) => (!outcome.ok && outcome.error instanceof HttpException ? httpStatusVerdict(outcome.error.getStatus(), undefined, 0) : undefined);
