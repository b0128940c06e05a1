// The filters the family benchmarks measure, each only if its header exists and the build did
// not opt it out with BLOOMERY_BENCH_FAMILY_SKIP (which defines BLOOMERY_BENCH_NO_<NAME>).
// Shared by bench_family.cpp and fpr_sweep.cpp.
#pragma once

#include "bloomery/blocked_bloom_filter.hpp"
#include "bloomery/bloom_filter.hpp"

#if __has_include(<bloomery/counting_bloom_filter.hpp>) && !defined(BLOOMERY_BENCH_NO_COUNTING)
#include <bloomery/counting_bloom_filter.hpp>
#define BLOOMERY_BENCH_HAVE_COUNTING 1
#endif
#if __has_include(<bloomery/cuckoo_filter.hpp>) && !defined(BLOOMERY_BENCH_NO_CUCKOO)
#include <bloomery/cuckoo_filter.hpp>
#define BLOOMERY_BENCH_HAVE_CUCKOO 1
#endif
#if __has_include(<bloomery/scalable_bloom_filter.hpp>) && !defined(BLOOMERY_BENCH_NO_SCALABLE)
#include <bloomery/scalable_bloom_filter.hpp>
#define BLOOMERY_BENCH_HAVE_SCALABLE 1
#endif
#if __has_include(<bloomery/static_filter.hpp>) && !defined(BLOOMERY_BENCH_NO_STATIC)
#include <bloomery/static_filter.hpp>
#define BLOOMERY_BENCH_HAVE_STATIC 1
#endif

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#endif
