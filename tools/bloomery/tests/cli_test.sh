#!/usr/bin/env bash
# Integration tests of the bloomery command-line tool: runs the built binary in a temporary
# directory and checks exact outputs and exit statuses. Usage: cli_test.sh PATH/TO/bloomery
source "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh" "$1"

printf 'example.com\r\n\nalpha\nbeta\n' >keys.txt # CRLF line and an empty line
printf 'example.com\nnonexistent.com\nalpha\nzzz-absent-1\n' >queries.txt

# --- build and query: the three modes and their exit statuses -------------------------------
run 0 build -n 1000 -p 0.001 -o f.bf keys.txt
err_line "wrote 'f.bf': bloom filter, 3 keys"
run 0 query f.bf queries.txt
out_is $'example.com\nalpha'
run 0 query -v f.bf queries.txt
out_is $'nonexistent.com\nzzz-absent-1'
run 0 query -c f.bf queries.txt
out_is "2"
run_in 1 'nonexistent.com\n' query f.bf -
out_is ""
run_in 1 'nonexistent.com\n' query -c f.bf
out_is "0"
run_in 1 'example.com\n' query -v f.bf
out_is ""
run_in 0 'alpha\r\n\n\nbeta' query f.bf # CRLF, empty lines, no final newline
out_is $'alpha\nbeta'
run_in 0 'example.com\n' query -q f.bf - queries.txt # stdin and a file, in order
out_is $'example.com\nexample.com\nalpha'

# keys are bytes: a non-UTF-8 key and a key with spaces
printf 'caf\xe9\nwith space\n' >bytes.txt
run 0 build -q -n 10 -p 0.001 -o bytes.bf bytes.txt
err_empty
run 0 query bytes.bf bytes.txt
[[ "$(cat out)" == "$(cat bytes.txt)" ]] || fail "byte keys do not round-trip"

# --field / --delimiter
printf 'id,name\n1,alpha\n2,beta\n' >data.csv
run 0 build -q -n 10 -p 0.001 --field 2 --delimiter , -o csv.bf data.csv
run_in 0 'alpha\nid\n1\n' query csv.bf
out_is "alpha"
run 2 build -q -n 10 -p 0.001 --field 3 --delimiter , -o csv2.bf data.csv
err_line "'data.csv' line 1: has 2 field(s), --field 3"

# --- every kind builds, answers and describes itself -----------------------------------------
for kind in bloom blocked counting cuckoo scalable static scalable-cuckoo; do
  run 0 build -q -n 1000 -p 0.001 --kind "$kind" -o "$kind.f" keys.txt
  run 1 query -v "$kind.f" keys.txt
  out_is "" # no false negatives
  run 0 info --json "$kind.f"
  json_ok
  for key in '"kind": "'$kind'"' '"bits": ' '"hashes": ' '"seed": ' '"size_in_bytes": ' \
    '"bits_per_key": ' '"capacity": ' '"inserted": 3' '"approximate_count": ' '"fill_ratio": ' \
    '"target_fpr": ' '"estimated_fpr": '; do
    out_has "$key"
  done
  err_empty
done
run 0 build -q -p 0.01 --kind static -o static2.f keys.txt # -n optional for static
run 0 info static2.f
out_has "capacity:           3"

seq 1 200 >many.txt
run 2 build -q -n 10 -p 0.01 --threads 0 -o x.bf many.txt
err_line "--threads"

# --- info: text and JSON ----------------------------------------------------------------------
run 0 info f.bf
out_has "kind:               bloom"
out_has "bits:               14378"
out_has "hashes:             10"
out_has "seed:               8751168546629708898"
out_has "capacity:           1000"
out_has "inserted:           3"
out_has "target_fpr:         0.001"
err_empty
run 0 info --json f.bf
json_ok
out_has '"kind": "bloom", "bits": 14378, "hashes": 10, "seed": 8751168546629708898'
# over capacity: a warning on stderr, never on stdout
seq 1 200 >many.txt
run 0 build -q -n 10 -p 0.01 -o over.bf many.txt
run 0 info --json over.bf
json_ok
err_line "warning: 'over.bf' holds about"
run 0 build -q -n 10 -p 0.01 --seed 42 -o seeded.bf keys.txt
run 0 info seeded.bf
out_has "seed:               42"
run 0 build -q -n 10 -p 0.01 --seed random -o keyed.bf keys.txt
run 0 info --json keyed.bf
out_has '"seed": null, "hash": "xxh3-128-keyed"'
run 0 query -c keyed.bf keys.txt
out_is "3"

# --- add (in place) ---------------------------------------------------------------------------
printf 'gamma\n' >more.txt
run 0 add f.bf more.txt
err_line "added 1 keys to 'f.bf'"
run 0 query f.bf more.txt
out_is "gamma"
run 0 info --json f.bf
out_has '"inserted": 4'
run 2 add static.f more.txt
err_line "'static.f': a static filter takes no inserts"
# a cuckoo filter that fills up: error, and the file is left as it was
run 0 build -q -n 4 -p 0.01 --kind cuckoo -o small.cf keys.txt
cp small.cf small.before
seq 1 5000 >lots.txt
run 2 add small.cf lots.txt
err_line "'small.cf': the cuckoo filter is full after"
cmp -s small.cf small.before || fail "a failed add changed the file"
# a scalable cuckoo filter grows instead: sub-filters of doubling size, every key kept
run 0 build -q -n 4 -p 0.01 --kind scalable-cuckoo -o small.scf keys.txt
run 0 add -q small.scf lots.txt
err_empty
run 1 query -v small.scf lots.txt
out_is ""
run 0 info small.scf
out_has "inserted:           5003"
out_has "sub_filters:        10"
out_has "expansion:          2"
err_line "warning: 'small.scf' holds about 5003 keys, past its capacity of 4"

# --- remove -----------------------------------------------------------------------------------
for kind in counting cuckoo scalable-cuckoo; do
  run_in 0 'alpha\n' remove -q "$kind.f"
  err_empty
  run_in 1 'alpha\n' query "$kind.f"
  run_in 0 'beta\n' query "$kind.f"
  run_in 0 'never-inserted-key\n' remove -q "$kind.f"
  err_line "1 key(s) were definitely absent"
done
for kind in bloom blocked scalable static; do
  run_in 2 'alpha\n' remove "$kind.f"
  err_line "'$kind.f': a $kind filter cannot remove keys; only counting, cuckoo and scalable-cuckoo filters can"
done

# --- merge and intersect ----------------------------------------------------------------------
printf 'a1\na2\n' >a.txt
printf 'a2\nb1\n' >b.txt
run 0 build -q -n 100 -p 0.001 -o a.bf a.txt
run 0 build -q -n 100 -p 0.001 -o b.bf b.txt
run 0 merge -o u.bf a.bf b.bf
err_empty
run_in 0 'a1\na2\nb1\nzz\n' query u.bf
out_is $'a1\na2\nb1'
run 0 intersect -o i.bf a.bf b.bf
run_in 0 'a1\na2\nb1\n' query i.bf
out_has "a2"
run 0 build -q -n 200 -p 0.001 -o c.bf a.txt
run 2 merge -o x.bf a.bf c.bf
err_line "cannot merge 'a.bf' and 'c.bf': bits differ (1438 vs 2876)"
run 0 build -q -n 100 -p 0.001 --seed 7 -o d.bf a.txt
run 2 intersect -o x.bf a.bf d.bf
err_line "cannot intersect 'a.bf' and 'd.bf': seed differs"
run 2 merge -o x.bf a.bf cuckoo.f
err_line "kinds differ (bloom vs cuckoo)"
run 2 merge -o x.bf cuckoo.f cuckoo.f
err_line "merge works on bloom, blocked, counting and scalable filters"
run 2 intersect -o x.bf counting.f counting.f
err_line "intersect works on bloom and blocked filters"
run 2 merge -o x.bf a.bf
err_line "needs at least two input filters"
[[ ! -e x.bf ]] || fail "a failed merge wrote its output"
run 0 merge -o cm.f counting.f counting.f

# --- size and advise --------------------------------------------------------------------------
run 0 size -n 5000000 -p 0.01
out_has "bloom                  5990720      9.59    0.0100392  m=47925292 k=7"
for kind in blocked counting cuckoo scalable static scalable-cuckoo; do out_has "$kind "; done
out_has "scalable-cuckoo        5925056      9.48   0.00739665  f=10 buckets0=1316674 kicks=2000"
run 0 size -n 1000 -p 0.01 --json
json_ok
out_has '{"kind": "bloom", "bytes": 1216, "bits_per_key": 9.728, "expected_fpr": 0.0100345, "parameters": "m=9586 k=7"}'
run 0 advise -n 1000000 -p 0.01 --deletes
out_has "1    cuckoo          yes"
out_has "2    scalable-cuckoo yes"
out_has "bloom           no"
run 0 advise -n 1000000 -p 0.01 --static --json
json_ok
out_has '{"rank": 1, "kind": "static", "suitable": true'
out_has '"kind": "exact set"'
# Sizing answers within moments at the edges too: the blocked filter's search once took minutes
# for 2^48 keys at 0.9999999999 (issue 26, D5). run_bounded RC CMD...: as run, under a 10 s limit
# (timeout exits 124 when it stops the tool).
run_bounded() {
  n=$((n + 1))
  local want=$1
  shift
  timeout 10 "$B" "$@" >out 2>err
  local rc=$?
  [[ $rc == "$want" ]] || fail "bloomery $* exited $rc, expected $want (124: timed out)"
}
run_bounded 0 size -n 281474976710656 -p 0.9999999999
grep -qE '^blocked +[0-9]+ +0\.04 .* k=1$' out || fail "size: no 1-probe blocked plan of 0.04 bits/key"
out_has "static                       -"
err_empty
run_bounded 0 advise -n 281474976710656 -p 0.9999999999 --json
json_ok
out_has '"kind": "blocked", "suitable": true'
err_empty

# --- errors: one line on stderr naming the culprit, exit status 2 -----------------------------
run 2 build -n 0 -p 0.01 -o x.bf keys.txt
err_line "-n = 0 is invalid"
for p in 0 1 1.5 -0.1; do
  run 2 build -n 10 -p "$p" -o x.bf keys.txt
  err_line "-p"
done
run 2 build -n 10 -p 0.01 --kind nope -o x.bf keys.txt
err_line "--kind: nope not in"
run 2 build -n 10 -p 0.01 -o x.bf missing.txt
err_line "'missing.txt': cannot open key file: No such file or directory"
run 2 build -p 0.01 -o x.bf keys.txt
err_line "-n: the key capacity is required"
run 2 build -n abc -p 0.01 -o x.bf keys.txt
err_line "--capacity"
run 2 build -n 10 -p 0.01 --seed xyz -o x.bf keys.txt
err_line "--seed: 'xyz'"
run 2 build -n 10 -p 0.01 keys.txt
err_line "--output"
run 2 size -n 0 -p 0.01
err_line "-n = 0 is invalid"
run 2 advise -n 10 -p 2
err_line "-p = 2 is invalid"
[[ ! -e x.bf ]] || fail "a failed build wrote its output"
run 2 query missing.bf keys.txt
err_line "'missing.bf': cannot read filter file: No such file or directory"
run 2 info keys.txt
err_line "'keys.txt': not a bloomery filter file (bad magic)"
run 2 query f.bf missing.txt
err_line "'missing.txt': cannot open key file"
: >empty.bf
run 2 info empty.bf
err_line "'empty.bf': file is empty"
head -c 100 f.bf >short.bf
run 2 info short.bf
err_line "'short.bf': file is truncated"
size=$(stat -c %s f.bf)
head -c $((size - 64)) f.bf >trunc.bf
cp trunc.bf trunc.before
run 2 query trunc.bf keys.txt
err_line "'trunc.bf': file is truncated"
run 2 add trunc.bf more.txt
err_line "'trunc.bf': file is truncated"
cmp -s trunc.bf trunc.before || fail "add to a truncated file changed it"
cp f.bf corrupt.bf
printf '\xff' | dd of=corrupt.bf bs=1 seek=200 conv=notrunc status=none
run 2 info corrupt.bf
err_line "'corrupt.bf': checksum mismatch: the file is corrupted"
run 2 bogus
err_line "'bogus': unknown command"
run 2
err_line "subcommand is required"
run 2 query --nope f.bf
err_line "--nope"

# --- progress: never drawn when standard error is not a terminal ----------------------------
seq 1 300000 | sed 's|^|https://example.com/p/|' >many.txt
run 0 build -n 300000 -p 0.01 -o many.bf many.txt
err_line "wrote 'many.bf': bloom filter, 300000 keys"
run 0 query -c many.bf many.txt
out_is "300000"
err_empty
run 0 add many.bf many.txt
err_line "added 300000 keys"
run 0 build -q --kind counting -n 300000 -p 0.01 -o many.cbf many.txt
err_empty
run 0 remove -q many.cbf many.txt
err_empty
if command -v script >/dev/null && script -qc true /dev/null >/dev/null 2>&1; then
  # on a terminal (script(1) gives one), -q still silences everything on standard error
  n=$((n + 1))
  script -qc "'$B' query -c -q many.bf many.txt" /dev/null >tty.out 2>&1 </dev/null
  [[ "$(tr -d '\r' <tty.out)" == "300000" ]] || fail "query -q on a terminal printed more: $(cat -v tty.out)"
fi

# --- explain ----------------------------------------------------------------------------------
run 0 explain -m 32 -k 3 example.com --query example.com nonexistent.com
expected="An empty Bloom filter of m = 32 bits with k = 3 hash functions.
  bits: 00000000000000000000000000000000

insert 'example.com': its 3 hashes give bits 21, 9, 28; set them to 1.
  bits: 00000000010000000000010000001000

query 'example.com': bits 21, 9, 28
  bit 21 is 1 (set by 'example.com')
  bit 9 is 1 (set by 'example.com')
  bit 28 is 1 (set by 'example.com')
  -> possibly present: all 3 bits are 1. They may have been set by other keys (a false positive); the filter cannot tell.

query 'nonexistent.com': bits 27, 13, 31
  bit 27 is 0
  bit 13 is 0
  bit 31 is 0
  -> definitely not present: bits 27, 13, 31 are 0, and every inserted key sets all of its bits."
out_is "$expected"
run 0 explain a.bf --query a1 zz
out_has "The Bloom filter 'a.bf': m = 1438 bits, k = 10 hash functions"
out_has "query 'a1': bits"
out_has "-> possibly present: all 10 bits are 1."
out_has "-> definitely not present"
# a blocked filter: the block and the bits inside it; the answers agree with query
printf 'a1\na2\n' >bk.txt
run 0 build -q --kind blocked -n 100 -p 0.01 -o bk.bf bk.txt
run 0 explain bk.bf --query a1 a2 zz-absent
out_has "The blocked Bloom filter 'bk.bf': 2 blocks of 512 bits, k = 5 bits per key in one block"
[[ $(grep -c -- "-> possibly present: all 5 bits of block" out) -ge 2 ]] || fail "blocked explain: a1, a2 not possibly present"
run_in 1 'zz-absent\n' query bk.bf
run 0 explain bk.bf --query zz-absent
out_has "-> definitely not present"
run 0 explain bk.bf zz-absent --query zz-absent # inserted in memory only
out_has "insert 'zz-absent': block "
out_has "-> possibly present"
run_in 1 'zz-absent\n' query bk.bf # the file is unchanged
# The other kinds. verdict KEY: the "-> ..." line explain printed for --query KEY (from ex.out).
verdict() { awk -v q="query '$1'" '$0 == q || index($0, q ":") == 1 {on = 1} on && /^  -> / {print; exit}' ex.out; }
# explain_agrees FILE KEY...: for each --query KEY, explain's verdict is what 'bloomery query' says.
explain_agrees() {
  local file=$1 key v
  shift
  for key in "$@"; do
    n=$((n + 1))
    v=$(verdict "$key")
    if printf '%s\n' "$key" | "$B" query "$file" >/dev/null 2>&1; then
      [[ $v == "  -> possibly present"* ]] || fail "explain $file: query finds '$key', explain says '$v'"
    else
      [[ $v == "  -> definitely not present"* ]] || fail "explain $file: query lacks '$key', explain says '$v'"
    fi
  done
}
# possibly KEY / definitely_not KEY: explain's verdict for --query KEY.
possibly() { [[ $(verdict "$1") == "  -> possibly present"* ]] || fail "explain: '$1' is not possibly present"; }
definitely_not() { [[ $(verdict "$1") == "  -> definitely not present"* ]] || fail "explain: '$1' is not definitely absent"; }
for kind in counting cuckoo scalable static scalable-cuckoo; do
  run 0 build -q --kind "$kind" -n 100 -p 0.01 -o "ex-$kind.f" bk.txt
  run_in 0 'a1\n' query "ex-$kind.f"
  run_in 1 'zz-absent\n' query "ex-$kind.f"
done
# counting: the k counters of each key and their values
run 0 explain ex-counting.f new1 --query new1 a1 a2 zz-absent
cp out ex.out
err_empty
out_has "The counting Bloom filter 'ex-counting.f': m = "
out_has "insert 'new1': its "
grep -qE "^  counter [0-9]+: 0 -> 1$" out || fail "counting explain: no 'counter N: 0 -> 1' line"
out_has "query 'a1': counters "
grep -qE "^  counter [0-9]+ is 0$" out || fail "counting explain: no 'counter N is 0' line"
out_has "-> definitely not present: counter"
possibly new1
possibly a1
definitely_not zz-absent
explain_agrees ex-counting.f a1 a2 zz-absent
# cuckoo: fingerprint, the two buckets, how i2 follows from i1, the bucket contents
run 0 explain ex-cuckoo.f new1 --query new1 a1 a2 zz-absent
cp out ex.out
err_empty
out_has "The cuckoo filter 'ex-cuckoo.f': "
grep -qE "^insert 'new1': fingerprint [0-9]+ \([0-9]+ bits, never 0\), i1 = [0-9]+, i2 = [0-9]+\.$" out ||
  fail "cuckoo explain: no fingerprint/i1/i2 line for the insert"
out_has "i2 = (t - i1) mod "
grep -qE "^  bucket [0-9]+: \[[-0-9, ]+\] <- holds [0-9]+$" out || fail "cuckoo explain: no bucket contents"
grep -qE "^query 'zz-absent': fingerprint [0-9]+, buckets i1 = [0-9]+ and i2 = [0-9]+$" out ||
  fail "cuckoo explain: no query line"
possibly new1
possibly a1
definitely_not zz-absent
explain_agrees ex-cuckoo.f a1 a2 zz-absent
# a cuckoo filter large enough for semi-sorted buckets: explain must decode them
run 0 build -q --kind cuckoo -n 5000 -p 0.01 -o ex-cuckoo-ss.f bk.txt
run 0 info ex-cuckoo-ss.f
out_has "semi_sorted:        yes"
run 0 explain ex-cuckoo-ss.f --query a1 a2 zz-absent
cp out ex.out
grep -qE "^  bucket [0-9]+: \[[-0-9, ]+\] <- holds [0-9]+$" out || fail "semi-sorted: no bucket holds a1"
possibly a1
explain_agrees ex-cuckoo-ss.f a1 a2 zz-absent
# scalable: the sub-filter each insert goes to; the sub-filters probed, newest first
run 0 explain ex-scalable.f new1 a1 --query new1 a1 a2 zz-absent
cp out ex.out
err_empty
out_has "The scalable Bloom filter 'ex-scalable.f': 1 sub-filter"
out_has "insert 'new1': goes to the newest, sub-filter 0; its "
out_has "insert 'a1': sub-filter 0 already answers \"possibly present\"; not inserted again"
grep -qE "^  sub-filter 0: bits [0-9, ]+ -> bits? [0-9, ]+ (is|are) 0: not here$" out ||
  fail "scalable explain: no sub-filter probe line with a 0 bit"
out_has "-> possibly present: sub-filter 0 answered"
possibly new1
possibly a1
definitely_not zz-absent
explain_agrees ex-scalable.f a1 a2 zz-absent
printf 'a1\na2\na3\n' >sc.txt # capacity 2: the third key starts sub-filter 1
run 0 build -q --kind scalable -n 2 -p 0.01 -o sc2.f sc.txt
run 0 explain sc2.f --query a1 a2 a3 zz-absent
cp out ex.out
out_has "The scalable Bloom filter 'sc2.f': 2 sub-filters"
out_has "  sub-filter 1: bits "
out_has "  sub-filter 0: bits "
explain_agrees sc2.f a1 a2 a3 zz-absent
# scalable cuckoo: the sub-filter each insert goes to (a new one when the newest is full); the
# copies of a query's fingerprint in each sub-filter, newest first
run 0 explain ex-scalable-cuckoo.f new1 --query new1 a1 a2 zz-absent
cp out ex.out
err_empty
out_has "The scalable cuckoo filter 'ex-scalable-cuckoo.f': 1 sub-filter of 4-slot buckets (expansion 2, at most 32), fingerprints of f = 10 bits, 2 stored."
out_has "insert 'new1': goes to the newest, sub-filter 0: "
grep -qE "^query 'zz-absent': fingerprint [0-9]+; look for it in the key's two buckets" out ||
  fail "scalable cuckoo explain: no query line"
grep -qE "^  sub-filter 0, buckets [0-9]+ and [0-9]+: 0 copies -> not here$" out ||
  fail "scalable cuckoo explain: no sub-filter line without a copy"
grep -qE "^  sub-filter 0, buckets [0-9]+ and [0-9]+: 1 copy -> possibly here$" out ||
  fail "scalable cuckoo explain: no sub-filter line with a copy"
possibly new1
possibly a1
definitely_not zz-absent
explain_agrees ex-scalable-cuckoo.f a1 a2 zz-absent
run 0 build -q --kind scalable-cuckoo -n 1 -p 0.01 -o scc1.f sc.txt # one sub-filter of 2 buckets
run 0 explain scc1.f k1 k2 k3 k4 k5 k6 k7 k8 --query a1 a3 k8 zz-absent
cp out ex.out
out_has "add sub-filter 1 (4 buckets, 2 times the last) and store the key's fingerprint there"
possibly a1
possibly k8
explain_agrees scc1.f a1 a3 zz-absent # (k8 is inserted in memory only)
seq 1 40 | sed 's/^/k/' >k40.txt
run 0 build -q --kind scalable-cuckoo -n 2 -p 0.01 -o scc2.f k40.txt
run 0 explain scc2.f --query k1 k20 k40 zz-absent
cp out ex.out
out_has "The scalable cuckoo filter 'scc2.f': 3 sub-filters"
out_has "  sub-filter 1 (4 buckets, 17 fingerprints stored, sized for 4 keys, full: its stash is in use)"
explain_agrees scc2.f k1 k20 k40 zz-absent
# static: no inserts; each query's fingerprint, three slots and their XOR
run 0 explain ex-static.f --query a1 a2 zz-absent
cp out ex.out
err_empty
out_has "The static (binary fuse) filter 'ex-static.f': 2 keys, 7-bit fingerprints in 12 slots (3 segments of 4, 3 per key)"
grep -qE "^query 'a1': fingerprint 0x[0-9a-f]{2}, slots [0-9]+, [0-9]+, [0-9]+ \(segments [0-9]+, [0-9]+, [0-9]+\)$" out ||
  fail "static explain: no fingerprint/slots line"
grep -qE "^  slot [0-9]+ holds 0x[0-9a-f]{2}$" out || fail "static explain: no slot value line"
grep -qE "^  XOR of the three slots: 0x[0-9a-f]{2} \^ 0x[0-9a-f]{2} \^ 0x[0-9a-f]{2} = 0x[0-9a-f]{2}$" out ||
  fail "static explain: no XOR line"
possibly a1
definitely_not zz-absent
explain_agrees ex-static.f a1 a2 zz-absent
# four packed 10-bit slots per key (40 keys at 0.1%)
run 0 build -q --kind static -p 0.001 -o ex-static4.f k40.txt
run 0 explain ex-static4.f --query k1 k40 zz-absent
cp out ex.out
out_has "The static (binary fuse) filter 'ex-static4.f': 40 keys, 10-bit fingerprints in 76 slots (19 segments of 4, 4 per key)"
grep -qE "^query 'k1': fingerprint 0x[0-9a-f]{3}, slots [0-9]+, [0-9]+, [0-9]+, [0-9]+ \(segments [0-9]+, [0-9]+, [0-9]+, [0-9]+\)$" out ||
  fail "static explain: no four-slot fingerprint/slots line"
grep -qE "^  XOR of the four slots: 0x[0-9a-f]{3} \^ 0x[0-9a-f]{3} \^ 0x[0-9a-f]{3} \^ 0x[0-9a-f]{3} = 0x[0-9a-f]{3}$" out ||
  fail "static explain: no four-slot XOR line"
explain_agrees ex-static4.f k1 k40 zz-absent
run 0 info --json ex-static4.f
out_has '"fingerprint_bits": 10'
out_has '"arity": 4'
run 2 explain ex-static.f a1 --query a1 # a static filter takes no inserts
err_line "'ex-static.f': a static filter takes no inserts, so explain cannot insert 'a1'; give the keys to test with --query"
run 2 explain -m 32 x
err_line "-m and -k go together"
run 2 explain -m 0 -k 3 x
err_line "-m = 0 is invalid"

# Every kind of the kind table (as `build --help` lists it) builds, explains and agrees with
# query: a kind added to the table without a way through build or explain fails here.
run 0 build --help
table_kinds=$(sed -n 's/.*--kind TEXT:{\([^}]*\)}.*/\1/p' out | tr ',' ' ')
[[ $(wc -w <<<"$table_kinds") -ge 7 ]] || fail "build --help lists no kinds: '$table_kinds'"
for kind in $table_kinds; do
  run 0 build -q --kind "$kind" -n 1000 -p 0.01 -o "every-$kind.f" bk.txt
  run 0 explain "every-$kind.f" --query a1 zz-absent
  cp out ex.out
  explain_agrees "every-$kind.f" a1 zz-absent
  run 0 info --json "every-$kind.f"
  out_has "\"kind\": \"$kind\""
done

# --- file safety: private keyed files, kept modes, header-first reads, huge sizes -----------
mode_is() { [[ $(stat -c %a "$1") == "$2" ]] || fail "mode of $1 is $(stat -c %a "$1"), expected $2"; }
(
  umask 022
  "$B" build -q -n 10 -p 0.01 --seed random -o secret.bf keys.txt
  "$B" build -q -n 10 -p 0.01 -o plain.bf keys.txt
  "$B" build -q -n 10 -p 0.01 --kind counting --seed random -o secret.cbf keys.txt
)
n=$((n + 1))
mode_is secret.bf 600 # the file holds the secret key
mode_is plain.bf 644
chmod 644 secret.bf
run 0 add -q secret.bf more.txt
mode_is secret.bf 600 # a save never leaves a key readable by others
chmod 644 secret.cbf
run 0 remove -q secret.cbf more.txt
mode_is secret.cbf 600
run 0 build -q -n 10 -p 0.01 --seed random -o keyed2.bf keys.txt
chmod 644 keyed2.bf
run 0 merge -o secret.bf secret.bf secret.bf
mode_is secret.bf 600
chmod 640 plain.bf
run 0 add -q plain.bf more.txt
mode_is plain.bf 640 # a seeded filter keeps the mode it had
ls -a | grep -q '\.tmp\.' && fail "a temporary file was left behind"
cp plain.bf holey.bf
truncate -s 64G holey.bf # a 64 GiB hole after a good filter: refused by the header alone
run 2 info holey.bf
err_line "'holey.bf': file has 68719476736 bytes, header says"
truncate -s 0 holey.bf
truncate -s 3G holey.bf # zeros: not a filter, found without reading 3 GiB
run 2 info holey.bf
err_line "'holey.bf': not a bloomery filter file (bad magic)"
rm -f holey.bf
# 2^40 keys: valid, but 1.2 TiB. Under ASan the allocator must return null as malloc does, not
# abort on the size.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}allocator_may_return_null=1 \
  run 2 build -q -n 1099511627776 -p 0.01 -o huge.bf keys.txt
# The error is the last line (ASan adds a warning of its own before it).
[[ $(tail -n 1 err) == "bloomery: error: cannot allocate 1317360392384 bytes for a filter's storage" ]] ||
  fail "the last line of stderr is not the allocation error"
[[ -e huge.bf ]] && fail "a failed build left huge.bf"

# --- bip37: Bitcoin BIP37 filters, byte-exact with Bitcoin Core -------------------------------
# Bitcoin Core src/test/bloom_tests.cpp, bloom_create_insert_serialize and ..._with_tweak.
e1=99108ad8ed9bb6274d3980bab5a85c048f0950c8
e2=b5a2c786d9ef4658287ced5914b37a1b4aa32eee
e3=b9300670b4c5366e95b2699e8b18bc75e5f729c5
run 0 bip37 --elements 3 --fpr 0.01 --tweak 0 --flags 1 $e1 $e2 $e3
out_is "03614e9b050000000000000001"
err_empty
run 0 bip37 --elements 3 --fpr 0.01 --tweak 2147483649 --flags 1 $e1 $e2 $e3
out_is "03ce4299050000000100008001"
err_empty
run 0 bip37 --elements 3 --fpr 0.01 --tweak 0x80000001 --flags 1 $e1 $e2 $e3
out_is "03ce4299050000000100008001"
# bloom_create_insert_key: the public key of its WIF secret and that key's HASH160.
pub=045b81f0017e2091e2edcd5eecf10d5bdd120a5514cb3ee65b8447ec18bfc4575c6d5bf415e54e03b1067934a0f0ba76b01c6b9ab227142ee1d543764b69d901e0
run 0 bip37 --elements 2 --fpr 0.001 --flags 1 $pub 477abbacd4113f2e6b100526222eedd953c26a64
out_is "038fc16b080000000000000001"
# The filter bloomery-spv's test loads (examples/spv_wallet/tests): bloom_match's output address.
run 0 bip37 --elements 10 --fpr 0.000001 --flags 1 04943fdd508053c75000106d3bc6e2754dbcff19
out_is "230000008200000000300200000000002800204000400160000021000001020080000200130000000000000001"
# Queries: one line per element, in order; upper-case hex is accepted.
run 0 bip37 --filter 03614e9b050000000000000001 --contains $e1 19108ad8ed9bb6274d3980bab5a85c048f0950c8 $e3 B9300670B4C5366E95B2699E8B18BC75E5F729C5
out_is $'yes\nno\nyes\nyes'
err_empty
# No false negatives: 200 elements in, every one answered yes.
mapfile -t elems < <(for i in $(seq 1 200); do printf '%08x%s\n' "$i" "$(printf 'k%d' "$i" | od -An -tx1 | tr -d ' \n')"; done)
run 0 bip37 --elements 200 --fpr 0.01 --tweak 7 "${elems[@]}"
filter=$(cat out)
run 0 bip37 --filter "$filter" --contains "${elems[@]}"
[[ $(grep -c '^yes$' out) == 200 ]] || fail "bip37: an inserted element was answered no"
run 0 bip37 --elements 20 --fpr 0.5 # no elements; P = 0.5 gives 3 bytes and 0 hash functions
out_is "03000000000000000000000000"
# Errors: one line on standard error, nothing on standard output, status 2.
bip37_err() { # bip37_err MESSAGE ARGS...
  local message=$1
  shift
  run 2 bip37 "$@"
  out_is ""
  err_line "$message"
}
bip37_err "bloomery: error: element 2 'abc': odd number of hex digits (3)" --elements 3 --fpr 0.01 00 abc
bip37_err "element 1 'zz': 'z' at position 1 is not a hex digit" --elements 3 --fpr 0.01 zz
bip37_err "--elements = 0 is invalid; allowed range is [1, 4294967295]" --elements 0 --fpr 0.01
bip37_err "--elements = 4294967296 is invalid; allowed range is [1, 4294967295]" --elements 4294967296 --fpr 0.01
bip37_err "--fpr = 1 is invalid; allowed range is (0, 1), exclusive" --elements 3 --fpr 1
bip37_err "--fpr: 'x' is not a number" --elements 3 --fpr x
bip37_err "--tweak = 4294967296 is invalid; allowed range is [0, 4294967295]" --elements 3 --fpr 0.01 --tweak 4294967296
bip37_err "--tweak: '-1' is not an unsigned number" --elements 3 --fpr 0.01 --tweak -1
bip37_err "--flags = 3 is invalid; allowed are 0 (BLOOM_UPDATE_NONE), 1 (BLOOM_UPDATE_ALL) and 2 (BLOOM_UPDATE_P2PUBKEY_ONLY)" --elements 3 --fpr 0.01 --flags 3
bip37_err "--elements and --fpr go together" --elements 3
bip37_err "give --elements and --fpr to build a filter, or --filter to query one"
bip37_err "--filter: BIP37 filterload: truncated: 12 bytes, but a filter of 3 bytes makes a body of 13" --filter 03614e9b0500000000000000 --contains 00
bip37_err "--filter: BIP37 filterload: trailing bytes: 14 bytes" --filter 03614e9b05000000000000000100 --contains 00
bip37_err "--filter: BIP37 filterload: filter of 36001 bytes is over the BIP37 maximum of 36000" --filter fda18c --contains 00
bip37_err "--filter: BIP37 filterload: nHashFuncs = 51 is over the BIP37 maximum of 50" --filter 03614e9b330000000000000001 --contains 00
bip37_err "--filter: BIP37 filterload: nFlags = 3 is invalid" --filter 03614e9b050000000000000003 --contains 00
bip37_err "--filter: odd number of hex digits (3)" --filter 036 --contains 00
bip37_err "--contains element 2 '0': odd number of hex digits (1)" --filter 03614e9b050000000000000001 --contains 00 0
bip37_err "--filter needs --contains HEX..." --filter 03614e9b050000000000000001
bip37_err "--filter and --elements exclude each other" --filter 03614e9b050000000000000001 --elements 3 --contains 00
bip37_err "--contains needs --filter" --elements 3 --fpr 0.01 --contains 00

# --- --format guava: Guava BloomFilter streams (tests/guava checks them against Guava itself) ---
# Guava 31.1 wrote this stream for create(stringFunnel(UTF_8), 20, 0.05) after putting the fruits.
printf 'apple\nbanana\ncherry\ndurian\n' >fruits.txt
run 0 build --format guava --funnel string -n 20 -p 0.05 -q -o fruits.guava fruits.txt
[[ $(od -An -tx1 -v fruits.guava | tr -d ' \n') == 01040000000202100000080402812080048100401020 ]] ||
  fail "fruits.guava is not the stream Guava wrote"
run_in 0 'apple\nkiwi\ndurian\n' query --format guava --funnel string fruits.guava
out_is $'apple\ndurian'
run_in 0 'apple\nkiwi\n' query --format guava --funnel string -v -c fruits.guava
out_is 1
run 0 info --format guava fruits.guava
out_has "strategy:           MURMUR128_MITZ_64"
out_has "approximate_count:  4"
run 0 info --format guava --json fruits.guava
json_ok
out_has '"hashes": 4, "bits": 128, "size_in_bytes": 22, "bits_set": 15'
printf '1\n-9223372036854775808\n+7\n' >ids.txt
run 0 build --format guava --funnel long -n 10 -p 0.01 -q -o ids.guava ids.txt
run_in 0 '7\n-9223372036854775808\n' query --format guava --funnel long -c ids.guava
out_is 2
guava_err() { run 2 "${@:2}"; err_line "$1"; }
guava_err "'ids.txt' line 2: '-9223372036854775808' is not a 32-bit signed decimal integer" \
  build --format guava --funnel int -n 10 -p 0.01 -o x.guava ids.txt
printf '5\n\n2147483648\n' >big.txt
guava_err "'big.txt' line 3: '2147483648' is not a 32-bit" query --format guava --funnel int ids.guava big.txt
guava_err "line 1: not valid UTF-8 at byte 2" query --format guava --funnel chars fruits.guava <(printf 'a\xff\n')
guava_err "--funnel applies only with --format guava" query --funnel long ids.guava ids.txt
guava_err "--format guava needs --funnel" query --format guava ids.guava ids.txt
guava_err "--kind and --seed do not apply to --format guava" build --format guava --funnel int --kind blocked -n 1 -p 0.1 -o x.guava ids.txt
guava_err "Guava cannot create a BloomFilter of 0 bits" build --format guava --funnel string -n 1 -p 0.99 -o x.guava fruits.txt
head -c 10 fruits.guava >short.guava
guava_err "'short.guava': Guava stream: 2 words declared, so 22 bytes, but it has 10 (truncated)" query --format guava --funnel string short.guava fruits.txt
cp fruits.guava bad.guava
printf '\x02' | dd of=bad.guava bs=1 count=1 conv=notrunc 2>/dev/null
guava_err "'bad.guava': Guava stream: unknown strategy ordinal 2" info --format guava bad.guava
guava_err "'fruits.guava': not a bloomery filter file" query fruits.guava fruits.txt
[[ ! -e x.guava ]] || fail "a refused build left x.guava behind"

# --- parquet: Bloom filters of a Parquet file DuckDB wrote (tests/parquet checks them against
# DuckDB itself; tests/data/parquet/expected.json holds DuckDB's answers for this file) -------------
PQ="$(dirname "${BASH_SOURCE[0]}")/../../../tests/data/parquet/golden.parquet"
run 0 parquet info "$PQ"
[[ $(wc -l <out) == 18 ]] || fail "parquet info: not 18 lines (3 row groups x 6 columns)"
out_has $'0\ts\tBYTE_ARRAY\tyes\t8230\t80\t2'
out_has $'2\tpart\tINT32\tno\t-\t-\t-'
run 0 parquet info --json "$PQ"
json_ok
run 0 parquet probe --column i64 "$PQ" -- -1
out_is $'-1\t0\tabsent\n-1\t1\tmaybe\n-1\t2\tabsent'
run_in 1 'zzz-not-there\n' parquet probe --column s "$PQ"
run 0 parquet probe --column part "$PQ" 999999
out_has $'999999\t2\tno-filter'
run 0 parquet probe --column s --json "$PQ" k7
json_ok
out_has '"results": [{"key": "k7", "row_group": 0, "result": "maybe"}'
pq_err() { run 2 "${@:2}"; err_line "$1"; }
pq_err "key 'abc' is not a value of column 'i64' (INT64)" parquet probe --column i64 "$PQ" abc
pq_err "no column 'nope'; its columns: s, i32, i64, d, f, part" parquet probe --column nope "$PQ" 1
printf 'PAR1xxxxxxxxPAR1' >bad.parquet
pq_err "'bad.parquet': Parquet file: a footer of" parquet info bad.parquet
head -c 100 "$PQ" >short.parquet
pq_err "'short.parquet': Parquet file: no PAR1 at its end" parquet info short.parquet

# --- help and version -------------------------------------------------------------------------
run 0 --version
out_is "bloomery 0.1.0"
run 0 --help
out_has "Examples:"
for cmd in build add remove query info merge intersect size advise explain bip37; do
  run 0 "$cmd" --help
  out_has "Examples:"
  out_has "bloomery $cmd"
done

finish
