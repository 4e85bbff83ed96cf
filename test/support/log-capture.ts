import type { LoggerService } from '@nestjs/common';

/** One record a Nest logger was given: its level, its message and the context (`NResilience.orders`). */
export type LogRecord = [level: string, message: string, context: string | undefined];

/**
 * A Nest `LoggerService` that keeps every record at every level (as Nest's default logger prints them
 * all), for tests that count log lines: `createNestApplication({ logger: capture.logger })`.
 */
export function captureLogs(): { readonly records: LogRecord[]; readonly logger: LoggerService } {
  const records: LogRecord[] = [];
  const at = (level: string) => (message: unknown, context?: string) =>
    void records.push([level, String(message), context]);
  return {
    records,
    logger: {
      log: at('log'),
      error: (message: unknown, ...rest: unknown[]) =>
        void records.push(['error', String(message), rest.at(-1) as string | undefined]),
      warn: at('warn'),
      debug: at('debug'),
      verbose: at('verbose'),
    },
  };
}
