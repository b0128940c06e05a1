#!/usr/bin/env bash
# The Debian package's smoke test: packs the built tree with `cpack -G DEB`, checks the package's
# fields and the Redis module's mode, unpacks it into a scratch root, and uses what it holds the
# way a user would: the CLI (--version, a build/query round trip), `import bloomery` (when the
# Python module was built), a consumer built with find_package(bloomery) and one compiled with
# pkg-config's flags.
#   deb_smoke.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
fail() { echo "deb_smoke: $*" >&2; exit 1; }

rm -rf "$work" && mkdir -p "$work"
version=$(sed -n 's/.*version_string = "\([0-9.]*\)".*/\1/p' "$source/include/bloomery/version.hpp")
[ -n "$version" ] || fail "no version_string in version.hpp"

(cd "$build" && cpack -G DEB -B "$work/pkg" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack failed"; }
deb=$(ls "$work"/pkg/bloomery_*.deb)
[ "$(dpkg-deb -f "$deb" Package)" = bloomery ] || fail "package name"
[ "$(dpkg-deb -f "$deb" Version)" = "$version" ] || fail "package version is not $version"
dpkg-deb -f "$deb" Depends | grep -q libxxhash-dev || fail "Depends lacks libxxhash-dev"
# Every dependency it declares is one this machine can satisfy.
if [ "$(id -u)" = 0 ]; then dpkg --dry-run -i "$deb" >/dev/null || fail "dpkg refuses the package"; fi

root=$work/root
dpkg-deb -x "$deb" "$root"
usr=$root/usr
for f in include/bloomery/bloomery.hpp share/pkgconfig/bloomery.pc bin/bloomery; do
  [ -e "$usr/$f" ] || fail "the package lacks /usr/$f"
done
ls "$usr"/lib/cmake/bloomery/bloomeryConfig.cmake >/dev/null 2>&1 || fail "no CMake package"
# The Redis module, when built, is packed executable: Redis 7 refuses to load it otherwise (the test
# redis_module_deb loads it from this unpacked root).
if [ -e "$build/integrations/redis/bloomery-redis.so" ]; then
  mode=$(dpkg-deb -c "$deb" | awk '$NF ~ /\/bloomery-redis\.so$/ { print $1 }')
  [ "$mode" = -rwxr-xr-x ] || fail "the package holds bloomery-redis.so as '${mode:-nothing}'"
fi

# The CLI.
[ "$("$usr/bin/bloomery" --version)" = "bloomery $version" ] || fail "bloomery --version"
printf 'alpha\nbeta\ngamma\n' >"$work/keys.txt"
"$usr/bin/bloomery" build -n 1000 -p 0.01 -o "$work/f.bloom" "$work/keys.txt"
[ "$("$usr/bin/bloomery" query "$work/f.bloom" "$work/keys.txt")" = "$(cat "$work/keys.txt")" ] ||
  fail "the packaged CLI lost a key"

# The Python module, when it was built: the same file answers the same.
if [ -d "$usr/lib/python3/dist-packages/bloomery" ]; then
  PYTHONPATH="$usr/lib/python3/dist-packages" /usr/bin/python3 -c "
import bloomery, sys
assert bloomery.__version__ == '$version', bloomery.__version__
f = bloomery.load('$work/f.bloom')
assert all(k in f for k in ('alpha', 'beta', 'gamma'))
print('python ok', bloomery.__file__)" | grep -q "python ok $usr" || fail "import bloomery from the package"
fi
[ ! -d "$build/python" ] || [ -d "$usr/lib/python3/dist-packages/bloomery" ] ||
  fail "the Python module was built but is not in the package"

# A CMake consumer, and a pkg-config one.
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$usr" -DCMAKE_DISABLE_FIND_PACKAGE_leveldb=ON --no-warn-unused-cli >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/consumer" | grep -q "consumer ok" || fail "the CMake consumer"
flags=$(PKG_CONFIG_PATH="$usr/share/pkgconfig" pkg-config --cflags bloomery)
incdir=$(realpath -m "$(sed -n 's/^-I\([^ ]*\).*/\1/p' <<<"$flags")")
[ "$incdir" = "$(realpath "$usr/include")" ] || fail "pkg-config --cflags gives '$flags'"
[ "$(PKG_CONFIG_PATH="$usr/share/pkgconfig" pkg-config --modversion bloomery)" = "$version" ] ||
  fail "pkg-config --modversion"
# shellcheck disable=SC2086
g++ -std=c++20 $flags -fsyntax-only -x c++ - <<<'#include <bloomery/bloomery.hpp>
int main() { bloomery::bloom_filter f({.capacity = 10, .fpr = 0.01}); return f.may_contain("x"); }' ||
  fail "compiling with pkg-config's flags"
echo "deb_smoke: $(basename "$deb") ok ($(du -k "$deb" | cut -f1) KiB)"
