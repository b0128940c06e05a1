"""Builds bloomery's Python bindings with setuptools, from a checkout of the repository.

    /usr/bin/python3 -m venv --system-site-packages venv
    venv/bin/pip install --no-build-isolation --no-index ./python

Everything comes from the system (setuptools, pybind11, a C++20 compiler, Debian's
libxxhash-dev): pip downloads nothing. The C++ library is header-only and read from ../include;
its version, defined once in include/bloomery/version.hpp, is the package's version.
BLOOMERY_BUILD_JOBS sets the number of parallel compile jobs (default: one per CPU).
"""

import re
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext
from setuptools import setup

HERE = Path(__file__).resolve().parent
INCLUDE = HERE.parent / "include"
VERSION_HEADER = INCLUDE / "bloomery" / "version.hpp"


def library_version():
    if not VERSION_HEADER.is_file():
        raise SystemExit(
            f"bloomery: {VERSION_HEADER} not found: build the bindings from a checkout of the "
            "whole repository (pip install ./python), not from python/ alone"
        )
    match = re.search(r'version_string\s*=\s*"([^"]+)"', VERSION_HEADER.read_text())
    if not match:
        raise SystemExit(f"bloomery: no version_string in {VERSION_HEADER}")
    return match.group(1)


SOURCES = ["module.cpp", "keys.cpp", "support.cpp", "bloom_kinds.cpp", "cuckoo_kinds.cpp",
           "other_kinds.cpp", "guava.cpp", "parquet.cpp"]

extension = Pybind11Extension(
    "bloomery._bloomery",
    # Relative to this file: setuptools refuses absolute source paths.
    [f"src/{name}" for name in SOURCES],
    include_dirs=[str(INCLUDE)],
    cxx_std=20,
    extra_compile_args=["-O2", "-fvisibility=hidden"],
)

ParallelCompile("BLOOMERY_BUILD_JOBS").install()

setup(
    name="bloomery",
    version=library_version(),
    description="Approximate membership filters: the Bloom filter family (Python bindings)",
    long_description="Python bindings of bloomery, a C++20 library of approximate membership "
    "filters: Bloom, blocked Bloom, counting Bloom, cuckoo, scalable and static (binary fuse) "
    "filters. See docs/python.md in the repository.",
    python_requires=">=3.9",
    packages=["bloomery"],
    package_data={"bloomery": ["__init__.pyi", "py.typed"]},
    ext_modules=[extension],
    cmdclass={"build_ext": build_ext},
    zip_safe=False,
)
