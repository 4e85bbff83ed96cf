/**
 * The lease rule of a shared rate limit as one atomic Redis script: the same GCRA arithmetic as the
 * core's `reserveLease` (one number per bucket, its theoretical arrival time `tat`), run inside Redis
 * so that concurrent processes never grant the same token. Time is Redis's own (`TIME`), so the
 * processes' clocks need not agree; every duration in and out is relative (ms).
 *
 * KEYS[1]: the bucket. ARGV: count, interval (ms per token), burst, horizon (ms).
 * Returns `{ granted, validIn, retryAfter }`, the two durations as strings (Redis turns a Lua number
 * into an integer reply, which would drop the fractions of a token's spacing).
 *
 * The key expires when its `tat` passes (an absent key is a full bucket, the same as a `tat` in the
 * past), so an idle key costs Redis nothing.
 */
export const LEASE_SCRIPT: string = `
if redis.replicate_commands then redis.replicate_commands() end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local count = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local horizon = tonumber(ARGV[4])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local base = tat > now and tat or now
local nxt = base + count * interval
local valid_in = nxt - burst * interval - now
if valid_in > horizon + 1e-6 then
  return {0, '0', string.format('%.6f', valid_in - horizon)}
end
redis.call('SET', KEYS[1], string.format('%.6f', nxt), 'PX', math.ceil(nxt - now) + 1)
if valid_in < 1e-6 then valid_in = 0 end
return {count, string.format('%.6f', valid_in), '0'}
`;
