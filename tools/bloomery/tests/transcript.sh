#!/usr/bin/env bash
# Runs representative bloomery commands (every command, text and --json, success and error cases,
# explain for every kind) and prints a transcript: each command, its exit status, stdout, stderr,
# and checksums of the files it wrote. Two builds of the tool must print the same transcript, so a
# refactoring can be checked byte for byte:
#   diff <(transcript.sh OLD/bloomery) <(transcript.sh NEW/bloomery)
# Not a ctest (it needs two binaries); cli_test.sh checks the behaviour itself.
set -u
B=$(realpath "$1")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
r() {
  echo "=== $*"
  "$B" "$@" >o 2>e
  echo "rc=$?"
  echo "--- stdout"; sed "s|$B|BLOOMERY|g" o
  echo "--- stderr"; sed "s|$B|BLOOMERY|g" e
}
ri() {
  local input=$1; shift
  echo "=== (stdin: $input) $*"
  printf '%b' "$input" | "$B" "$@" >o 2>e
  echo "rc=$?"
  echo "--- stdout"; sed "s|$B|BLOOMERY|g" o
  echo "--- stderr"; sed "s|$B|BLOOMERY|g" e
}
sums() { echo "--- files"; for f in "$@"; do [[ -e $f ]] && echo "$f $(sha256sum <"$f" | cut -c1-16)" || echo "$f absent"; done; }

printf 'example.com\r\n\nalpha\nbeta\n' >keys.txt
printf 'example.com\nnonexistent.com\nalpha\nzzz-absent-1\n' >queries.txt
printf 'id,name\n1,alpha\n2,beta\n' >data.csv
seq 1 5000 | sed 's/^/key-/' >k5000.txt
seq 2500 7500 | sed 's/^/key-/' >q5000.txt
r --version
r --help
r
r bogus
r --nope
for c in build add remove query info merge intersect size advise explain; do r $c --help; done
for kind in bloom blocked counting cuckoo scalable static scalable-cuckoo; do
  r build -n 1000 -p 0.001 --kind $kind -o $kind.f keys.txt
  r build -q -n 5000 -p 0.01 --kind $kind -o big-$kind.f k5000.txt
  r build -q -n 6000 -p 0.01 --kind $kind --seed 0x1234 -o seeded-$kind.f k5000.txt
  sums $kind.f big-$kind.f seeded-$kind.f
  r info $kind.f
  r info --json $kind.f
  r info big-$kind.f
  r info --json seeded-$kind.f
  r query $kind.f queries.txt
  r query -v $kind.f queries.txt
  r query -c big-$kind.f q5000.txt
  r query -c -v big-$kind.f q5000.txt
  r query big-$kind.f q5000.txt
  ri 'nothing-here\n' query $kind.f
  ri 'nothing-here\n' query -c $kind.f -
  cp $kind.f add-$kind.f
  ri 'gamma\ndelta\n' add add-$kind.f
  sums add-$kind.f
  r info --json add-$kind.f
  cp big-$kind.f rm-$kind.f
  r remove rm-$kind.f q5000.txt
  sums rm-$kind.f
  r info --json rm-$kind.f
  r query -c rm-$kind.f k5000.txt
done
r build -q -p 0.01 --kind static -o static2.f keys.txt
r info static2.f
r build -n 10 -p 0.01 --field 2 --delimiter , -o csv.bf data.csv
sums csv.bf
ri 'alpha\nid\n1\n' query csv.bf
r build -q -n 10 -p 0.001 --field 3 --delimiter , -o csv2.bf data.csv
r build -q -n 10 -p 0.001 --field 2 --delimiter ,, -o csv3.bf data.csv
r build -q -n 10 -p 0.001 --field 0 -o csv4.bf data.csv
# over capacity, every kind that can be
seq 1 300 >many.txt
for kind in bloom blocked counting cuckoo scalable scalable-cuckoo; do
  r build -q -n 10 -p 0.01 --kind $kind -o over-$kind.f many.txt
  r info over-$kind.f
  r info --json over-$kind.f
done
r build -q -n 4 -p 0.01 --kind cuckoo -o small.cf keys.txt
r add small.cf k5000.txt
sums small.cf
# merge / intersect
printf 'a1\na2\n' >a.txt
printf 'a2\nb1\n' >b.txt
for kind in bloom blocked counting cuckoo scalable static scalable-cuckoo; do
  r build -q -n 100 -p 0.001 --kind $kind -o a-$kind.f a.txt
  r build -q -n 100 -p 0.001 --kind $kind -o b-$kind.f b.txt
  r merge -o u-$kind.f a-$kind.f b-$kind.f
  r intersect -o i-$kind.f a-$kind.f b-$kind.f
  sums u-$kind.f i-$kind.f
done
r build -q -n 200 -p 0.001 -o c.bf a.txt
r build -q -n 100 -p 0.001 --seed 7 -o d.bf a.txt
r merge -o x.bf a-bloom.f c.bf
r intersect -o x.bf a-bloom.f d.bf
r merge -o x.bf a-bloom.f a-cuckoo.f
r merge -o x.bf a-bloom.f
r merge -o x3.bf a-bloom.f b-bloom.f a-bloom.f
sums x.bf x3.bf
# size / advise
r size -n 5000000 -p 0.01
r size -n 1000 -p 0.01 --json
r size -n 1000 -p 1e-9
r size -n 0 -p 0.01
r size -n 10 -p 1.5
r advise -n 1000000 -p 0.01 --deletes
r advise -n 1000000 -p 0.01 --static --json
r advise -n 1000000 -p 0.001 --grows --key-bytes 40
r advise -n 10 -p 2
# errors
r build -n 0 -p 0.01 -o x.bf keys.txt
for p in 0 1 1.5 -0.1 nan; do r build -n 10 -p $p -o x.bf keys.txt; done
r build -n 10 -p 0.01 --kind nope -o x.bf keys.txt
r build -n 10 -p 0.01 -o x.bf missing.txt
r build -p 0.01 -o x.bf keys.txt
r build -p 0.01 --kind cuckoo -o x.bf keys.txt
r build -n abc -p 0.01 -o x.bf keys.txt
r build -n 10 -p 0.01 --seed xyz -o x.bf keys.txt
r build -n 10 -p 0.01 --seed -5 -o x.bf keys.txt
r build -n 10 -p 0.01 keys.txt
r build -n 10 -p 0.01 --threads 0 -o x.bf keys.txt
r build -n 10 -p 0.01 -o /nonexistent-dir/x.bf keys.txt
r query missing.bf keys.txt
r info keys.txt
r query bloom.f missing.txt
: >empty.bf
r info empty.bf
head -c 100 bloom.f >short.bf
r info short.bf
size=$(stat -c %s big-bloom.f)
head -c $((size - 64)) big-bloom.f >trunc.bf
r query trunc.bf keys.txt
r add trunc.bf keys.txt
sums trunc.bf
cp big-bloom.f corrupt.bf
printf '\xff' | dd of=corrupt.bf bs=1 seek=200 conv=notrunc status=none
r info corrupt.bf
r info .
r add static.f keys.txt
for kind in bloom blocked scalable static; do ri 'alpha\n' remove $kind.f; done
ri 'never\n' remove counting.f
r query --nope bloom.f
r info
r query
# explain, every kind
r explain -m 32 -k 3 example.com --query example.com nonexistent.com
r explain -m 300 -k 4 --seed 99 a b c --query a zz
r explain -m 32 x
r explain -m 0 -k 3 x
r explain -m 32 -k 0 x
r explain
r explain bloom.f --seed 5 --query a
r explain missing.bf --query a
for kind in bloom blocked counting cuckoo scalable static scalable-cuckoo; do
  r explain $kind.f --query example.com alpha zz-absent nonexistent.com
  r explain a-$kind.f new1 a1 --query new1 a1 a2 zz-absent
  r explain big-$kind.f --query key-1 key-4999 key-9999 nope
done
r build -q --kind cuckoo -n 5000 -p 0.01 -o ss.cf a.txt
r explain ss.cf new --query a1 a2 new zz
r explain small.cf x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 --query x1 x12 zz
printf 'a1\na2\na3\n' >sc.txt
r build -q --kind scalable -n 2 -p 0.01 -o sc2.f sc.txt
r explain sc2.f n1 n2 n3 n4 n5 --query a1 a2 a3 n5 zz-absent
r build -q --kind scalable-cuckoo -n 1 -p 0.01 -o scc1.f sc.txt
r explain scc1.f n1 n2 n3 n4 n5 n6 n7 n8 --query a1 a3 n8 zz-absent
r explain over-counting.f --query 1 2 zzz
r build -q --kind static -p 0.00001 -o st16.f k5000.txt
r explain st16.f --query key-1 key-77 nope
r build -q --kind static -p 0.01 -o st0.f /dev/null
r explain st0.f --query a
r info st0.f
r explain static.f a1 --query a1
