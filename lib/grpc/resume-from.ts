import { PolicyConfigError } from '../core/index.js';

/**
 * How to re-open a server stream after `lastMessage`: the request to send so the server continues
 * with the message after it (an offset, a sequence number, a resume token taken from the message).
 * Called with the call's original request (as the client passed it, before serialization), the last
 * message the client received, and how many messages it has received (`lastMessage` included), for
 * every message before the client gets it, so a restart never repeats or skips one. It must return
 * the request synchronously: a throw, a non-object or a promise ends the stream at that message with
 * the error (a `PolicyConfigError` naming `resumeFrom` for the last two), so a broken checkpoint shows
 * on the first message rather than at the first restart.
 *
 * ```ts
 * const resume: ResumeFrom<TailRequest, Entry> = (request, last) => ({ ...request, from: last.seq + 1 });
 * ```
 * @typeParam Request the method's request message
 * @typeParam Message the method's response message
 */
// `any` by default so an untyped entry of `resumeFrom` still reads its messages' fields.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ResumeFrom<Request = any, Message = any> = (
  request: Request,
  lastMessage: Message,
  received: number,
) => Request;

/** The `resumeFrom` option: per method (`package.Service/Method`), how to re-open its stream. */
export type ResumeFromOption = Readonly<Record<string, ResumeFrom>>;

/**
 * Checks the `resumeFrom` option and indexes it by `package.Service/Method` (a leading `/` dropped).
 * @throws PolicyConfigError naming `resumeFrom` (or the entry) for anything but an object of functions keyed by method
 */
export function resumersOf(option: unknown): ReadonlyMap<string, ResumeFrom> {
  const resumers = new Map<string, ResumeFrom>();
  if (option === undefined) return resumers;
  if (option === null || typeof option !== 'object' || Array.isArray(option))
    throw new PolicyConfigError(
      'resumeFrom',
      option,
      "must be an object { 'package.Service/Method': (request, lastMessage, received) => nextRequest }",
    );
  for (const [name, resume] of Object.entries(option)) {
    const method = name.replace(/^\//, '');
    if (!/^[^/]+\/[^/]+$/.test(method))
      throw new PolicyConfigError(
        'resumeFrom',
        name,
        "keys must name one method as 'package.Service/Method'",
      );
    if (typeof resume !== 'function')
      throw new PolicyConfigError(
        `resumeFrom['${name}']`,
        resume,
        'must be a function (request, lastMessage, received) => the request re-opening the stream after lastMessage',
      );
    resumers.set(method, resume as ResumeFrom);
  }
  return resumers;
}
