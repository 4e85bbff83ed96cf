import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import {
  Ambient,
  Classifier,
  Policy,
  PolicyConfigError,
  isKeyedPolicySource,
  rejectUnknownKeys,
} from '../core/index.js';
import { BOOLEAN_RULE, checkValue, keyBoundRule, oneOfRule } from '../core/internal.js';
import { type GrpcMethod, grpcMethodOf } from './grpc-method.js';
import { ResilientCall } from './resilient-call.js';
import { ResumableCall } from './resumable-call.js';
import { type ResumeFromOption, resumersOf } from './resume-from.js';
import { type PolicySourceOption, ServicePolicies } from './service-policies.js';

/** Default of {@link ResilienceInterceptorOptions.maximumServices}: as many as the HTTP client's hosts. */
export const DEFAULT_MAXIMUM_SERVICES = 64;

/** Options of {@link createResilienceInterceptor}. */
export interface ResilienceInterceptorOptions {
  /**
   * The policy calls run under: a `Policy`; in Nest a `PolicyHandle` (`registry.handle('orders')`:
   * the name's current settings with budget and breaker per service, so a reload takes effect and
   * every service keeps its state across it, and health reports the services under the name); or a
   * function returning the current policy (`() => registry.keyedTemplate('orders')` does the same
   * without the health report — `registry.get` would hand every service the name's one pinned budget
   * and breaker). Each service gets its own instance of it (own breaker, retry budget and estimators). Calls are classified by the gRPC
   * rule first: a policy whose classifier is a preset that knows no gRPC status (`Classifier.default`,
   * or `Classifier.http` as in `Resilience.http`) runs with `Classifier.grpc`; any other classifier
   * (a Nest registry policy's, a config one) is kept under `grpcStatusRule`. To put your own rules
   * ahead of the gRPC rule, pass `classifier`.
   */
  policy: PolicySourceOption;
  /**
   * What state is kept per: `'service'` (`package.Service`, the default) or `'method'`
   * (`package.Service/Method`, for services whose methods fail independently).
   */
  scopeBy?: 'service' | 'method';
  /** The most services (or methods) holding state at once, an integer >= 1. Default 64. */
  maximumServices?: number;
  /**
   * Services (`package.Service`) and methods (`package.Service/Method`) whose unary and
   * server-streaming calls are safe to repeat, so they may be retried. Default none: see
   * {@link ResilienceInterceptorOptions.repeatableWhen}.
   */
  repeatable?: readonly string[];
  /**
   * Decides per method whether its calls may be retried; replaces `repeatable` when given.
   * Default: a method is repeatable only when it or its service is listed in `repeatable`. A gRPC
   * method's name says nothing about its effects (unlike HTTP's GET), and gRFC A6 likewise retries
   * only the methods a service config names, so nothing is repeated unless you say it is safe.
   * A call that is not repeatable makes one attempt, still guarded by the breaker and deadlines.
   */
  repeatableWhen?: (method: GrpcMethod) => boolean;
  /** Classifier for every key instead of the policy's, used as given, e.g. `Classifier.grpc.with(...rules)` (default: see `policy`). */
  classifier?: Classifier;
  /**
   * Checkpoints for server-streaming methods, keyed by `package.Service/Method`: how to re-open the
   * method's stream after the last message the client received, e.g.
   * `{ 'shop.Prices/Watch': (request, last) => ({ ...request, fromSeq: last.seq + 1 }) }`.
   * A listed method's stream follows the policy's stream rules after its first message too: a
   * mid-stream failure the classifier calls worth retrying (UNAVAILABLE, a silence longer than
   * `attemptTimeout` while the client waits) re-opens it with that request, through the same
   * budget, breaker and deadline, at most the policy's `restarts` times (default 3), each reported
   * as a `streamResumed` event; the client receives every message once, in order. A listed method is
   * repeatable (its stream may be re-opened). Unlisted streams, and entries naming a method that is
   * not server streaming, keep the default: retried until the first message only. Default none.
   */
  resumeFrom?: ResumeFromOption;
  /**
   * Send the ambient work's criticality (`x-nresilience-criticality`) with every attempt, so the
   * server can shed sheddable work first. Default false.
   */
  propagateCriticality?: boolean;
}

/** The interceptor, with access to its per-service state. */
export interface ResilienceInterceptor extends Interceptor {
  /**
   * The policy holding the state of `key` (`package.Service`, or `package.Service/Method` with
   * `scopeBy: 'method'`): read its `breaker()` and `bucket()` for health checks.
   */
  policyFor(key: string): Policy;
}

const SCOPE_BY_RULE = oneOfRule(['service', 'method']);
/** `maximumServices`: it becomes the `maximumKeys` of the services' scope. */
const MAXIMUM_SERVICES_RULE = keyBoundRule('services or methods with their own state');

const OPTION_KEYS = [
  'policy',
  'scopeBy',
  'maximumServices',
  'repeatable',
  'repeatableWhen',
  'classifier',
  'propagateCriticality',
  'resumeFrom',
];

/**
 * A grpc-js client interceptor running every unary and server-streaming call under a resilience
 * policy, with state per service (DESIGN §6):
 * - unary calls are fully protected: attempts on fresh calls, classification by `Classifier.grpc`
 *   (pushback honoured per gRFC A6), retry budget, breaker, deadlines; the client sees only the
 *   accepted attempt or the final failure;
 * - server-streaming calls are retried only until the first message; after it the consumer owns
 *   failures (no duplicate message is ever delivered), unless the method has a checkpoint in
 *   `resumeFrom`: then a mid-stream failure worth retrying re-opens the stream from the last
 *   message received, each message still delivered once, in order;
 * - client-streaming and bidi calls pass through untouched (their requests cannot be replayed);
 * - each attempt's wire deadline is min(attempt bound, the caller's own deadline, a parent call's,
 *   the inbound request's remaining time) + 50 ms, so the policy's timer fires first; a call with
 *   no time left is never put on the wire (DEADLINE_EXCEEDED at once);
 * - the first attempt of a call that may be retried carries `x-nresilience-retrying: 1`; every
 *   bounded attempt carries the time it has left as `x-nresilience-remaining-ms` (besides
 *   `grpc-timeout`), and its criticality with `propagateCriticality`;
 * - inside `Resilience.singleShot(fn)` calls make one attempt each (a repeatable one still carries
 *   the nested-retry marker: the layer above retries it);
 * - a refusal of one of our services below (UNAVAILABLE with `x-nresilience-refusal`, what the
 *   library's Nest exception filter answers) rejects the call at once with `RelayedRefusalError`
 *   as its `cause` (no retry, no second guarded pause, no breaker evidence);
 * - the inbound request's remaining time comes from the ambient context (filled by
 *   `ResilienceRpcContextInterceptor` or the HTTP inbound middleware).
 * Final failures reach the client as gRPC statuses: refusals of this process (budget, breaker) as
 * UNAVAILABLE, deadlines and attempt timeouts as DEADLINE_EXCEEDED, with the library's error as
 * the `ServiceError`'s `cause`.
 *
 * ```ts
 * const interceptor = createResilienceInterceptor({ policy: Resilience.http, repeatable: ['shop.Catalog'] });
 * const client = new CatalogClient(address, credentials.createInsecure(), { interceptors: [interceptor] });
 * ```
 * @throws PolicyConfigError naming the option, the value and the rule for invalid options
 */
export function createResilienceInterceptor(
  options: ResilienceInterceptorOptions,
): ResilienceInterceptor {
  if (options === null || typeof options !== 'object')
    throw new PolicyConfigError('options', options, 'must be an object { policy, ... }');
  rejectUnknownKeys(options, OPTION_KEYS, '', 'gRPC interceptor option');
  const {
    policy,
    scopeBy = 'service',
    maximumServices = DEFAULT_MAXIMUM_SERVICES,
    repeatable = [],
    repeatableWhen,
    classifier,
    propagateCriticality = false,
    resumeFrom,
  } = options;
  if (!(policy instanceof Policy) && typeof policy !== 'function' && !isKeyedPolicySource(policy)) {
    throw new PolicyConfigError(
      'policy',
      policy,
      'must be a Policy, a PolicyHandle (registry.handle(name)) or a function returning the current Policy',
    );
  }
  checkValue(SCOPE_BY_RULE, 'scopeBy', scopeBy);
  checkValue(MAXIMUM_SERVICES_RULE, 'maximumServices', maximumServices);
  if (
    !Array.isArray(repeatable) ||
    repeatable.some((name) => typeof name !== 'string' || name.length === 0)
  ) {
    throw new PolicyConfigError(
      'repeatable',
      repeatable,
      "must be an array of service ('package.Service') or method ('package.Service/Method') names",
    );
  }
  if (repeatableWhen !== undefined && typeof repeatableWhen !== 'function')
    throw new PolicyConfigError(
      'repeatableWhen',
      repeatableWhen,
      'must be a function (method) => boolean',
    );
  if (classifier !== undefined && !(classifier instanceof Classifier))
    throw new PolicyConfigError(
      'classifier',
      classifier,
      'must be a Classifier (e.g. Classifier.grpc.with(...rules))',
    );
  checkValue(BOOLEAN_RULE, 'propagateCriticality', propagateCriticality);
  const resumers = resumersOf(resumeFrom);

  const marked = new Set(repeatable.map((name) => name.replace(/^\//, '')));
  const isRepeatable =
    repeatableWhen ??
    ((method: GrpcMethod) => marked.has(method.service) || marked.has(method.qualified));
  const services = new ServicePolicies(policy, maximumServices, classifier);

  const interceptor = ((callOptions, nextCall) => {
    const definition = callOptions.method_definition;
    if (definition.requestStream) return new InterceptingCall(nextCall(callOptions));
    const method = grpcMethodOf(definition.path, false, definition.responseStream);
    const ambient = Ambient.current();
    const service = scopeBy === 'method' ? method.qualified : method.service;
    const resume = definition.responseStream ? resumers.get(method.qualified) : undefined;
    const plan = {
      service,
      policy: services.for(service),
      repeatable: resume !== undefined || isRepeatable(method) === true,
      singleShot: ambient?.singleShot === true,
      streaming: definition.responseStream,
      inboundRemaining: Ambient.remaining() ?? Infinity,
      criticality: propagateCriticality ? ambient?.criticality : undefined,
    };
    return new InterceptingCall(
      resume === undefined
        ? new ResilientCall(plan, callOptions, nextCall)
        : new ResumableCall(plan, callOptions, nextCall, resume),
    );
  }) as ResilienceInterceptor;
  interceptor.policyFor = (key) => services.for(key);
  return interceptor;
}
