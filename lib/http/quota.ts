import { PolicyConfigError } from '../core/index.js';

/**
 * Reading the quota a dependency publishes on its responses (DESIGN §5), so this process refuses
 * itself before the dependency has to: the IETF structured fields `RateLimit-Policy` / `RateLimit`
 * (draft-ietf-httpapi-ratelimit-headers: `RateLimit-Policy: "burst";q=100;w=60` and
 * `RateLimit: "burst";r=42;t=30`), the earlier drafts' `RateLimit: limit=100, remaining=42, reset=30`
 * and separate `RateLimit-Limit` / `-Remaining` / `-Reset`, and the older `X-RateLimit-Limit` /
 * `-Remaining` / `-Reset` triple. A window said to reset more than a day ahead is ignored.
 *
 * An attempt is refused locally while what is left is inside the reserve — remaining <= reserve ×
 * quota, or remaining 0 when no quota is published — until the published reset time. The attempt's
 * admission asks the host's quota (`RunOptions.quota`), so its refusal takes the executor's one
 * refusal path: the guarded pause, then `CallRejectedError { reason: 'QuotaExhausted' }` whose
 * `retryAfter` is the time to the reset, a `rejectedByQuota` event, stop reason `limited`: the request
 * is never sent, no evidence against the host's breaker, no charge on the retry budget. `RateLimit-Policy`
 * alone describes a quota but says nothing of what is left: it is never a reason to refuse. A field
 * that cannot be parsed is ignored. Per process, not per fleet: fifty pods reading one per-account
 * quota each believe they own it; only the dependency's 429 protects that shape.
 */
export class Quota {
  private constructor(
    /** Share of the published quota held back, in [0, 1). */
    readonly reserve: number,
  ) {}

  /**
   * Refuse locally once the remaining allowance is at or below `reserve` × the published quota.
   * @param reserve a fraction in [0, 1); default 0.1 (a tenth held back)
   * @throws PolicyConfigError (field `quota.reserve`) for anything else
   */
  static reserving(reserve = 0.1): Quota {
    if (typeof reserve !== 'number' || !(reserve >= 0 && reserve < 1)) {
      throw new PolicyConfigError(
        'quota.reserve',
        reserve,
        'must be a fraction in [0, 1) of the published quota to hold back',
      );
    }
    return new Quota(reserve);
  }
}

/** One published limit, as last read. `resetAt` is a reading of the policy's clock. */
interface Window {
  remaining: number;
  readonly limit: number | undefined;
  readonly resetAt: number;
}

/** The quota state of one host: the `CallQuota` (`RunOptions.quota`) its requests' admissions ask. */
export class HostQuota {
  private windows: Window[] = [];

  constructor(private readonly quota: Quota) {}

  /**
   * Ms until the host's published window resets when an attempt now would eat into the reserve;
   * `undefined` when the attempt may go. Expired windows are dropped.
   * @param now a reading of the policy's clock
   */
  refusal(now: number): number | undefined {
    if (this.windows.length === 0) return undefined;
    this.windows = this.windows.filter((window) => window.resetAt > now);
    let wait: number | undefined;
    for (const window of this.windows) {
      const floor = window.limit === undefined ? 0 : this.quota.reserve * window.limit;
      if (window.remaining <= floor) wait = Math.max(wait ?? 0, window.resetAt - now);
    }
    return wait;
  }

  /** Counts an attempt sent before its answer tells the new numbers (concurrent sends add up). */
  spend(): void {
    for (const window of this.windows) window.remaining--;
  }

  /**
   * Takes the numbers from a response's headers; a response publishing none leaves the state as it was.
   * @param now a reading of the policy's clock
   * @param wallNow ms since the epoch, for an `X-RateLimit-Reset` given as an epoch time
   */
  observe(headers: Headers, now: number, wallNow: number): void {
    const windows =
      structuredWindows(headers, now) ??
      dictionaryWindow(headers, now) ??
      legacyWindow(headers, 'x-ratelimit-', now, wallNow) ??
      legacyWindow(headers, 'ratelimit-', now, wallNow);
    if (windows !== undefined) this.windows = windows;
  }
}

/** An item of a structured-field list: its bare value and its integer parameters. */
interface Item {
  readonly name: string;
  readonly params: ReadonlyMap<string, number>;
}

const INTEGER = /^\d{1,15}$/;
// A window said to reset more than a day ahead is a sentinel or a unit mistake (ms sent as seconds, an
// epoch in ms): believing it would refuse every call to the host for years. Ignored, as the wire's
// remaining time above a day is (MAXIMUM_WIRE_REMAINING_MS).
const MAXIMUM_RESET_MS = 86_400_000;

/**
 * Parses a structured-field list of items with integer parameters (RFC 8941 §3.1), tolerantly: a
 * member that does not parse is skipped, never thrown. Several header lines arrive joined by commas.
 */
function parseList(value: string | null): Item[] {
  if (value === null) return [];
  const items: Item[] = [];
  for (const member of splitOutsideQuotes(value, ',')) {
    const [bare, ...rest] = splitOutsideQuotes(member, ';').map((part) => part.trim());
    if (bare === undefined || bare === '') continue;
    const name =
      bare.startsWith('"') && bare.endsWith('"') && bare.length >= 2 ? bare.slice(1, -1) : bare;
    const params = new Map<string, number>();
    let valid = true;
    for (const param of rest) {
      const eq = param.indexOf('=');
      const key = (eq < 0 ? param : param.slice(0, eq)).trim();
      const raw = eq < 0 ? '' : param.slice(eq + 1).trim();
      if (!INTEGER.test(raw)) {
        // A parameter we read must be an integer; other parameters (partition keys, …) are skipped.
        if (key === 'q' || key === 'r' || key === 't' || key === 'w') valid = false;
        continue;
      }
      params.set(key, Number(raw));
    }
    if (valid) items.push({ name, params });
  }
  return items;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '\\' && quoted) i++;
    else if (char === '"') quoted = !quoted;
    else if (char === separator && !quoted) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** Windows from `RateLimit` (live: `r` and `t`), with quotas from `RateLimit-Policy` (`q`) by name. */
function structuredWindows(headers: Headers, now: number): Window[] | undefined {
  const live = parseList(headers.get('ratelimit')).filter(
    (item) => item.params.has('r') && item.params.has('t'),
  );
  if (live.length === 0) return undefined;
  const quotas = new Map<string, number>();
  for (const item of parseList(headers.get('ratelimit-policy'))) {
    const q = item.params.get('q');
    if (q !== undefined && q > 0) quotas.set(item.name, q);
  }
  const windows = live
    .filter((item) => item.params.get('t')! * 1000 <= MAXIMUM_RESET_MS)
    .map((item) => ({
      remaining: item.params.get('r')!,
      limit: quotas.get(item.name),
      resetAt: now + item.params.get('t')! * 1000,
    }));
  return windows.length === 0 ? undefined : windows;
}

/**
 * The window of the earlier drafts' dictionary, `RateLimit: limit=10, remaining=0, reset=5`
 * (draft-ietf-httpapi-ratelimit-headers-07, express-rate-limit's `draft-7`): `reset` in delta seconds.
 */
function dictionaryWindow(headers: Headers, now: number): Window[] | undefined {
  const value = headers.get('ratelimit');
  if (value === null) return undefined;
  const fields = new Map<string, number>();
  for (const member of splitOutsideQuotes(value, ',')) {
    const [key, raw] = (splitOutsideQuotes(member, ';')[0] ?? '')
      .split('=')
      .map((part) => part.trim());
    if (key !== undefined && raw !== undefined && INTEGER.test(raw))
      fields.set(key.toLowerCase(), Number(raw));
  }
  const remaining = fields.get('remaining');
  const reset = fields.get('reset');
  if (
    remaining === undefined ||
    reset === undefined ||
    !(reset > 0 && reset * 1000 <= MAXIMUM_RESET_MS)
  )
    return undefined;
  const limit = fields.get('limit');
  return [
    {
      remaining,
      limit: limit !== undefined && limit > 0 ? limit : undefined,
      resetAt: now + reset * 1000,
    },
  ];
}

/**
 * The window of a `-Remaining` / `-Reset` pair with its `-Limit`: `X-RateLimit-*` (delta seconds, or
 * epoch seconds as GitHub sends) or the earlier drafts' separate `RateLimit-Limit` / `-Remaining` /
 * `-Reset` (express-rate-limit's `draft-6`).
 */
function legacyWindow(
  headers: Headers,
  prefix: string,
  now: number,
  wallNow: number,
): Window[] | undefined {
  const remaining = integerHeader(headers, `${prefix}remaining`);
  const reset = integerHeader(headers, `${prefix}reset`);
  if (remaining === undefined || reset === undefined) return undefined;
  const limit = integerHeader(headers, `${prefix}limit`);
  // Epoch seconds are above 10^9; a window of more than 31 years given as a delta is not one.
  const wait = reset > 1_000_000_000 ? reset * 1000 - wallNow : reset * 1000;
  if (!(wait > 0 && wait <= MAXIMUM_RESET_MS)) return undefined;
  return [
    { remaining, limit: limit !== undefined && limit > 0 ? limit : undefined, resetAt: now + wait },
  ];
}

function integerHeader(headers: Headers, name: string): number | undefined {
  const value = headers.get(name)?.trim();
  return value !== undefined && INTEGER.test(value) ? Number(value) : undefined;
}
