#!/usr/bin/env bash
# bloomery-spv's input and output: transactions piped in as hex, exact lines out, errors as one
# line with the line number. Usage: spv_test.sh PATH/TO/bloomery-spv
set -u
B=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
failures=0
n=0
fail() {
  echo "FAIL [$n]: $*" >&2
  echo "  stdout: $(head -c 600 "$T/out")" >&2
  echo "  stderr: $(head -c 600 "$T/err")" >&2
  failures=$((failures + 1))
}
# run RC INPUT ARGS...: INPUT (printf %b) on standard input; checks the exit status.
run() {
  n=$((n + 1))
  local want=$1 input=$2
  shift 2
  printf '%b' "$input" | "$B" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [[ $rc == "$want" ]] || fail "bloomery-spv $* exited $rc, expected $want"
}
out_is() { [[ "$(cat "$T/out")" == "$1" ]] || fail "stdout is not '$1'"; }
err_is() { [[ "$(cat "$T/err")" == "$1" ]] || fail "stderr is not '$1'"; }

# Bitcoin Core src/test/bloom_tests.cpp, bloom_match: the transaction b4749f..., and e2769b...
# which spends its output 0.
tx=01000000010b26e9b7735eb6aabdf358bab62f9816a21ba9ebdb719d5299e88607d722c190000000008b4830450220070aca44506c5cef3a16ed519d7c3c39f8aab192c4e1c90d065f37b8a4af6141022100a8e160b856c2d43d27d8fba71e5aef6405b8643ac4cb7cb3c462aced7f14711a0141046d11fee51b0e60666d5049a9101a72741df480b96ee26488a4d3466b95c9a40ac5eeef87e10a5cd336c19a84565f80fa6c547957b7700ff4dfbdefe76036c339ffffffff021bff3d11000000001976a91404943fdd508053c75000106d3bc6e2754dbcff1988ac2f15de00000000001976a914a266436d2965547608b9e15d9032a7b9d64fa43188ac00000000
spend=01000000016bff7fcd4f8565ef406dd5d63d4ff94f318fe82027fd4dc451b04474019f74b4000000008c493046022100da0dc6aecefe1e06efdf05773757deb168820930e3b0d03f46f5fcf150bf990c022100d25b5c87040076e4f253f8262e763e2dd51e7ff0be157727c4bc42807f17bd39014104e6c26ef67dc610d2cd192484789a6cf9aea9930b944b7e2db5342b9d9e5b9ff79aff9a2ee1978dd7fd01dfc522ee02283d3b06a9d03acf8096968d7dbb0f9178ffffffff028ba7940e000000001976a914badeecfdef0507247fc8f74241d73bc039972d7b88ac4094a802000000001976a914c10932483fec93ed51f5fe95e72559f2cc7043f988ac00000000
id1=b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b
id2=e2769b09e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436
# bloom_match's filter CBloomFilter(10, 0.000001, 0, flags) holding the first output's address
# 04943fdd508053c75000106d3bc6e2754dbcff19: `bloomery bip37 --elements 10 --fpr 0.000001 --flags F
# 04943fdd508053c75000106d3bc6e2754dbcff19` (tools/bloomery/tests/cli_test.sh checks that output).
bits=2300000082000000003002000000000028002040004001600000210000010200800002001300000000000000
update_all=${bits}01
update_none=${bits}00

# UPDATE_ALL: the output matches and its outpoint joins the filter, so the spender matches too.
run 0 "$tx\n$spend\n" --filter "$update_all"
out_is "match $id1
match $id2"
err_is ""
# The filter is per run: the spender alone does not match; nor after tx under UPDATE_NONE.
run 0 "$spend\n" --filter "$update_all"
out_is "miss $id2"
run 0 "$tx\r\n\n$spend" --filter "$update_none" # CRLF, an empty line, no final newline
out_is "match $id1
miss $id2"
# Segwit serialization (marker, flag, a witness): the same txid, the witness ignored.
segwit=${tx:0:8}0001${tx:8:$((${#tx} - 16))}0201aa02bbcc${tx: -8}
run 0 "$segwit\n$spend\n" --filter "$update_all"
out_is "match $id1
match $id2"

# Errors: one line naming the input line, status 2; the lines before it were answered.
run 2 "$tx\n${spend:0:20}\n" --filter "$update_all"
out_is "match $id1"
err_is "bloomery-spv: error: line 2: the input count says 1, more than the 5 bytes left hold"
run 2 "$tx\nxyz1\n" --filter "$update_all"
err_is "bloomery-spv: error: line 2: character 1 is not a hex digit"
run 2 "\n${tx}00\n" --filter "$update_all"
err_is "bloomery-spv: error: line 2: 1 byte after the transaction's end"
run 2 "" --filter "${bits}03"
err_is "bloomery-spv: error: --filter: BIP37 filterload: nFlags = 3 is invalid; allowed are 0 (BLOOM_UPDATE_NONE), 1 (BLOOM_UPDATE_ALL) and 2 (BLOOM_UPDATE_P2PUBKEY_ONLY)"
run 2 "" --filter "${bits}"
err_is "bloomery-spv: error: --filter: BIP37 filterload: truncated: 44 bytes, but a filter of 35 bytes makes a body of 45"
run 2 ""
err_is "bloomery-spv: error: give --filter HEX (transactions on standard input) or --simulate"
run 2 "" --filter "$update_all" --json
err_is "bloomery-spv: error: --json goes with --simulate"

# --simulate: a small chain; exit status 1 would mean a missed wallet transaction.
run 0 "" --simulate --blocks 3 --block-txs 200 --json
grep -q '"example":"bloomery-spv --simulate"' "$T/out" || fail "--simulate --json: no example name"
grep -q '"wallet_transactions_found":' "$T/out" || fail "--simulate --json: no wallet row"
[[ $(wc -l <"$T/out") == 1 ]] || fail "--simulate --json: not one line"
run 0 "" --simulate --blocks 2 --block-txs 100
grep -q 'bytes downloaded' "$T/out" || fail "--simulate: no table"
run 0 "" --help
grep -q -- '--filter' "$T/out" || fail "--help lists no --filter"

echo "$n checks, $failures failures"
[[ $failures == 0 ]]
