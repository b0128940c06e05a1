# Shared by the CLI's integration tests: sourced with the tool's path as $1. Runs everything in a
# temporary directory (removed on exit) and counts checks and failures; call finish at the end.
set -u
B=$(realpath "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
failures=0
n=0

fail() {
  echo "FAIL [$n]: $*" >&2
  echo "  stdout: $(head -c 600 out)" >&2
  echo "  stderr: $(head -c 600 err)" >&2
  failures=$((failures + 1))
}
# run RC CMD...: runs the tool, stdout to ./out, stderr to ./err; checks the exit status.
run() {
  n=$((n + 1))
  local want=$1
  shift
  "$B" "$@" >out 2>err
  local rc=$?
  [[ $rc == "$want" ]] || fail "bloomery $* exited $rc, expected $want"
}
# run_in RC INPUT CMD...: as run, with INPUT on standard input.
run_in() {
  n=$((n + 1))
  local want=$1 input=$2
  shift 2
  printf '%b' "$input" | "$B" "$@" >out 2>err
  local rc=$?
  [[ $rc == "$want" ]] || fail "bloomery $* exited $rc, expected $want"
}
out_is() { [[ "$(cat out)" == "$1" ]] || fail "stdout is not '$1'"; }
out_has() { grep -qF -- "$1" out || fail "stdout lacks '$1'"; }
# err_is_one_line SUBSTRING: the error is exactly one line on stderr, and names SUBSTRING.
err_line() {
  [[ $(wc -l <err) == 1 ]] || fail "stderr is not exactly one line"
  grep -qF -- "$1" err || fail "stderr lacks '$1'"
}
err_empty() { [[ ! -s err ]] || fail "stderr is not empty"; }
json_ok() {
  if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; json.load(open("out"))' 2>/dev/null || fail "stdout is not JSON"
  fi
}

finish() {
  echo "$n checks, $failures failures"
  [[ $failures == 0 ]]
}
