// README "Classification" (composing with your own catch-all filter); test/catch-all-filter.e2e-spec.ts runs it.
// #region catch-all
import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { ResilienceExceptionFilter } from '../../lib/nest/index.js';

/** The application's catch-all filter, handing the library's refusals to ResilienceExceptionFilter first. */
@Catch()
export class AppExceptionsFilter implements ExceptionFilter {
  private readonly resilience: ResilienceExceptionFilter;

  constructor(private readonly adapterHost: HttpAdapterHost) {
    this.resilience = new ResilienceExceptionFilter(adapterHost);
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    // A refusal (503 + Retry-After) or a deadline (504): the library's problem+json answer.
    if (ResilienceExceptionFilter.problemFor(exception) !== undefined) {
      this.resilience.catch(exception as never, host);
      return;
    }
    // Everything else: the application's own handling.
    const status = exception instanceof HttpException ? exception.getStatus() : 500;
    const { httpAdapter } = this.adapterHost;
    httpAdapter.reply(
      host.switchToHttp().getResponse(),
      { statusCode: status, message: 'handled by the app' },
      status,
    );
  }
}
// #endregion catch-all
