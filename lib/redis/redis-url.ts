/** The rule a Redis URL must meet, as errors state it. */
export const REDIS_URL_RULE =
  'must be a redis:// or rediss:// URL with a host: redis://[[user]:password@]host[:port][/db], db an integer';

/**
 * Whether `url` is a Redis URL ioredis connects with as written: scheme `redis:` or `rediss:`, a
 * host, and a path that is empty or `/<db>` with `db` an integer. ioredis reads anything else its own
 * way (`http://host` as a host name, `/db9` as db 0) and would keep reconnecting to the wrong place
 * without an error.
 */
export function isRedisUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  return (
    (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') &&
    parsed.hostname !== '' &&
    /^(\/(\d+)?)?$/.test(parsed.pathname)
  );
}
