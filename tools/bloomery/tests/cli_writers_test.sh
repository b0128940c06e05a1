#!/usr/bin/env bash
# Concurrent writers of one filter file (docs/cli.md, "Concurrent writers"): processes that each
# run add, remove or merge on the same file many times take turns on its lock, so no key is lost;
# --no-wait and --wait-seconds fail with status 2 while another holder has the lock, and a writer
# without them waits. Labels cli and concurrency, so it also runs under the sanitizers.
# Usage: cli_writers_test.sh PATH/TO/bloomery
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$1"

writers=4
rounds=8
per_round=50

# keys W R: the keys writer W adds in round R, one per line (disjoint across writers and rounds).
keys() { seq 1 "$per_round" | sed "s/^/w$1-r$2-/"; }
for ((w = 0; w < writers; w++)); do
  for ((r = 0; r < rounds; r++)); do keys "$w" "$r" >"k$w-$r"; done
  cat k"$w"-* >"all$w"
done
cat all* >all
total=$((writers * rounds * per_round))

# concurrently W CMD...: runs CMD... (with @W@ and @R@ replaced by the writer and the round) in
# `rounds` rounds on each of `writers` processes at once; every run must exit 0.
concurrently() {
  n=$((n + 1))
  local w
  rm -f failed
  for ((w = 0; w < writers; w++)); do
    (
      for ((r = 0; r < rounds; r++)); do
        local args=("${@//@W@/$w}")
        args=("${args[@]//@R@/$r}")
        "$B" "${args[@]}" 2>>"err$w" || echo "writer $w round $r: bloomery ${args[*]}" >>failed
      done
    ) &
  done
  wait
  [[ ! -s failed ]] || fail "a concurrent writer failed: $(head -3 failed) $(cat err* | head -3)"
  rm -f err[0-9]*
}

# present FILE KEYS WANT: `query -c` finds WANT of the keys in KEYS.
present() {
  n=$((n + 1))
  local got
  got=$("$B" query -c "$1" "$2")
  [[ "$got" == "$3" ]] || fail "$1: $got of $(wc -l <"$2") keys of $2 present, expected $3"
}

# --- add: four writers, no key lost ------------------------------------------------------------
# The low rate keeps false positives out of the absent-key counts below.
for kind in bloom counting; do
  run 0 build -q --kind "$kind" -n 100000 -p 0.000001 -o "$kind.f" /dev/null
  concurrently add -q "$kind.f" k@W@-@R@
  present "$kind.f" all "$total"
done

# --- remove (counting): two writers remove while two add, nothing lost either way --------------
run 0 build -q --kind counting -n 100000 -p 0.000001 -o mixed.f all2 all3
present mixed.f all $((2 * rounds * per_round))
for ((w = 0; w < writers; w++)); do
  for ((r = 0; r < rounds; r++)); do
    if ((w < 2)); then echo add >"op$w-$r"; else echo remove >"op$w-$r"; fi
  done
done
n=$((n + 1))
for ((w = 0; w < writers; w++)); do
  (
    for ((r = 0; r < rounds; r++)); do
      "$B" "$(cat "op$w-$r")" -q mixed.f "k$w-$r" 2>>"err$w" || echo "writer $w round $r" >>failed
    done
  ) &
done
wait
[[ ! -s failed ]] || fail "a concurrent add or remove failed: $(head -3 failed)"
rm -f failed err[0-9]*
present mixed.f all0 $((rounds * per_round))
present mixed.f all1 $((rounds * per_round))
cat all2 all3 >removed
present mixed.f removed 0
concurrently remove -q counting.f k@W@-@R@
present counting.f all 0

# --- merge onto an existing output that is also an input ---------------------------------------
run 0 build -q -n 100000 -p 0.000001 -o merged.f /dev/null
for ((w = 0; w < writers; w++)); do
  for ((r = 0; r < rounds; r++)); do
    "$B" build -q -n 100000 -p 0.000001 -o "part$w-$r.f" "k$w-$r" || fail "build part$w-$r.f"
  done
done
concurrently merge -o merged.f merged.f part@W@-@R@.f
present merged.f all "$total"

# --- --no-wait and --wait-seconds while another process holds the lock -------------------------
if command -v flock >/dev/null; then
  run 0 build -q -n 1000 -p 0.01 -o held.f /dev/null
  cp held.f held.before
  # flock(1) takes the same flock(2) lock on the file the tool takes; `locked` says it is held,
  # and it lets go once `release` appears.
  flock held.f sh -c 'touch locked; while [ ! -e release ]; do sleep 0.05; done' &
  holder=$!
  for _ in $(seq 1 100); do [[ -e locked ]] && break || sleep 0.05; done
  [[ -e locked ]] || fail "flock did not take the lock"
  run_in 2 'late\n' add --no-wait held.f
  err_line "'held.f': another writer holds its lock; not waiting (--no-wait)"
  run_in 2 'late\n' remove --no-wait held.f
  err_line "not waiting (--no-wait)"
  run 2 merge --no-wait -o held.f held.f held.before
  err_line "not waiting (--no-wait)"
  run_in 2 'late\n' add --wait-seconds 0.3 held.f
  err_line "'held.f': another writer holds its lock; still held after 0.3 s (--wait-seconds)"
  run_in 2 'late\n' add --no-wait --wait-seconds 1 held.f
  err_line "--no-wait excludes --wait-seconds"
  run_in 2 'late\n' add --wait-seconds -1 held.f
  err_line "--wait-seconds"
  cmp -s held.f held.before || fail "a writer that gave up on the lock changed the file"
  # Without the flags a writer waits, and finishes once the holder lets go.
  echo waited | "$B" add -q held.f 2>waiter.err &
  waiter=$!
  sleep 0.3
  n=$((n + 1))
  kill -0 "$waiter" 2>/dev/null || fail "add did not wait for the lock"
  touch release
  wait "$holder"
  n=$((n + 1))
  wait "$waiter" || fail "the waiting add failed: $(cat waiter.err)"
  echo waited >waited.txt
  present held.f waited.txt 1
  run_in 0 'late\n' add -q --no-wait held.f
  run_in 2 '' add --no-wait missing.f
  err_line "'missing.f': cannot read filter file: No such file or directory"
else
  echo "flock(1) not found: the --no-wait checks are skipped"
fi
finish
