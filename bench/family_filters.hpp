// What bench_family.cpp and fpr_sweep.cpp share about the filters they measure: every filter of
// the family, one insert for all of them, and LevelDB's built-in policy (when the build found it)
// behind the family's vocabulary.
#pragma once

#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/counting_bloom_filter.hpp>
#include <bloomery/cuckoo_filter.hpp>
#include <bloomery/results.hpp>
#include <bloomery/scalable_bloom_filter.hpp>
#include <bloomery/static_filter.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#endif

namespace bloomery::bench {

#ifdef BLOOMERY_BENCH_HAVE_LEVELDB
// LevelDB's NewBloomFilterPolicy(bits_per_key): one immutable filter built from all keys, as a
// table block holds for its keys. uint64 keys are hashed as their 8 bytes, as bloomery does.
class leveldb_filter {
 public:
  leveldb_filter(const std::vector<std::uint64_t>& keys, int bits_per_key)
      : policy_(leveldb::NewBloomFilterPolicy(bits_per_key)), n_(keys.size()) {
    std::vector<leveldb::Slice> slices;
    slices.reserve(keys.size());
    for (const std::uint64_t& k : keys) {
      slices.emplace_back(reinterpret_cast<const char*>(&k), sizeof k);
    }
    policy_->CreateFilter(slices.data(), static_cast<int>(slices.size()), &bits_);
  }
  bool may_contain(const std::uint64_t& key) const {
    return policy_->KeyMayMatch(leveldb::Slice(reinterpret_cast<const char*>(&key), sizeof key),
                                leveldb::Slice(bits_));
  }
  std::uint64_t size_in_bytes() const { return bits_.size(); }
  // The policy's format: the bit array, then one byte holding k.
  std::uint32_t hashes() const { return static_cast<unsigned char>(bits_.back()); }
  double estimated_fpr() const { return false_positive_rate(n_, (bits_.size() - 1) * 8, hashes()); }

 private:
  std::unique_ptr<const leveldb::FilterPolicy> policy_;
  std::uint64_t n_;
  std::string bits_;
};
#endif

}  // namespace bloomery::bench
