// Integer keys of every pattern through every filter and every hash algorithm (issue 14): a fast
// integer hash may keep structure of its input that XXH3 over the key's bytes did not, so keys
// that differ only in a few low bits, only in a stride, only in their top bits, or only in the
// sign extension of a negative value must still give each filter the false-positive rate of its
// model. Inserted keys and absent probes both follow the patterns, separately and together.
#include <gtest/gtest.h>
#include <bloomery/bloomery.hpp>
#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

namespace {

// ---------------------------------------------------------------------------------------------
// Key patterns. Each pattern is a bijection from an index i to a 64-bit key value (the key's
// two's complement), so disjoint index ranges of one pattern are disjoint key sets.

enum class key_type { u64, i32, i64 };

struct pattern {
  const char* name;
  key_type type;
  std::uint64_t (*at)(std::uint64_t i);
  std::uint64_t size;  // how many distinct keys the pattern has (indices 0..size-1)
};

constexpr std::uint64_t unbounded = std::numeric_limits<std::uint64_t>::max();
constexpr std::uint64_t large_base = 0x0123'4567'89ab'cdefULL;
constexpr std::uint64_t random_seed = 0x1a7e'6e25'0000'0001ULL;

const std::array patterns = {
    pattern{"sequential", key_type::u64, [](std::uint64_t i) { return i; }, unbounded},
    // int32_t keys down from INT32_MAX, and (below) up from INT32_MIN: widened by sign extension.
    pattern{"int32_max_down", key_type::i32,
            [](std::uint64_t i) { return std::uint64_t{0x7fff'ffff} - i; }, std::uint64_t{1} << 31},
    pattern{"large_base_plus_i", key_type::u64, [](std::uint64_t i) { return large_base + i; },
            unbounded},
    pattern{"stride_2e8", key_type::u64, [](std::uint64_t i) { return i << 8; },
            std::uint64_t{1} << 56},
    pattern{"stride_2e16", key_type::u64, [](std::uint64_t i) { return i << 16; },
            std::uint64_t{1} << 48},
    pattern{"stride_2e32", key_type::u64, [](std::uint64_t i) { return i << 32; },
            std::uint64_t{1} << 32},
    pattern{"high_bits_40", key_type::u64, [](std::uint64_t i) { return i << 40; },
            std::uint64_t{1} << 24},
    pattern{"high_bits_48", key_type::u64, [](std::uint64_t i) { return i << 48; },
            std::uint64_t{1} << 16},
    pattern{"random", key_type::u64,
            [](std::uint64_t i) { return support::splitmix64_at(random_seed, i); }, unbounded},
    // -1, -2, ...
    pattern{"negative_int64", key_type::i64, [](std::uint64_t i) { return ~i; }, unbounded},
    pattern{"int32_min_up", key_type::i32,
            [](std::uint64_t i) { return std::uint64_t{0xffff'ffff'8000'0000} + i; },
            std::uint64_t{1} << 31},
};
const pattern& random_pattern =
    *std::find_if(patterns.begin(), patterns.end(),
                  [](const pattern& p) { return std::string_view(p.name) == "random"; });

// Keys per filter: half of the high_bits_48 pattern's 2^16 keys, so the other half gives its
// absent probes.
constexpr std::uint64_t n = std::uint64_t{1} << 15;
// Absent probes per measurement (fewer only where a pattern runs out of keys).
constexpr std::uint64_t probes = std::uint64_t{1} << 19;
constexpr double fpr = 0.01;

// The value hash_key widens an integer key to.
template <class K>
std::uint64_t widened(K key) {
  return static_cast<std::uint64_t>(
      static_cast<std::conditional_t<std::is_signed_v<K>, std::int64_t, std::uint64_t>>(key));
}

// Key i of pattern p as the value hash_key widens it to (its index must be below p.size).
std::uint64_t widened_at(const pattern& p, std::uint64_t i) {
  if (p.type == key_type::i32) return widened(static_cast<std::int32_t>(p.at(i)));
  if (p.type == key_type::i64) return widened(static_cast<std::int64_t>(p.at(i)));
  return p.at(i);
}

// Keys first..first+count-1 of pattern p as K (each fits: the patterns of 32-bit type have at
// most 2^31 keys, all in int32_t's range).
template <class K>
std::vector<K> keys_of(const pattern& p, std::uint64_t first, std::uint64_t count) {
  std::vector<K> keys(count);
  for (std::uint64_t i = 0; i < count; ++i) keys[i] = static_cast<K>(p.at(first + i));
  return keys;
}

// fn(keys) with the keys of p in the pattern's own C++ type.
template <class Fn>
void with_keys(const pattern& p, std::uint64_t first, std::uint64_t count, Fn&& fn) {
  if (p.type == key_type::u64) {
    fn(keys_of<std::uint64_t>(p, first, count));
  } else if (p.type == key_type::i32) {
    fn(keys_of<std::int32_t>(p, first, count));
  } else {
    fn(keys_of<std::int64_t>(p, first, count));
  }
}

// One measurement: a filter of n keys of `inserted` (indices 0..n-1), probed with keys of
// `absent` from index `first` on: the same pattern continued past n, or another pattern.
struct probe_set {
  const pattern* absent;
  std::uint64_t first;
  std::uint64_t count() const { return std::min(probes, absent->size - first); }
};

probe_set probes_for(const pattern& inserted, const pattern& absent) {
  return {&absent, &inserted == &absent ? n : 0};
}

// ---------------------------------------------------------------------------------------------
// The filters, each with its model FPR for its actual parameters and the relative allowance for
// one filter's true FPR around that model (see expect_model_fpr).

// What a filter's FPR should be: `fpr` for a random absent key, up to a relative `allowance`.
struct model {
  double fpr;
  double allowance;
};

constexpr double z = 6;  // standard deviations of a filter's spread around its model

// Relative standard deviation of a classic filter's true rate fill^k around its model, from the
// spread of its fill (m fill is a sum of m weakly negatively correlated bits: q(1-q)/m bounds the
// variance of the fill, so this overstates the spread).
double classic_spread(std::uint64_t keys, std::uint64_t m, std::uint32_t k) {
  const double q =
      std::exp(-static_cast<double>(k) * static_cast<double>(keys) / static_cast<double>(m));
  return k * std::sqrt(q * (1 - q) / static_cast<double>(m)) / (1 - q);
}

// Relative standard deviation of a blocked filter's true rate, the mean over its blocks of F_b^k,
// around the model: a block's key count is Poisson(keys / blocks) (the exact multinomial counts
// vary less) and its fill F has the variance the library's model uses; E[F^k] and E[F^2k] by the
// same second-order expansion.
double blocked_spread(std::uint64_t keys, std::uint64_t blocks, std::uint32_t k) {
  const double lambda = static_cast<double>(keys) / static_cast<double>(blocks), B = 512, kd = k;
  const double log_keep1 = std::log1p(-1 / B), log_keep2 = std::log1p(-2 / B);
  const double reach = 12 * std::sqrt(lambda) + 40;
  double mean = 0, second = 0;
  for (double j = std::max(0.0, std::floor(lambda - reach)); j <= lambda + reach; ++j) {
    const double w = std::exp(-lambda + j * std::log(lambda) - std::lgamma(j + 1));
    const double e1 = std::exp(log_keep1 * kd * j), e2 = std::exp(log_keep2 * kd * j);
    const double f = 1 - e1, var = std::max(0.0, (B - 1) / B * e2 + e1 / B - e1 * e1);
    if (f == 0) continue;
    mean += w * (std::pow(f, kd) + kd * (kd - 1) / 2 * std::pow(f, kd - 2) * var);
    second += w * (std::pow(f, 2 * kd) + kd * (2 * kd - 1) * std::pow(f, 2 * kd - 2) * var);
  }
  return std::sqrt(std::max(0.0, second - mean * mean) / static_cast<double>(blocks)) / mean;
}

// Allowances for the models' own approximations, beyond the spread of one filter's state:
//  - classic, counting and scalable: fill^k ignores the O(k^2/m) effects of double hashing's
//    coinciding probes and of Jensen's gap, far below 1% at these sizes;
//  - blocked: the model expands E[F^k] to second order only, so it gets 3%;
//  - cuckoo: 1 - exp(-x) understates the exact rate x (1 - O(x)) by x/2, which is added to 1%;
//  - static: a probe's fingerprint matches the XOR of its three slots with probability exactly
//    2^-f for a random hash, so 1% only covers rounding.
constexpr double bit_model_error = 0.01;
constexpr double blocked_model_error = 0.03;
constexpr double fingerprint_model_error = 0.01;

// Inserts every key; a cuckoo table sized for the keys must take each one (a hash that crowded
// keys into few buckets would fill it early).
template <class F, class Keys>
F insert_all(F f, const Keys& keys) {
  std::uint64_t refused = 0;
  for (const auto& k : keys) {
    refused += f.insert(k) == insert_result::full;
  }
  EXPECT_EQ(refused, 0u) << "inserts refused below capacity";
  return f;
}

struct classic {
  using filter = bloom_filter;
  static constexpr const char* name = "bloom";
  static constexpr bool estimate_from_state = true;
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size(), .fpr = fpr}, std::move(h)), keys);
  }
  static model model_of(const filter& f, std::uint64_t keys) {
    return {false_positive_rate(keys, f.bit_count(), f.hash_count()),
            z * classic_spread(keys, f.bit_count(), f.hash_count()) + bit_model_error};
  }
};

struct blocked {
  using filter = blocked_bloom_filter;
  static constexpr const char* name = "blocked";
  static constexpr bool estimate_from_state = true;
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size(), .fpr = fpr}, std::move(h)), keys);
  }
  // plan() of the filter's own target is its model at `keys` keys (the sizing is deterministic;
  // the test checks it describes this filter).
  static model model_of(const filter& f, std::uint64_t keys) {
    const filter_plan plan = filter::plan({.capacity = keys, .fpr = fpr});
    EXPECT_EQ(plan.bytes, f.size_in_bytes());
    return {plan.expected_fpr,
            z * blocked_spread(keys, f.bit_count() / 512, f.hash_count()) + blocked_model_error};
  }
};

struct counting {
  using filter = counting_bloom_filter;
  static constexpr const char* name = "counting";
  static constexpr bool estimate_from_state = true;
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size(), .fpr = fpr}, std::move(h)), keys);
  }
  static model model_of(const filter& f, std::uint64_t keys) {
    return {false_positive_rate(keys, f.counter_count(), f.hash_count()),
            z * classic_spread(keys, f.counter_count(), f.hash_count()) + bit_model_error};
  }
};

struct cuckoo {
  using filter = cuckoo_filter;
  static constexpr const char* name = "cuckoo";
  static constexpr bool estimate_from_state = false;  // estimated_fpr() is the model at its load
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size(), .fpr = fpr}, std::move(h)), keys);
  }
  // Each stored key matches a random absent one with probability 2 / (buckets (2^f - 1)).
  static model model_of(const filter& f, std::uint64_t keys) {
    EXPECT_EQ(f.approximate_count(), keys);
    const double x = 2.0 * static_cast<double>(keys) /
                     (static_cast<double>(f.bucket_count()) *
                      (std::ldexp(1.0, static_cast<int>(f.fingerprint_bits())) - 1));
    return {-std::expm1(-x), x / 2 + fingerprint_model_error};
  }
};

// Grows from a quarter of the keys, so the keys fill three sub-filters of different sizes, each
// probed with positions from the same hash.
struct scalable {
  using filter = scalable_bloom_filter;
  static constexpr const char* name = "scalable";
  static constexpr bool estimate_from_state = true;
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size() / 4, .fpr = fpr}, std::move(h)), keys);
  }
  // 1 - prod(1 - p_i) over the sub-filters, each p_i the classic model for the keys it holds; the
  // compound rate moves less than any p_i does, so the spreads add as independent terms.
  static model model_of(const filter& f, std::uint64_t) {
    EXPECT_GE(f.sub_filter_count(), 3u);
    double log_none = 0, variance = 0;
    for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
      const auto sub = f.sub_filter(i);
      if (sub.inserted() == 0) continue;
      const double p = false_positive_rate(sub.inserted(), sub.bit_count(), sub.hash_count());
      const double sd = p * classic_spread(sub.inserted(), sub.bit_count(), sub.hash_count());
      log_none += std::log1p(-p);
      variance += sd * sd;
    }
    const double p = -std::expm1(log_none);
    return {p, z * std::sqrt(variance) / p + bit_model_error};
  }
};

// Grows from a quarter of the keys (doubling sub-filters, so three of them), each sub-filter
// probed with buckets from the same hash.
struct scalable_cuckoo {
  using filter = scalable_cuckoo_filter;
  static constexpr const char* name = "scalable_cuckoo";
  static constexpr bool estimate_from_state = false;  // estimated_fpr() is the model at its loads
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return insert_all(filter({.capacity = keys.size() / 4, .fpr = fpr}, std::move(h)), keys);
  }
  // Each key stored in sub-filter i matches a random absent one with probability
  // 2 / (buckets_i (2^f - 1)), independently: the exact rate is 1 - prod (1 - that)^stored_i.
  static model model_of(const filter& f, std::uint64_t keys) {
    EXPECT_EQ(f.approximate_count(), keys);
    EXPECT_GE(f.sub_filter_count(), 3u);
    const double values = std::ldexp(1.0, static_cast<int>(f.fingerprint_bits())) - 1;
    double log_none = 0;
    for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
      const scalable_cuckoo_sub_filter s = f.sub_filter(i);
      log_none += static_cast<double>(s.inserted - s.removed) *
                  std::log1p(-2.0 / (static_cast<double>(s.buckets) * values));
    }
    return {-std::expm1(log_none), fingerprint_model_error};
  }
};

struct static_kind {
  using filter = static_filter;
  static constexpr const char* name = "static";
  static constexpr bool estimate_from_state = false;  // estimated_fpr() is 2^-f, the model
  template <class Keys>
  static filter build(const Keys& keys, hasher h) {
    return filter::build(keys, fpr, std::move(h));
  }
  static model model_of(const filter& f, std::uint64_t keys) {
    EXPECT_EQ(f.key_count(), keys);
    return {std::ldexp(1.0, -static_cast<int>(f.fingerprint_bits())), fingerprint_model_error};
  }
};

// ---------------------------------------------------------------------------------------------
// The hashers: the default (the integer hash of issue 14), the same seed with the algorithm it
// replaced, and keyed mode with a fixed secret (fixed so every run probes the same filters).

struct default_hash {
  static constexpr const char* name = "default";
  static hasher make() { return {}; }
};
struct legacy_hash {
  static constexpr const char* name = "legacy";
  static hasher make() { return {default_seed, hash_algorithm::xxh3_128_seeded}; }
};
struct keyed_hash {
  static constexpr const char* name = "keyed";
  static hasher make() {
    secret_key key;
    std::uint64_t state = 0x1e9a'cafe'0000'0001ULL;
    for (std::size_t i = 0; i < key.bytes.size(); i += 8) {
      const std::uint64_t word = test::splitmix64(state);
      std::memcpy(key.bytes.data() + i, &word, 8);
    }
    return key;
  }
};

template <class Kind, class Hashing>
struct config : Kind {
  static std::string name() { return std::string(Kind::name) + "_" + Hashing::name; }
  static hasher hash() { return Hashing::make(); }
};

template <class... Kinds>
using with_every_hasher =
    ::testing::Types<config<Kinds, default_hash>..., config<Kinds, legacy_hash>...,
                     config<Kinds, keyed_hash>...>;
using configurations =
    with_every_hasher<classic, blocked, counting, cuckoo, scalable, static_kind, scalable_cuckoo>;

struct configuration_name {
  template <class C>
  static std::string GetName(int) {
    return C::name();
  }
};

// ---------------------------------------------------------------------------------------------
// The checks.

// The worst measured/model ratio a test saw, and the largest share of its bound a count of false
// positives reached, printed at the test's end (for the record).
struct worst_ratio {
  double ratio = 0, of_bound = 0;
  std::string where, where_bound;
  void note(double r, double b, const std::string& what) {
    if (r > ratio) ratio = r, where = what;
    if (b > of_bound) of_bound = b, where_bound = what;
  }
  ~worst_ratio() {
    std::cout << "worst measured/model FPR ratio " << ratio << " (" << where << "); closest to "
              << "its bound " << of_bound << " of it (" << where_bound << ")\n";
  }
};

// The filter of C holding keys 0..n-1 of `inserted`: every key answers "possibly present", one at
// a time and batched, and (where the filter's estimate comes from its state) the state is the
// model's: a hash that made inserted keys collide, or spread them unevenly, would move it.
template <class C>
typename C::filter build_checked(const pattern& inserted) {
  std::optional<typename C::filter> built;
  with_keys(inserted, 0, n, [&](const auto& keys) {
    built.emplace(C::build(keys, C::hash()));
    const auto& f = *built;
    std::uint64_t missing = 0;
    for (const auto& k : keys) missing += !f.may_contain(k);
    EXPECT_EQ(missing, 0u) << "false negatives";
    std::vector<bool> out(keys.size());
    EXPECT_EQ(f.may_contain_many(keys, out), keys.size()) << "batched false negatives";
  });
  const auto& f = *built;
  EXPECT_EQ(f.hash(), C::hash());
  if constexpr (C::estimate_from_state) {
    const model m = C::model_of(f, n);
    EXPECT_NEAR(f.estimated_fpr(), m.fpr, m.fpr * m.allowance) << "the filter's state";
  }
  return std::move(*built);
}

// Probes f with the absent keys of `s` and checks the false positives against the model of f for
// its actual parameters. The count of false positives among N probes is Binomial(N, q), q the
// filter's true rate; q is at most model (1 + allowance) (its spread, z = 6 standard deviations,
// plus the model's error), and the count then exceeds the exact binomial upper bound at that rate
// with probability at most 1e-9. That bound is p + 6 sqrt(p (1 - p) / N) in the normal
// approximation, computed exactly because the approximation understates the tail at the few
// expected positives of the smallest probe sets. Where the estimate comes from the filter's own
// state, the count is also checked against it, with sampling noise alone (and 2% for fill^k
// against the exact rate given the state): probes whose positions followed the inserted keys'
// positions would show here first.
template <class C>
void expect_model_fpr(const typename C::filter& f, const pattern& inserted, const probe_set& s,
                      worst_ratio& worst) {
  const std::string what = std::string("inserted ") + inserted.name + ", absent " + s.absent->name;
  SCOPED_TRACE(what);
  const model m = C::model_of(f, n);
  std::uint64_t positives = 0, count = s.count();
  with_keys(*s.absent, s.first, count, [&](const auto& keys) {
    std::vector<bool> out(keys.size());
    positives = f.may_contain_many(keys, out);
  });
  const double measured = static_cast<double>(positives) / static_cast<double>(count);
  const std::uint64_t bound =
      test::binomial_upper_bound(count, std::min(1.0, m.fpr * (1 + m.allowance)));
  worst.note(measured / m.fpr, static_cast<double>(positives) / static_cast<double>(bound), what);
  EXPECT_LE(positives, bound) << "measured " << measured << " model " << m.fpr << " allowance "
                              << m.allowance << " probes " << count;
  if constexpr (C::estimate_from_state) {
    const double est = f.estimated_fpr();
    EXPECT_LE(positives, test::binomial_upper_bound(count, std::min(1.0, est * 1.02)))
        << "measured " << measured << " estimated from state " << est << " probes " << count;
  }
}

template <class C>
class IntegerKeyPatterns : public ::testing::Test {};

TYPED_TEST_SUITE(IntegerKeyPatterns, configurations, configuration_name);

// Keys of each pattern inserted: none is lost, and absent keys of the same pattern (the pattern
// continued past the inserted ones) and random absent keys hit at the model's rate.
TYPED_TEST(IntegerKeyPatterns, InsertedPatternsKeepEveryKeyAndTheModelFpr) {
  using C = TypeParam;
  worst_ratio worst;
  for (const pattern& inserted : patterns) {
    SCOPED_TRACE(inserted.name);
    const auto f = build_checked<C>(inserted);
    expect_model_fpr<C>(f, inserted, probes_for(inserted, inserted), worst);
    if (&inserted != &random_pattern) {
      expect_model_fpr<C>(f, inserted, probes_for(inserted, random_pattern), worst);
    }
  }
}

// Random keys inserted: absent keys of every pattern hit at the model's rate.
TYPED_TEST(IntegerKeyPatterns, AbsentPatternsHitAtTheModelFpr) {
  using C = TypeParam;
  worst_ratio worst;
  const auto f = build_checked<C>(random_pattern);
  for (const pattern& absent : patterns) {
    if (&absent != &random_pattern) {
      expect_model_fpr<C>(f, random_pattern, probes_for(random_pattern, absent), worst);
    }
  }
}

// The probe sets above are absent keys: no probe equals an inserted key of its measurement.
TEST(IntegerKeyPatternSets, ProbesAreDisjointFromInsertedKeys) {
  const auto check = [](const pattern& inserted, const pattern& absent) {
    std::vector<std::uint64_t> in(n);
    for (std::uint64_t i = 0; i < n; ++i) in[i] = widened_at(inserted, i);
    std::sort(in.begin(), in.end());
    EXPECT_EQ(std::adjacent_find(in.begin(), in.end()), in.end()) << inserted.name;
    const probe_set s = probes_for(inserted, absent);
    EXPECT_GE(s.count(), n) << absent.name;
    std::uint64_t shared = 0;
    for (std::uint64_t i = 0; i < s.count(); ++i) {
      shared += std::binary_search(in.begin(), in.end(), widened_at(absent, s.first + i));
    }
    EXPECT_EQ(shared, 0u) << inserted.name << " / " << absent.name;
  };
  for (const pattern& p : patterns) {
    check(p, p);
    check(p, random_pattern);
    check(random_pattern, p);
  }
}

// ---------------------------------------------------------------------------------------------
// Which integer keys are the same key.

std::array<hasher, 3> every_hasher() {
  return {default_hash::make(), legacy_hash::make(), keyed_hash::make()};
}

// A filter of one key in 2^16 bits with 16 probes. Its answers for other keys are fixed by the
// hash (no chance involved in a run), and a key whose hash differs is answered "yes" only when all
// 16 of its double-hashed probes land on the key's 16 bits, which needs its start and stride both
// within a few 2^-16 of the key's: a tiny filter (44 bits for 1 key at 1e-9) would not do, since
// a stride near 0 puts all of a key's probes in a few neighbouring bits.
template <class K>
bloom_filter filter_of(const K& key, const hasher& h) {
  bloom_filter f({.bits = std::uint64_t{1} << 16, .hashes = 16}, h);
  f.insert(key);
  return f;
}

TEST(IntegerKeyIdentity, WidthAndSignednessOfAnIntegerDoNotChangeTheKey) {
  EXPECT_EQ(hasher{}.algorithm(), hash_algorithm::xxh3_128_seeded_intmix);
  EXPECT_EQ(legacy_hash::make().algorithm(), hash_algorithm::xxh3_128_seeded);
  EXPECT_EQ(keyed_hash::make().algorithm(), hash_algorithm::xxh3_128_keyed);
  for (const hasher& h : every_hasher()) {
    SCOPED_TRACE(to_string(h.algorithm()));
    EXPECT_EQ(hash_key(h, std::int32_t{-7}), hash_key(h, std::int64_t{-7}));
    EXPECT_EQ(hash_key(h, std::int8_t{-7}), hash_key(h, std::int64_t{-7}));
    EXPECT_EQ(hash_key(h, std::uint8_t{200}), hash_key(h, std::uint64_t{200}));
    EXPECT_EQ(hash_key(h, std::uint16_t{200}), hash_key(h, std::int32_t{200}));
    EXPECT_EQ(hash_key(h, std::int64_t{-1}),
              hash_key(h, std::numeric_limits<std::uint64_t>::max()));
    // Widening keeps the value, not the bit pattern: 2^32 - 7 is another key than -7.
    EXPECT_NE(hash_key(h, std::int32_t{-7}), hash_key(h, static_cast<std::uint32_t>(-7)));

    const auto minus7 = filter_of(std::int32_t{-7}, h);
    EXPECT_TRUE(minus7.may_contain(std::int64_t{-7}));
    EXPECT_TRUE(minus7.may_contain(std::int8_t{-7}));
    EXPECT_FALSE(minus7.may_contain(static_cast<std::uint32_t>(-7)));
    const auto two_hundred = filter_of(std::uint8_t{200}, h);
    EXPECT_TRUE(two_hundred.may_contain(std::uint64_t{200}));
    EXPECT_TRUE(two_hundred.may_contain(std::int16_t{200}));
    EXPECT_FALSE(two_hundred.may_contain(std::uint64_t{201}));
  }
}

// Under the default algorithm an integer goes to the integer hash and its 8 little-endian bytes
// to XXH3, so they are two keys; under the legacy algorithm, and in keyed mode (unchanged by issue
// 14), the integer is hashed as those bytes and they are one key.
TEST(IntegerKeyIdentity, AnIntegerAndItsBytesAreOneKeyOnlyWhereIntegersHashAsBytes) {
  for (const hasher& h : every_hasher()) {
    SCOPED_TRACE(to_string(h.algorithm()));
    const bool one_key = h.algorithm() != hash_algorithm::xxh3_128_seeded_intmix;
    for (const std::uint64_t x : {std::uint64_t{0}, std::uint64_t{200}, widened(std::int64_t{-7}),
                                  large_base, std::uint64_t{1} << 48}) {
      SCOPED_TRACE(x);
      std::array<char, 8> bytes;
      std::memcpy(bytes.data(), &x, 8);  // little-endian: hash.hpp asserts the host is
      const std::string_view s(bytes.data(), bytes.size());
      EXPECT_EQ(hash_key(h, x) == hash_key(h, s), one_key);
      EXPECT_EQ(filter_of(x, h).may_contain(s), one_key);
      EXPECT_EQ(filter_of(s, h).may_contain(x), one_key);
      EXPECT_EQ(filter_of(s, h).may_contain(std::span<const char>(bytes)), true);
    }
  }
}

}  // namespace
