// Tests of bloomery's leveldb::FilterPolicy: the policy on its own (encoding, no false negatives,
// FPR, malformed filters), then real LevelDB databases using it.
#include <gtest/gtest.h>
#include <leveldb/iterator.h>
#include <bloomery/leveldb/filter_policy.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "leveldb_support.hpp"

namespace {

using namespace bloomery::leveldb_integration;
using bloomery::leveldb_test::key_of;

constexpr policy_kind all_kinds[] = {policy_kind::bloom, policy_kind::blocked_bloom};

std::string kind_name(policy_kind kind) {
  return kind == policy_kind::bloom ? "bloom" : "blocked_bloom";
}

// Keys of filter `f` in a test: disjoint index ranges, so no probe key is ever a member.
std::vector<std::string> keys_for(std::uint64_t first, std::size_t n) {
  std::vector<std::string> keys;
  for (std::size_t i = 0; i < n; ++i) keys.push_back(key_of(first + i));
  return keys;
}

std::string make_filter(const leveldb::FilterPolicy& policy, const std::vector<std::string>& keys) {
  std::vector<leveldb::Slice> slices(keys.begin(), keys.end());
  std::string out;
  policy.CreateFilter(slices.data(), static_cast<int>(slices.size()), &out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Options, name, encoding
// ---------------------------------------------------------------------------------------------

TEST(LevelDbPolicy, NameIsStableAndSharedByEveryKind) {
  // LevelDB files filters under "filter.<Name>": one name for all kinds keeps old tables' filters
  // in use when the kind changes, and a changed name would silently drop every existing filter.
  EXPECT_STREQ(policy_name, "bloomery.v1");
  for (const policy_kind kind : all_kinds) {
    for (const double bits : {2.0, 10.0, 20.0}) {
      EXPECT_STREQ(new_filter_policy({.kind = kind, .bits_per_key = bits})->Name(), "bloomery.v1");
    }
  }
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  EXPECT_STRNE(builtin->Name(), policy_name);
}

TEST(LevelDbPolicy, DefaultsAreClassicBloomAtTenBitsPerKey) {
  const filter_policy p;
  EXPECT_EQ(p.kind(), policy_kind::bloom);
  EXPECT_EQ(p.bits_per_key(), 10.0);
  EXPECT_EQ(p.hash_count(), 7u);  // round(10 ln 2) = round(6.93)
}

TEST(LevelDbPolicy, HashCountIsRoundedAndClamped) {
  EXPECT_EQ(filter_policy({.bits_per_key = 1}).hash_count(), 1u);    // round(0.69) = 1
  EXPECT_EQ(filter_policy({.bits_per_key = 5}).hash_count(), 3u);    // round(3.47)
  EXPECT_EQ(filter_policy({.bits_per_key = 9.6}).hash_count(), 7u);  // round(6.65)
  EXPECT_EQ(filter_policy({.bits_per_key = 16}).hash_count(), 11u);  // round(11.09)
  EXPECT_EQ(filter_policy({.bits_per_key = 64}).hash_count(), 30u);  // 44 clamped to 30
  EXPECT_EQ(filter_policy({.kind = policy_kind::blocked_bloom, .bits_per_key = 10}).hash_count(),
            7u);
  EXPECT_EQ(filter_policy({.kind = policy_kind::blocked_bloom, .bits_per_key = 64}).hash_count(),
            16u);  // the blocked core's limit
}

TEST(LevelDbPolicy, RejectsInvalidOptions) {
  for (const double bad : {0.0, 0.99, 64.01, -1.0, std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(filter_policy({.bits_per_key = bad}), std::invalid_argument) << bad;
  }
  try {
    filter_policy({.bits_per_key = 0.5});
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "bloomery: bits_per_key = 0.5 is invalid; allowed range is [1, 64]");
  }
  EXPECT_THROW(filter_policy({.kind = static_cast<policy_kind>(3)}), std::invalid_argument);
  EXPECT_THROW(filter_policy({.kind = static_cast<policy_kind>(0)}), std::invalid_argument);
}

TEST(LevelDbPolicy, FilterSizesCountTheTrailer) {
  const filter_policy bloom;
  EXPECT_EQ(bloom.filter_bytes(40), 51u);  // ceil(400 / 8) + 1
  EXPECT_EQ(bloom.filter_bytes(33), 43u);  // ceil(330 / 8) + 1
  EXPECT_EQ(bloom.filter_bytes(1), 9u);    // the 8-byte floor + 1
  EXPECT_EQ(bloom.filter_bytes(0), 9u);    // never asked by LevelDB; still well formed
  const filter_policy blocked({.kind = policy_kind::blocked_bloom});
  EXPECT_EQ(blocked.filter_bytes(40), 65u);    // 400 / 512 rounds to 1 block
  EXPECT_EQ(blocked.filter_bytes(100), 129u);  // 1000 / 512 rounds to 2
  EXPECT_EQ(blocked.filter_bytes(2), 65u);     // at least one block
  for (const policy_kind kind : all_kinds) {
    const filter_policy p({.kind = kind});
    for (const std::size_t n : {1u, 7u, 20u, 55u, 100u, 1000u}) {
      EXPECT_EQ(make_filter(p, keys_for(0, n)).size(), p.filter_bytes(n)) << n;
    }
  }
}

TEST(LevelDbPolicy, SizeMatchesLevelDbBuiltinByteForByte) {
  // At integer bits/key the classic filter takes exactly the bytes LevelDB's own filter takes
  // (array ceil(n * bits / 8), at least 8 bytes, plus one trailer byte): comparisons are at equal
  // memory.
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  const filter_policy ours;
  for (std::size_t n = 1; n <= 300; ++n) {
    const auto keys = keys_for(n * 1000, n);
    ASSERT_EQ(make_filter(ours, keys).size(), make_filter(*builtin, keys).size()) << n;
  }
}

TEST(LevelDbPolicy, TrailerByteHoldsKindAndHashCount) {
  const auto keys = keys_for(0, 50);
  EXPECT_EQ(static_cast<unsigned char>(make_filter(filter_policy(), keys).back()), 0x27u);
  EXPECT_EQ(static_cast<unsigned char>(
                make_filter(filter_policy({.kind = policy_kind::blocked_bloom}), keys).back()),
            0x47u);
  EXPECT_EQ(
      static_cast<unsigned char>(make_filter(filter_policy({.bits_per_key = 20}), keys).back()),
      0x20u | 14u);
}

TEST(LevelDbPolicy, CreateFilterAppendsAndKeepsWhatWasThere) {
  const filter_policy p;
  const auto a = keys_for(0, 30), b = keys_for(100, 45);
  std::string block = "prefix";
  std::vector<leveldb::Slice> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  p.CreateFilter(sa.data(), 30, &block);
  const std::size_t split = block.size();
  p.CreateFilter(sb.data(), 45, &block);
  EXPECT_EQ(block.substr(0, 6), "prefix");
  const leveldb::Slice fa(block.data() + 6, split - 6),
      fb(block.data() + split, block.size() - split);
  for (const auto& k : a) EXPECT_TRUE(p.KeyMayMatch(k, fa));
  for (const auto& k : b) EXPECT_TRUE(p.KeyMayMatch(k, fb));
}

// The policy does not carry a second Bloom implementation: its bytes are bloomery's own filters'
// words, and its byte-level probes answer exactly as those filters do.
TEST(LevelDbPolicy, ClassicBytesAreABloomFiltersWords) {
  const filter_policy p;
  const auto keys = keys_for(7, 60);
  const std::string bytes = make_filter(p, keys);
  const std::size_t array = bytes.size() - 1;
  bloomery::bloom_filter f({.bits = array * 8, .hashes = 7});
  for (const auto& k : keys) f.insert(k);
  ASSERT_EQ(std::memcmp(bytes.data(), f.words().data(), array), 0);
  std::uint64_t positives = 0;
  for (std::uint64_t i = 0; i < 100'000; ++i) {
    const std::string probe = key_of((std::uint64_t{1} << 40) + i);
    const bool ours = p.KeyMayMatch(probe, bytes);
    ASSERT_EQ(ours, f.may_contain(probe)) << probe;
    positives += ours;
  }
  EXPECT_GT(positives, 0u);  // the agreement covers "yes" answers too
}

TEST(LevelDbPolicy, BlockedBytesAreABlockedFiltersWordsOnBothProbePaths) {
  const filter_policy p({.kind = policy_kind::blocked_bloom});
  const auto keys = keys_for(7, 150);
  const std::string bytes = make_filter(p, keys);
  const std::size_t array = bytes.size() - 1;
  ASSERT_EQ(array, 192u);  // 1500 / 512 rounds to 3 blocks
  bloomery::blocked_bloom_filter f({.bits = array * 8, .hashes = 7});
  for (const auto& k : keys) f.insert(k);
  ASSERT_EQ(std::memcmp(bytes.data(), f.words().data(), array), 0);
  for (const bool portable : {false, true}) {
    bloomery::force_portable_simd(portable);
    for (std::uint64_t i = 0; i < 50'000; ++i) {
      const std::string probe = key_of((std::uint64_t{1} << 40) + i);
      ASSERT_EQ(p.KeyMayMatch(probe, bytes), f.may_contain(probe)) << probe;
    }
  }
  bloomery::force_portable_simd(false);
}

// ---------------------------------------------------------------------------------------------
// No false negatives; FPR
// ---------------------------------------------------------------------------------------------

TEST(LevelDbPolicy, NoFalseNegativesOnRandomKeys) {
  // Random binary keys of random length (the empty key included), at filter sizes from 1 key to
  // far beyond a table block, from unaligned positions inside a larger buffer.
  std::mt19937_64 rng(20240601);
  for (const policy_kind kind : all_kinds) {
    for (const double bits : {1.0, 4.5, 10.0, 17.0, 64.0}) {
      const filter_policy p({.kind = kind, .bits_per_key = bits});
      for (int round = 0; round < 60; ++round) {
        const std::size_t n = round < 50 ? 1 + rng() % 120 : 1 + rng() % 5000;
        std::vector<std::string> keys(n);
        for (auto& k : keys) {
          k.resize(rng() % 40);
          for (auto& c : k) c = static_cast<char>(rng());
        }
        const std::string filter = make_filter(p, keys);
        const std::size_t shift = rng() % 8;
        const std::string padded = std::string(shift, 'x') + filter;
        const leveldb::Slice view(padded.data() + shift, filter.size());
        for (const auto& k : keys) {
          ASSERT_TRUE(p.KeyMayMatch(k, view))
              << kind_name(kind) << " bits/key " << bits << " n " << n;
        }
      }
    }
  }
}

// FPR of filters of `lo`..`hi` keys (uniformly), as LevelDB's table blocks give them, with the
// standard error of the mean over filters (each filter's rate is one sample: this counts both the
// sampling noise and the spread between filters).
struct fpr_sample {
  double rate = 0, standard_error = 0, model = 0, bits_per_key = 0;
};

std::vector<double> per_filter_rates(
    const leveldb::FilterPolicy& p, std::size_t filters, std::size_t lo, std::size_t hi,
    std::size_t probes, double* model, double* bits_per_key,
    double (*model_of)(std::size_t n, std::size_t bytes, std::uint32_t k), std::uint32_t k) {
  std::mt19937_64 rng(42);  // the same sizes and keys for every policy
  std::vector<double> rates;
  std::uint64_t next = 0, bytes = 0, keys_total = 0;
  double model_sum = 0;
  for (std::size_t f = 0; f < filters; ++f) {
    const std::size_t n = lo + rng() % (hi - lo + 1);
    const std::string filter = make_filter(p, keys_for(next, n));
    next += n;
    bytes += filter.size();
    keys_total += n;
    if (model_of != nullptr) model_sum += model_of(n, filter.size() - 1, k);
    std::size_t hits = 0;
    for (std::size_t q = 0; q < probes; ++q) {
      hits += p.KeyMayMatch(key_of((std::uint64_t{1} << 40) + f * probes + q), filter);
    }
    rates.push_back(static_cast<double>(hits) / static_cast<double>(probes));
  }
  *model = model_sum / static_cast<double>(filters);
  *bits_per_key = 8.0 * static_cast<double>(bytes) / static_cast<double>(keys_total);
  return rates;
}

fpr_sample summarize(const std::vector<double>& rates) {
  fpr_sample s;
  double sum = 0, sq = 0;
  for (const double r : rates) sum += r;
  s.rate = sum / static_cast<double>(rates.size());
  for (const double r : rates) sq += (r - s.rate) * (r - s.rate);
  s.standard_error = std::sqrt(sq / static_cast<double>(rates.size() - 1)) /
                     std::sqrt(static_cast<double>(rates.size()));
  return s;
}

double classic_model(std::size_t n, std::size_t bytes, std::uint32_t k) {
  return bloomery::false_positive_rate(n, bytes * 8, k);
}
double blocked_model(std::size_t n, std::size_t bytes, std::uint32_t k) {
  return bloomery::detail::blocked_fpr(static_cast<double>(n), static_cast<double>(bytes / 64), k);
}

constexpr std::size_t fpr_filters = 6000, fpr_probes = 250, fpr_lo = 20, fpr_hi = 100;

TEST(LevelDbPolicy, FprAtTenBitsPerKeyMatchesTheModel) {
  // 1.5M probes over 6000 filters of 20..100 keys. Bounds are 5 standard errors (a correct filter
  // fails with probability below 1e-6) around the model, where the upper side allows 1.25x the
  // model: in filters of a few hundred bits, double-hashed probe sequences that repeat a bit
  // (g_i = h1 + i*h2 hitting a short cycle mod m) add about 10% to the classic formula; the
  // bound is there to catch broken hashing or sizing, which cost far more.
  for (const policy_kind kind : all_kinds) {
    const filter_policy p({.kind = kind});
    double model = 0, bits = 0;
    const fpr_sample s = summarize(per_filter_rates(
        p, fpr_filters, fpr_lo, fpr_hi, fpr_probes, &model, &bits,
        kind == policy_kind::bloom ? classic_model : blocked_model, p.hash_count()));
    std::printf("[ info     ] %s: FPR %.4f%% +- %.4f%% (model %.4f%%) at %.2f bits/key\n",
                kind_name(kind).c_str(), 100 * s.rate, 100 * s.standard_error, 100 * model, bits);
    EXPECT_LE(s.rate, 1.25 * model + 5 * s.standard_error) << kind_name(kind);
    // The lower side is loose: the blocked model's Poisson load per block overstates the spread
    // of filters of one or two blocks (their loads are fixed), so it runs about 10% high here.
    EXPECT_GE(s.rate, 0.8 * model - 5 * s.standard_error) << kind_name(kind);
    if (kind == policy_kind::bloom) {
      EXPECT_LT(s.rate + 5 * s.standard_error, 0.01);  // below 1% at 10 bits/key, trailer included
      EXPECT_LT(bits, 10.3);
    }
  }
}

TEST(LevelDbPolicy, LowerFprThanLevelDbBuiltinAtEqualBytes) {
  // Same key sets, same bytes per filter (SizeMatchesLevelDbBuiltinByteForByte); the paired
  // per-filter difference must be positive by more than 5 standard errors.
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  const filter_policy ours;
  double model = 0, bits_ours = 0, bits_builtin = 0;
  const auto r_ours = per_filter_rates(ours, fpr_filters, fpr_lo, fpr_hi, fpr_probes, &model,
                                       &bits_ours, nullptr, 0);
  const auto r_builtin = per_filter_rates(*builtin, fpr_filters, fpr_lo, fpr_hi, fpr_probes, &model,
                                          &bits_builtin, nullptr, 0);
  ASSERT_EQ(bits_ours, bits_builtin);
  std::vector<double> diff(r_ours.size());
  for (std::size_t i = 0; i < diff.size(); ++i) diff[i] = r_builtin[i] - r_ours[i];
  const fpr_sample d = summarize(diff);
  const fpr_sample a = summarize(r_ours), b = summarize(r_builtin);
  std::printf(
      "[ info     ] bloomery %.4f%%, LevelDB built-in %.4f%% at %.2f bits/key; "
      "difference %.4f%% +- %.4f%%\n",
      100 * a.rate, 100 * b.rate, bits_ours, 100 * d.rate, 100 * d.standard_error);
  EXPECT_GT(d.rate, 5 * d.standard_error);
}

// ---------------------------------------------------------------------------------------------
// Malformed filters: "may match", never a crash
// ---------------------------------------------------------------------------------------------

TEST(LevelDbPolicy, EmptyAndOneByteFiltersMayMatch) {
  for (const policy_kind kind : all_kinds) {
    const filter_policy p({.kind = kind});
    EXPECT_TRUE(p.KeyMayMatch("key", leveldb::Slice()));
    for (int b = 0; b < 256; ++b) {
      const char byte = static_cast<char>(b);
      EXPECT_TRUE(p.KeyMayMatch("key", leveldb::Slice(&byte, 1))) << b;  // trailer, no array
    }
  }
}

TEST(LevelDbPolicy, UnknownTrailersMayMatch) {
  const filter_policy p;
  const std::string zeros(64, '\0');  // an all-clear array: any real kind would answer "no"
  auto with = [&](std::size_t array, unsigned trailer) {
    return zeros.substr(0, array) + static_cast<char>(trailer);
  };
  for (const unsigned kind : {0u, 3u, 4u, 5u, 6u, 7u}) {  // kinds this version does not know
    for (unsigned k = 0; k < 32; ++k) {
      EXPECT_TRUE(p.KeyMayMatch("key", with(64, kind << 5 | k))) << kind << " " << k;
    }
  }
  EXPECT_TRUE(p.KeyMayMatch("key", with(64, 1u << 5 | 0)));   // classic, k = 0
  EXPECT_TRUE(p.KeyMayMatch("key", with(64, 1u << 5 | 31)));  // classic, k beyond 30
  EXPECT_TRUE(p.KeyMayMatch("key", with(7, 1u << 5 | 7)));    // classic below its 8-byte floor
  EXPECT_TRUE(p.KeyMayMatch("key", with(64, 2u << 5 | 0)));   // blocked, k = 0
  EXPECT_TRUE(p.KeyMayMatch("key", with(64, 2u << 5 | 17)));  // blocked, k beyond 16
  EXPECT_TRUE(p.KeyMayMatch("key", with(63, 2u << 5 | 7)));   // blocked, not whole blocks
  // Well-formed all-clear filters do answer "no": the cases above are rejected for their trailer.
  EXPECT_FALSE(p.KeyMayMatch("key", with(8, 1u << 5 | 7)));
  EXPECT_FALSE(p.KeyMayMatch("key", with(64, 2u << 5 | 7)));
}

TEST(LevelDbPolicy, LevelDbBuiltinFiltersReadAsUnknown) {
  // LevelDB's filter ends in its k (1..30): kind 0 here. Should one ever reach this policy, it
  // must not be misread as one of ours.
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  const filter_policy p;
  const std::string foreign = make_filter(*builtin, keys_for(0, 50));
  for (std::uint64_t i = 0; i < 1000; ++i) {
    EXPECT_TRUE(p.KeyMayMatch(key_of((std::uint64_t{1} << 40) + i), foreign));
  }
}

TEST(LevelDbPolicy, TruncatedFiltersNeverCrashAndMayMatchWhenDetectable) {
  // Every prefix of real filters. A cut leaves some array byte as the trailer; when that byte is
  // not a valid trailer for the bytes before it, the answer must be "may match". When it happens
  // to be valid, no encoding without a checksum can tell (LevelDB's own cannot either; its block
  // CRCs are the guard, see docs/leveldb.md), so only the absence of crashes is checked: ASan and
  // UBSan runs cover that.
  for (const policy_kind kind : all_kinds) {
    const filter_policy p({.kind = kind});
    for (const std::size_t n : {1u, 20u, 50u, 100u, 300u}) {
      const auto keys = keys_for(n * 7, n);
      const std::string full = make_filter(p, keys);
      std::size_t detected = 0;
      for (std::size_t len = 0; len < full.size(); ++len) {
        const std::string cut = full.substr(0, len);  // its own allocation: ASan sees overreads
        const auto tail = len == 0 ? 0u : static_cast<unsigned char>(cut.back());
        const std::size_t array = len == 0 ? 0 : len - 1;
        const unsigned k = tail & 31, code = tail >> 5;
        const bool valid = (code == 1 && k >= 1 && k <= 30 && array >= 8) ||
                           (code == 2 && k >= 1 && k <= 16 && array > 0 && array % 64 == 0);
        for (const auto& key : keys) {
          const bool answer = p.KeyMayMatch(key, cut);
          if (!valid) {
            ASSERT_TRUE(answer) << kind_name(kind) << " n " << n << " len " << len;
          }
        }
        detected += !valid;
      }
      // Most cuts end in a byte that is no valid trailer: about 1 in 10 reads as one (kind 1 with
      // k in 1..30 over at least 8 bytes, or kind 2 with k in 1..16 over whole blocks).
      EXPECT_GE(detected, full.size() * 3 / 4) << kind_name(kind) << " n " << n;
    }
  }
}

TEST(LevelDbPolicy, RandomBytesNeverCrash) {
  std::mt19937_64 rng(7);
  const filter_policy bloom, blocked({.kind = policy_kind::blocked_bloom});
  std::size_t answers = 0;
  for (int i = 0; i < 20'000; ++i) {
    std::string bytes(rng() % 300, '\0');
    for (auto& c : bytes) c = static_cast<char>(rng());
    if (!bytes.empty() && i % 2 == 0) {  // half with a trailer that parses, to reach the probes
      bytes.back() = static_cast<char>((1 + rng() % 2) << 5 | (1 + rng() % 16));
    }
    answers += bloom.KeyMayMatch(key_of(i), bytes) + blocked.KeyMayMatch(key_of(i), bytes);
  }
  EXPECT_GT(answers, 0u);
}

// ---------------------------------------------------------------------------------------------
// Real databases
// ---------------------------------------------------------------------------------------------

constexpr std::size_t db_value_size = 24;

// Reads every key back with its value, and checks that `absent` keys never written are NotFound.
void check_db(leveldb::DB& db, std::uint64_t n, std::uint64_t absent) {
  std::string value;
  for (std::uint64_t i = 0; i < n; ++i) {
    const leveldb::Status s = db.Get(leveldb::ReadOptions(), key_of(i), &value);
    ASSERT_TRUE(s.ok()) << "key " << i << ": " << s.ToString();
    ASSERT_EQ(value, bloomery::leveldb_test::value_of(i, db_value_size)) << "key " << i;
  }
  for (std::uint64_t i = 0; i < absent; ++i) {
    const leveldb::Status s = db.Get(leveldb::ReadOptions(), key_of(n + i), &value);
    ASSERT_TRUE(s.IsNotFound()) << "absent key " << i << ": " << s.ToString();
  }
}

class LevelDbDatabase : public ::testing::TestWithParam<policy_kind> {};

TEST_P(LevelDbDatabase, WriteCompactReadReopenRead) {
  const std::uint64_t n = bloomery::leveldb_test::database_keys();
  const std::uint64_t absent = std::max<std::uint64_t>(1000, n / 10);
  const auto policy = new_filter_policy({.kind = GetParam()});
  const bloomery::leveldb_test::counting_policy counted(*policy);
  bloomery::leveldb_test::counting_env env;
  const bloomery::leveldb_test::temp_dir dir("bloomery-leveldb-" + kind_name(GetParam()));
  const leveldb::Options options = bloomery::leveldb_test::options_with(&counted, &env);

  auto db = bloomery::leveldb_test::open_db(options, dir / "db");
  bloomery::leveldb_test::fill_db(*db, n, db_value_size);
  ASSERT_GT(counted.filters.load(), 0u);
  counted.reset_checks();
  ASSERT_NO_FATAL_FAILURE(check_db(*db, n, absent));
  // Every Get consulted a filter (the keys are spread over every table's range; a few absent keys
  // may fall below the first key or above the last), and the filters turned away all but about 1%
  // of the absent keys.
  EXPECT_GE(counted.checks.load(), n + absent - absent / 1000);
  const double fpr =
      static_cast<double>(counted.positives.load() - n) / static_cast<double>(absent);
  std::printf(
      "[ info     ] %s: %llu keys, %llu filters of %.1f keys, %.2f bits/key; "
      "absent Gets passing the filter: %.3f%%\n",
      kind_name(GetParam()).c_str(), static_cast<unsigned long long>(n),
      static_cast<unsigned long long>(counted.filters.load()),
      static_cast<double>(counted.filter_keys.load()) / counted.filters.load(),
      8.0 * counted.filter_bytes.load() / counted.filter_keys.load(), 100 * fpr);
  EXPECT_LT(fpr, 0.02);

  db.reset();  // close, reopen, and read it all again from the files alone
  db = bloomery::leveldb_test::open_db(options, dir / "db");
  ASSERT_NO_FATAL_FAILURE(check_db(*db, n, absent));
  std::unique_ptr<leveldb::Iterator> it(db->NewIterator(leveldb::ReadOptions()));
  std::uint64_t count = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++count;
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(count, n);
}

INSTANTIATE_TEST_SUITE_P(Kinds, LevelDbDatabase,
                         ::testing::Values(policy_kind::bloom, policy_kind::blocked_bloom),
                         [](const auto& info) { return kind_name(info.param); });

// Builds a small database with `writer`, then reopens it with `reader` and returns how many
// filter checks the reader made while all keys and as many absent ones were read correctly.
std::uint64_t checks_when_reopened(const leveldb::FilterPolicy& writer,
                                   const leveldb::FilterPolicy& reader) {
  constexpr std::uint64_t n = 20'000;
  const bloomery::leveldb_test::temp_dir dir("bloomery-leveldb-switch");
  {
    auto db =
        bloomery::leveldb_test::open_db(bloomery::leveldb_test::options_with(&writer), dir / "db");
    bloomery::leveldb_test::fill_db(*db, n, db_value_size);
  }
  const bloomery::leveldb_test::counting_policy counted(reader);
  auto db =
      bloomery::leveldb_test::open_db(bloomery::leveldb_test::options_with(&counted), dir / "db");
  check_db(*db, n, n);
  return counted.checks.load();
}

TEST(LevelDbDatabase, ChangingTheKindKeepsExistingFiltersInUse) {
  // One name for every kind: a database written with one kind and read with another still uses
  // its filters, each decoded by its own trailer.
  const filter_policy bloom, blocked({.kind = policy_kind::blocked_bloom});
  const filter_policy sparse({.bits_per_key = 4});
  EXPECT_GE(checks_when_reopened(bloom, blocked), 40'000u);
  EXPECT_GE(checks_when_reopened(blocked, bloom), 40'000u);
  EXPECT_GE(checks_when_reopened(bloom, sparse), 40'000u);
}

TEST(LevelDbDatabase, ForeignNamesAreIgnoredNotMisread) {
  // LevelDB looks filters up by name: tables written by the built-in policy have no
  // "filter.bloomery.v1" and are read without filters (correctly, only slower), and the other
  // way round. Until a compaction rewrites them, such tables cost a data-block read per Get.
  const std::unique_ptr<const leveldb::FilterPolicy> builtin(leveldb::NewBloomFilterPolicy(10));
  const filter_policy ours;
  EXPECT_EQ(checks_when_reopened(*builtin, ours), 0u);
  EXPECT_EQ(checks_when_reopened(ours, *builtin), 0u);
  EXPECT_GE(checks_when_reopened(*builtin, *builtin), 40'000u);  // the control
}

}  // namespace
