import { Logger } from '@nestjs/common';
import { type WarningSink, setWarningSink } from '../core/index.js';

/** The Nest logger context of the library's run-time warnings. */
export const WARNING_LOGGER_CONTEXT = 'NResilience';

/**
 * Run-time warnings as Nest log records at `warn`, context `NResilience`, ending with the warning's
 * code (so a log query can find every occurrence of one kind).
 */
export const nestWarningSink: WarningSink = (code, message) =>
  new Logger(WARNING_LOGGER_CONTEXT).warn(`${message} [${code}]`);

/** Routes the core's run-time warnings to the Nest logger (called when a `ResilienceModule` is created). @internal */
export function routeWarningsToNest(): void {
  setWarningSink(nestWarningSink);
}
