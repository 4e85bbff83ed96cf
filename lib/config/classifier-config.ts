import {
  Classifier,
  type ClassifierRule,
  GrpcStatus,
  type PolicyConfigError,
  Verdict,
  grpcStatusOf,
  grpcStatusRule,
  httpFactsOfError,
} from '../core/index.js';
import { HTTP_STATUS_RULE } from '../core/internal.js';
import { Problems, checkKeys, readObject } from './config-reading.js';

/**
 * A policy's classifier in config (DESIGN §4):
 * - `'default'`: the default rules (in Nest, with a thrown `HttpException` judged by its status);
 * - `'http'`: `Classifier.http` (statuses of responses and errors, `Retry-After` pushback);
 * - `'grpc'`: `Classifier.grpc` (gRPC statuses of errors, `grpc-retry-pushback-ms`, DESIGN §6; in Nest
 *   a thrown `HttpException` is still judged by its status, as under `'default'`). It is core code:
 *   configuring it needs no `@grpc/grpc-js`;
 * - an object of simple rules tried first, over `base` (`'default'` unless given): each list names
 *   errors by their `name` (`"ValidationError"`), their `code` (`"ECONNRESET"`), the HTTP status
 *   they carry (`404`) or the gRPC status they carry, by its name (`"UNAVAILABLE"`, see `GrpcStatus`),
 *   e.g. `{ base: 'http', permanent: ['ValidationError', 404], transient: ['ECONNRESET'] }` or
 *   `{ base: 'grpc', transient: ['FAILED_PRECONDITION'] }`.
 *   `permanent`: never retried, never breaker evidence; `transient`: retried, evidence; `throttled`:
 *   retried after the throttled backoff, not evidence.
 */
export type ClassifierConfig = ClassifierBase | ClassifierRulesConfig;

/** The built-in classifiers config can name, and the bases its rules can lie over. */
export type ClassifierBase = 'default' | 'http' | 'grpc';

/** The names of {@link ClassifierBase}, in the order error messages list them. */
export const CLASSIFIER_BASES: readonly ClassifierBase[] = ['default', 'http', 'grpc'];

/** The rules form of {@link ClassifierConfig}. */
export interface ClassifierRulesConfig {
  /** What decides what no rule names. Default `'default'`. */
  base?: ClassifierBase;
  /** Errors that are answers: not retried, not evidence. */
  permanent?: readonly (string | number)[];
  /** Errors that are failures worth retrying and breaker evidence. */
  transient?: readonly (string | number)[];
  /** Errors that ask us to slow down: retried after the throttled backoff, not evidence. */
  throttled?: readonly (string | number)[];
}

/** A validated classifier section: the base and the entries of each list (`[]` when absent). */
export interface ClassifierSpec {
  readonly base: ClassifierBase;
  readonly permanent: readonly (string | number)[];
  readonly transient: readonly (string | number)[];
  readonly throttled: readonly (string | number)[];
}

const LISTS = ['permanent', 'transient', 'throttled'] as const;
const KEYS = ['base', ...LISTS];
const ENTRY_RULE = `must be an error name or code (a non-empty string) or an HTTP status (${HTTP_STATUS_RULE.rule.replace(/^must be /, '')})`;

/**
 * Reads a classifier section.
 * @param value the config value
 * @param path its path (`policies.payments.classifier`)
 * @returns the spec, or the problems found: each names the path (`….permanent[1]`), the value and the rule
 */
export function parseClassifier(
  value: unknown,
  path: string,
): { spec: ClassifierSpec } | { problems: PolicyConfigError[] } {
  if (isBase(value)) return { spec: { base: value, permanent: [], transient: [], throttled: [] } };
  const problems = new Problems();
  const raw = readObject(
    problems,
    value,
    path,
    `must be ${BASE_LIST} or an object { base?, permanent?, transient?, throttled? } of error names, codes and HTTP statuses`,
  );
  if (raw === undefined) return { problems: problems.list };
  checkKeys(problems, raw, path, KEYS, 'classifier');
  const base = raw.base === undefined ? 'default' : raw.base;
  if (!isBase(base)) problems.add(`${path}.base`, base, `must be ${BASE_LIST}`);
  const seen = new Map<string | number, string>();
  const lists: Record<(typeof LISTS)[number], (string | number)[]> = {
    permanent: [],
    transient: [],
    throttled: [],
  };
  for (const list of LISTS) {
    const entries = raw[list];
    if (entries === undefined) continue;
    if (!Array.isArray(entries)) {
      problems.add(
        `${path}.${list}`,
        entries,
        'must be a list of error names, codes or HTTP statuses, e.g. ["ValidationError", 404]',
      );
      continue;
    }
    entries.forEach((entry: unknown, index) => {
      const at = `${path}.${list}[${index}]`;
      const valid =
        (typeof entry === 'string' && entry.trim().length > 0) || HTTP_STATUS_RULE.accepts(entry);
      if (!valid) {
        // A gRPC code number would read as an HTTP status nowhere: say the name the list takes.
        const grpcName =
          typeof entry === 'number' && Number.isInteger(entry)
            ? GRPC_STATUS_NAMES[entry]
            : undefined;
        problems.add(
          at,
          entry,
          grpcName === undefined
            ? ENTRY_RULE
            : `${ENTRY_RULE}; a gRPC status goes by its name: "${grpcName}" for ${entry as number}`,
        );
        return;
      }
      const earlier = seen.get(entry as string | number);
      if (earlier !== undefined)
        problems.add(at, entry, `is already listed at ${earlier}: an error can have one verdict`);
      else seen.set(entry as string | number, at);
      lists[list].push(entry as string | number);
    });
  }
  if (problems.list.length > 0) return { problems: problems.list };
  return { spec: { base: base as ClassifierBase, ...lists } };
}

const BASE_LIST = `${CLASSIFIER_BASES.slice(0, -1)
  .map((name) => `'${name}'`)
  .join(', ')} or '${CLASSIFIER_BASES.at(-1)!}'`;

function isBase(value: unknown): value is ClassifierBase {
  return CLASSIFIER_BASES.includes(value as ClassifierBase);
}

/** The rule a spec's lists describe, or `undefined` when every list is empty. Errors only. */
function listRule(spec: ClassifierSpec): ClassifierRule | undefined {
  const verdicts = new Map<string | number, Verdict>();
  for (const entry of spec.permanent) verdicts.set(entry, Verdict.permanent);
  for (const entry of spec.transient) verdicts.set(entry, Verdict.transient);
  for (const entry of spec.throttled) verdicts.set(entry, Verdict.throttled());
  if (verdicts.size === 0) return undefined;
  return (outcome) => {
    if (outcome.ok) return undefined;
    const error = outcome.error as { name?: unknown; code?: unknown } | null | undefined;
    if (error !== null && typeof error === 'object') {
      const byName = typeof error.name === 'string' ? verdicts.get(error.name) : undefined;
      if (byName !== undefined) return byName;
      const byCode =
        typeof error.code === 'string' || typeof error.code === 'number'
          ? verdicts.get(error.code)
          : undefined;
      if (byCode !== undefined) return byCode;
    }
    const status = httpFactsOfError(error)?.status;
    const byStatus = status === undefined ? undefined : verdicts.get(status);
    if (byStatus !== undefined) return byStatus;
    const grpc = grpcStatusOf(error);
    return grpc === undefined ? undefined : verdicts.get(GRPC_STATUS_NAMES[grpc.code]!);
  };
}

/** gRPC status names by code (`GRPC_STATUS_NAMES[14]` = `'UNAVAILABLE'`), for entries naming a status. */
const GRPC_STATUS_NAMES: readonly string[] = Object.entries(GrpcStatus).reduce<string[]>(
  (names, [name, code]) => {
    names[code] = name;
    return names;
  },
  [],
);

/**
 * The classifier a spec describes: its list rule first, then `Classifier.http` for base `'http'`; for
 * base `'grpc'` the gRPC status rule of `Classifier.grpc`; then, for bases `'default'` and `'grpc'`,
 * the `defaultRules` a framework adds (the Nest layer judges `HttpException`s) and the default rules.
 * Bases `'default'` and `'grpc'` judge thrown errors only (returned values stay Ok, unclassified).
 * The built-in classifier itself (`Classifier.default`, `.http`, `.grpc`) when nothing is added to it.
 * @param spec a spec from {@link parseClassifier}, or `undefined` for the default base
 * @param defaultRules error rules the hosting framework puts under the default and gRPC bases
 */
export function classifierFromSpec(
  spec: ClassifierSpec | undefined,
  defaultRules: readonly ClassifierRule[] = [],
): Classifier {
  const own = spec === undefined ? undefined : listRule(spec);
  if (spec?.base === 'http') return own === undefined ? Classifier.http : Classifier.http.with(own);
  const grpc = spec?.base === 'grpc';
  if (grpc && own === undefined && defaultRules.length === 0) return Classifier.grpc;
  const rules = [
    ...(own === undefined ? [] : [own]),
    ...(grpc ? [grpcStatusRule] : []),
    ...defaultRules,
  ];
  return rules.length === 0 ? Classifier.default : Classifier.forErrors(...rules);
}
