#!/usr/bin/env bash
# Loads an installed bloomery-redis.so into a real redis-server the way docs/redis.md tells users
# to (`--loadmodule` with the installed path), on a free 127.0.0.1 port with a directory of its
# own and no persistence, and checks that it answers: BF.ADD and BF.EXISTS, and MODULE LIST naming
# the module at that path. The file must be executable first, as Redis 7 refuses any other module.
#   redis_module_check.sh MODULE WORK_DIR
# Exits 77 (the test's SKIP_RETURN_CODE) when redis-server, redis-cli or python3 is missing.
set -euo pipefail
module=$1 work=$2
fail() { echo "redis_module_check: $*" >&2; exit 1; }

[ -f "$module" ] || fail "$module is not installed"
[ -x "$module" ] ||
  fail "$module has mode $(stat -c %a "$module"): Redis 7 refuses a module it cannot execute"
for tool in redis-server redis-cli python3; do
  if ! command -v "$tool" >/dev/null; then
    echo "redis_module_check: SKIPPED: no $tool (Debian: redis-server redis-tools python3);" \
      "$module is executable but was not loaded"
    exit 77
  fi
done

rm -rf "$work" && mkdir -p "$work"
pid=""
stop() {
  if [ -n "$pid" ]; then
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    pid=""
  fi
}
trap stop EXIT
trap 'exit 1' INT TERM  # through the EXIT trap, so the server stops with the script
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# Another process may take the port between free_port and the server's bind: try a few.
port=""
for attempt in 1 2 3; do
  port=$(free_port)
  log=$work/redis-$attempt.log
  redis-server --port "$port" --bind 127.0.0.1 --dir "$work" --logfile "$log" \
    --save '' --appendonly no --loadmodule "$module" &
  pid=$!
  for _ in $(seq 50); do
    if [ "$(redis-cli -h 127.0.0.1 -p "$port" PING 2>/dev/null)" = PONG ]; then break 2; fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  stop
  if ! grep -q "Address already in use" "$log" 2>/dev/null; then
    cat "$log" >&2 || true
    fail "redis-server did not start with $module"
  fi
done
[ -n "$pid" ] || fail "no free port after three attempts"

cli() { redis-cli -h 127.0.0.1 -p "$port" "$@"; }
[ "$(cli BF.ADD k a)" = 1 ] || fail "BF.ADD k a did not answer 1"
[ "$(cli BF.EXISTS k a)" = 1 ] || fail "BF.EXISTS k a did not answer 1"
# One key in a fresh filter: with the fixed default seed "b" misses it, so the 1 above is an answer.
[ "$(cli BF.EXISTS k b)" = 0 ] || fail "BF.EXISTS k b did not answer 0"
modules=$(cli MODULE LIST)
grep -qx bloomery <<<"$modules" || fail "MODULE LIST lacks bloomery: $modules"
grep -qxF "$module" <<<"$modules" || fail "MODULE LIST does not show $module: $modules"
echo "redis_module_check: $module ($(stat -c %a "$module")) loaded and answered on port $port"
