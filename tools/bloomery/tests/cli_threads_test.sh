#!/usr/bin/env bash
# The CLI's multi-threaded paths (a reader thread feeding workers; inserting threads that fill
# copies of the filter ORed together at the end; querying threads sharing one filter): one thread
# or several give the same filter bit for bit and the same answers. Label concurrency, so it also
# runs under ThreadSanitizer. Usage: cli_threads_test.sh PATH/TO/bloomery
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$1"

# --- threads: one thread or several, the same filter bit for bit and the same answers ------
seq 1 60000 | sed 's/^/key-/' >many.txt
seq 50001 90000 | sed 's/^/key-/' >probe.txt
for kind in bloom blocked counting; do
  run 0 build -q --kind "$kind" -n 100000 -p 0.01 --threads 1 -o one.bf many.txt
  run 0 build -q --kind "$kind" -n 100000 -p 0.01 --threads 3 -o three.bf many.txt
  cmp -s one.bf three.bf || fail "$kind: --threads 3 built a different file than --threads 1"
  run 0 query --threads 1 one.bf probe.txt
  mv out one.out
  run 0 query --threads 3 one.bf probe.txt
  cmp -s one.out out || fail "$kind: --threads 3 answered differently than --threads 1"
  grep -c . one.out >count
  (($(cat count) >= 10000)) || fail "$kind: a key of many.txt was not found (false negative)"
  run 0 add -q --threads 2 one.bf probe.txt
  run 0 build -q --kind "$kind" -n 100000 -p 0.01 --threads 1 -o both.bf many.txt probe.txt
  cmp -s one.bf both.bf || fail "$kind: add --threads 2 differs from one build of both files"
done
finish
