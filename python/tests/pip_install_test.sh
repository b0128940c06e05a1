#!/usr/bin/env bash
# `pip install ./python` from a copy of the checkout into a fresh virtual environment that sees
# the system's packages (setuptools, pybind11, numpy), with no index: nothing is downloaded. Then
# the installed package is imported from outside the tree and used.
# Usage: pip_install_test.sh PYTHON SOURCE_DIR
set -euo pipefail
python=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# A copy of the parts of the checkout the build reads: pip builds in place, and the tree stays
# clean.
mkdir "$work/checkout"
cp -r "$source_dir/include" "$source_dir/python" "$work/checkout/"
rm -rf "$work/checkout/python/build" "$work/checkout/python/"*.egg-info

"$python" -m venv --system-site-packages "$work/venv"
start=$(date +%s)
BLOOMERY_BUILD_JOBS=${BLOOMERY_BUILD_JOBS:-2} PIP_NO_INPUT=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
  "$work/venv/bin/pip" install --no-build-isolation --no-index --quiet "$work/checkout/python"
echo "pip install: $(($(date +%s) - start)) s"

cd "$work"
"$work/venv/bin/python" - "$source_dir" <<'EOF'
import pathlib, re, sys
import bloomery

src = pathlib.Path(sys.argv[1])
where = pathlib.Path(bloomery.__file__).parent
assert "venv" in str(where), where
assert (where / "py.typed").exists() and (where / "__init__.pyi").exists()
header = (src / "include/bloomery/version.hpp").read_text()
assert bloomery.__version__ == re.search(r'version_string = "([^"]+)"', header).group(1)
f = bloomery.BloomFilter(1000, 0.01)
f.update(["a", "b", 3])
g = bloomery.loads(bytes(f))
assert "a" in g and 3 in g and g == f
print("installed", bloomery.__version__, "at", where)
EOF
