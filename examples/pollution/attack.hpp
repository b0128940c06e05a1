// The pollution attack of README "Threat model", played against the bit-array filters
// (bloom_filter, blocked_bloom_filter) through the public API only. Shared by the example
// (pollution.cpp) and its test (tests/test_pollution.cpp), so the test checks the code that
// prints the numbers.
//
// The attacker knows the filter's parameters and can read its bits (a copied file, a snapshot,
// a debugging endpoint), but computes probe positions with its own guess of the filter's hasher.
// Against the default seed the guess is right: the seed is written in the file header. Against a
// keyed filter the attacker lacks the key, so any guess is a different hash function.
#pragma once

#include <bloomery/blocked_bloom_filter.hpp>
#include <bloomery/bloom_filter.hpp>
#include <bloomery/hash.hpp>
#include <bloomery/positions.hpp>

#include <bloomery/support/keys.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace pollution {

using u64 = std::uint64_t;

// Every key the attacker or a random probe uses has the top bit set; honest keys
// (support::present_keys) have it clear, so no attacker key is ever an inserted honest key.
inline constexpr u64 outsider_bit = bloomery::support::top_bit;

// Output i of an outsider key stream.
inline u64 outsider_key(u64 stream, u64 i) {
  return bloomery::support::splitmix64_at(stream, i) | outsider_bit;
}

inline std::vector<u64> outsider_keys(u64 stream, std::size_t count) {
  std::vector<u64> keys(count);
  for (std::size_t i = 0; i < count; ++i) keys[i] = outsider_key(stream, i);
  return keys;
}

// A secret key drawn from a key stream instead of random_key(), so runs are reproducible; the
// attacker never sees it either way.
inline bloomery::secret_key stream_secret(u64 stream) {
  bloomery::secret_key key;
  for (std::size_t i = 0; i < key.bytes.size(); i += 8) {
    const u64 word = bloomery::support::splitmix64_at(stream, i / 8);
    std::memcpy(key.bytes.data() + i, &word, 8);
  }
  return key;
}

// The indexes in the filter's whole bit array of a key's probes, in probe order (may repeat).
inline void probe_bits(const bloomery::bloom_filter& f, u64 key, std::vector<u64>& out) {
  out = bloomery::positions(f, key).bits;
}
inline void probe_bits(const bloomery::blocked_bloom_filter& f, u64 key, std::vector<u64>& out) {
  const bloomery::blocked_positions p = bloomery::positions(f, key);
  out.resize(p.bits.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = p.bit_index(i);
}

inline bool bit_is_set(std::span<const u64> words, u64 i) {
  return ((words[i >> 6] >> (i & 63)) & 1) != 0;
}

// How many distinct bits of `bits` are clear in `words`: what inserting a key with these probes
// would add. Quadratic in k on purpose: k is small, and a sort would cost more.
inline std::uint32_t clear_bits(std::span<const u64> words, std::span<const u64> bits) {
  std::uint32_t clear = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    const bool repeat = std::find(bits.begin(), bits.begin() + i, bits[i]) != bits.begin() + i;
    clear += !repeat && !bit_is_set(words, bits[i]);
  }
  return clear;
}

// The bits inserting `key` into f would set that are clear now (computed with f's own hasher).
template <class F>
std::uint32_t fresh_bits(const F& f, u64 key) {
  std::vector<u64> bits;
  probe_bits(f, key, bits);
  return clear_bits(f.words(), bits);
}

// Inserts key and returns how many bits it set that were clear before.
template <class F>
std::uint32_t insert_counting(F& f, u64 key) {
  const std::uint32_t fresh = fresh_bits(f, key);
  f.insert(key);
  return fresh;
}

template <class F>
std::size_t count_positives(const F& f, std::span<const u64> keys) {
  return static_cast<std::size_t>(
      std::count_if(keys.begin(), keys.end(), [&](u64 key) { return f.may_contain(key); }));
}

template <class F>
class attacker {
 public:
  // `target` is read (never written) as the attack goes on, so it must outlive the attacker.
  attacker(const F& target, bloomery::hasher guess, u64 candidate_stream)
      : target_(target),
        model_(bloomery::bloom_parameters{target.bit_count(), target.hash_count()},
               std::move(guess)),
        stream_(candidate_stream) {}

  // Where the attacker believes a key's probes go: right only if the guess is the filter's hasher.
  std::vector<u64> believed_bits(u64 key) const {
    std::vector<u64> bits;
    probe_bits(model_, key, bits);
    return bits;
  }

  // Candidates examined so far.
  u64 tried() const { return tried_; }

  // The next candidate all of whose believed probes land on set bits: a false positive made to
  // order when the guess is right. Gives up (returns false) after `budget` candidates.
  bool next_false_positive(u64 budget, u64& key) {
    for (u64 i = 0; i < budget; ++i) {
      const u64 candidate = next_candidate();
      probe_bits(model_, candidate, bits_);
      if (std::all_of(bits_.begin(), bits_.end(),
                      [&](u64 b) { return bit_is_set(target_.words(), b); })) {
        key = candidate;
        return true;
      }
    }
    return false;
  }

  struct polluter {
    u64 key = 0;
    std::uint32_t believed_fresh = 0;  // clear bits it sets, as the attacker believes
  };
  // A key to insert that sets as many clear bits as possible: the first candidate whose k
  // believed probes are distinct and all clear, or else the best of `budget` candidates
  // (budget 0: search until a candidate with k clear bits turns up).
  polluter next_polluter(u64 budget) {
    polluter best;
    const std::uint32_t k = target_.hash_count();
    for (u64 i = 0; budget == 0 || i < budget; ++i) {
      const u64 candidate = next_candidate();
      probe_bits(model_, candidate, bits_);
      const std::uint32_t fresh = clear_bits(target_.words(), bits_);
      if (i == 0 || fresh > best.believed_fresh) best = {candidate, fresh};
      if (fresh == k) break;
    }
    return best;
  }

 private:
  u64 next_candidate() { return outsider_key(stream_, tried_++); }

  const F& target_;
  F model_;  // the target's shape with the guessed hasher; only its positions are used
  std::vector<u64> bits_;  // scratch: the current candidate's believed probes
  u64 stream_;
  u64 tried_ = 0;
};

// Part 1 (and 3): the false positives an attacker finds among `budget` candidates, stopping
// early at `wanted` of them.
struct search_result {
  std::vector<u64> chosen;
  u64 tried = 0;
};
template <class F>
search_result search_false_positives(attacker<F>& a, std::size_t wanted, u64 budget) {
  search_result r;
  const u64 start = a.tried();
  u64 key = 0;
  while (r.chosen.size() < wanted && a.tried() - start < budget &&
         a.next_false_positive(budget - (a.tried() - start), key)) {
    r.chosen.push_back(key);
  }
  r.tried = a.tried() - start;
  return r;
}

// Part 2: insert keys from `next(set_bits)` (told how many bits are set) into an (initially empty)
// filter until its estimated FPR reaches `fpr_goal`, noting when the fill first reaches
// `fill_goal`. The fill is tracked exactly insert by insert; estimated_fpr() is read every
// `check_every` inserts.
struct saturation_result {
  u64 inserts_to_fill = 0;        // inserts when set bits first reached fill_goal * m
  u64 inserts_to_fpr = 0;         // inserts at the first check where estimated_fpr >= fpr_goal
  u64 set_bits = 0;               // set bits before, plus the fresh bits of each insert
  std::uint32_t max_fresh = 0;    // most fresh bits one insert set
  std::uint32_t min_fresh = ~0u;  // fewest fresh bits one insert set, before fill_goal
  double estimated_fpr = 0;       // at inserts_to_fpr
  bool reached = false;           // fpr_goal reached within max_inserts
};
template <class F, class Next>
saturation_result saturate(F& f, Next next, double fill_goal, double fpr_goal, u64 check_every,
                           u64 max_inserts) {
  saturation_result r;
  r.set_bits = f.set_bit_count();
  const auto m = static_cast<double>(f.bit_count());
  for (u64 i = 1; i <= max_inserts; ++i) {
    const std::uint32_t fresh = insert_counting(f, next(r.set_bits));
    r.set_bits += fresh;
    r.max_fresh = std::max(r.max_fresh, fresh);
    if (r.inserts_to_fill == 0) {
      r.min_fresh = std::min(r.min_fresh, fresh);
      if (static_cast<double>(r.set_bits) >= fill_goal * m) r.inserts_to_fill = i;
    }
    if (i % check_every == 0 && f.estimated_fpr() >= fpr_goal) {
      r.inserts_to_fpr = i;
      r.estimated_fpr = f.estimated_fpr();
      r.reached = true;
      break;
    }
  }
  return r;
}

}  // namespace pollution
