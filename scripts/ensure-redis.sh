#!/bin/sh
# Makes sure the Redis wire tests (test/redis/) have a Redis: `npm test` runs this first.
#   - REDIS_URL set: those tests use that server (the fleet test cuts it off through a loopback proxy);
#   - else `redis-server` on PATH: the tests start their own on a free loopback port;
#   - else Debian's `redis-server` package is installed (apt-get; `apt-get update` first when the
#     package is not found), as root or through passwordless sudo.
# Fails with a message naming both ways out when it cannot: nothing is skipped silently.
set -eu

if [ -n "${REDIS_URL:-}" ]; then
  echo "ensure-redis: REDIS_URL is set (${REDIS_URL}); the Redis tests use it"
  exit 0
fi
if command -v redis-server >/dev/null 2>&1; then
  exit 0
fi

fail() {
  echo "ensure-redis: $1" >&2
  echo "ensure-redis: install Debian's package (apt-get install redis-server), or point the tests at a running Redis: REDIS_URL=redis://127.0.0.1:6379 npm test" >&2
  exit 1
}

if [ "$(id -u)" -eq 0 ]; then
  as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  as_root="sudo -n"
else
  fail "redis-server is not installed and this user cannot install it (not root, no passwordless sudo)"
fi
command -v apt-get >/dev/null 2>&1 || fail "redis-server is not installed and there is no apt-get here"

export DEBIAN_FRONTEND=noninteractive
echo "ensure-redis: redis-server not found; installing Debian's redis-server package"
if ! $as_root apt-get install -y --no-install-recommends redis-server; then
  echo "ensure-redis: not in the package lists; apt-get update, then again"
  $as_root apt-get update || fail "apt-get update failed"
  $as_root apt-get install -y --no-install-recommends redis-server || fail "apt-get install redis-server failed"
fi
command -v redis-server >/dev/null 2>&1 || fail "redis-server is still not on PATH after the install"
redis-server --version
