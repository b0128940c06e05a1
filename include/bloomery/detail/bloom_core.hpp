// The hard parts of the classic Bloom filter, shared by the owning filter and its mapped view:
// position derivation, probing, batched probing. Nothing here owns memory.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ranges>
#include <stdexcept>
#include <type_traits>

#include "bloomery/bit_array.hpp"
#include "bloomery/detail/core_common.hpp"
#include "bloomery/hash.hpp"

namespace bloomery::detail {

// Kirsch–Mitzenmacher double hashing: probe i sits at reduce(h1 + i*h2, m). All arithmetic is
// 64-bit before the reduction, so positions stay uniform even for m far above 2^32.
template <class Fn>
inline void for_each_position(hash128 h, std::uint64_t m, std::uint32_t k, Fn&& fn) noexcept {
  std::uint64_t g = h.low;
  for (std::uint32_t i = 0; i < k; ++i, g += h.high) fn(reduce(g, m));
}

inline void insert_hash(std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                        hash128 h) noexcept {
  for_each_position(h, m, k,
                    [&](std::uint64_t pos) { words[pos >> 6] |= std::uint64_t{1} << (pos & 63); });
}

inline void insert_hash_atomic(std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                               hash128 h) noexcept {
  for_each_position(h, m, k, [&](std::uint64_t pos) {
    or_word_atomic(words + (pos >> 6), std::uint64_t{1} << (pos & 63));
  });
}

// Probes loaded together before the first branch in probe_hash.
inline constexpr std::uint32_t eager_probes = 3;

// True when every probed bit is set. The first three probes are loaded before any branch: their
// cache misses overlap, and for an absent key in a filter at capacity (each bit set with
// probability ~1/2) the branch after them goes "absent" 7 times in 8, so the CPU predicts it and
// runs ahead into the caller's next lookup instead of stalling on a mispredicted early exit. Later
// probes stop at the first clear bit. Two, four, and "three then the rest without branches" were
// measured against it with `bloomery-probe-study eager` (docs/lookup-paths.md, "Tuned constants").
inline bool probe_hash(const std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                       hash128 h) noexcept {
  std::uint64_t g = h.low;
  std::uint32_t i = 0;
  if (k >= eager_probes) {
    const std::uint64_t p0 = reduce(g, m);
    g += h.high;
    const std::uint64_t p1 = reduce(g, m);
    g += h.high;
    const std::uint64_t p2 = reduce(g, m);
    g += h.high;
    const std::uint64_t all = (load_word(words + (p0 >> 6)) >> (p0 & 63)) &
                              (load_word(words + (p1 >> 6)) >> (p1 & 63)) &
                              (load_word(words + (p2 >> 6)) >> (p2 & 63));
    if (!(all & 1)) return false;
    i = eager_probes;
  }
  for (; i < k; ++i, g += h.high) {
    if (!test_bit(words, reduce(g, m))) return false;
  }
  return true;
}

// Keys per batch. Each round keeps up to this many independent cache misses in flight, and the
// per-key state (about 7 KB) still fits in L1 (64 and 128 measured slower: docs/lookup-paths.md,
// "Tuned constants").
inline constexpr std::size_t batch_size = 256;
// Keys whose k lines are prefetched together on the mostly-present path: 32 keys of 7 probes keep
// about as many misses in flight as the memory system tracks (insert_many uses the same).
inline constexpr std::size_t present_group = 32;
// Keys per lane of probe_many: two lanes keep up to 2 * 128 keys' misses in flight (other lane
// sizes: `bloomery-probe-study lanes`, docs/lookup-paths.md, "Tuned constants").
inline constexpr std::size_t lane_size = batch_size / 2;

// Batched may_contain, in rounds. A lane hashes up to lane_size keys and prefetches each one's
// first probe; then round r tests probe r of every key still undecided, drops the keys whose bit
// is clear (their answer is "no"), and prefetches probe r+1 of the survivors. Absent keys leave
// after ~2 rounds, as with early exit in probe_hash. Two lanes take turns, so the lines one lane
// waits for arrive while the other lane computes. A lane whose keys are mostly present after round
// 0 (over 3/4 survive; absent keys survive about half the time) fetches all their remaining lines
// at once and finishes each key in one go; and after a lane of mostly present keys, the next keys
// skip the rounds: they are hashed in groups of present_group, all their lines prefetched, then
// probed. Same answers as probe_hash on each key. Hash is the hasher's function object for its mode
// (hasher::with_mode), so the per-key hashing does not test the mode again. Each of these choices
// was measured against the simpler loop (docs/lookup-paths.md, "Tuned constants").
template <class Keys, class Out, class Hash, std::size_t Lane = lane_size>
class batched_probe {
 public:
  batched_probe(const Hash& hash, const std::uint64_t* words, std::uint64_t m, std::uint32_t k,
                const Keys& keys, Out& out) noexcept
      : hash_(hash),
        words_(words),
        m_(m),
        k_(k),
        keys_(keys),
        out_(out),
        n_(std::ranges::size(keys)) {}

  // Returns how many keys answered "possibly present".
  std::size_t run() noexcept {
    for (lane& l : lanes_) begin(l);
    while (lanes_[0].active || lanes_[1].active) {
      for (lane& l : lanes_) {
        if (!l.active) continue;
        advance(l);
        if (!l.active) {
          finish(l);
          begin(l);
        }
      }
    }
    return positives_;
  }

 private:
  struct lane {
    bool active = false;
    std::size_t base = 0, count = 0, alive = 0;
    std::uint32_t round = 0;
    std::uint64_t g[Lane], step[Lane], pos[Lane];
    std::uint16_t live[Lane];
    bool hit[Lane];
  };

  // Starts the lane on the next keys; runs mostly present keys through the present path first.
  // Not flattened, unlike ring_probe: GCC inlines XXH3 here anyway, and flattening this and
  // present_group_probe measured slower (docs/lookup-paths.md, "Tuned constants").
  void begin(lane& l) noexcept {
    while (mostly_present_ && next_ < n_) present_group_probe();
    l.active = next_ < n_;
    if (!l.active) return;
    l.base = next_;
    l.count = std::min(Lane, n_ - next_);
    next_ += l.count;
    for (std::size_t j = 0; j < l.count; ++j) {
      const hash128 h = hash_key(hash_, keys_[l.base + j]);
      l.g[j] = h.low;
      l.step[j] = h.high;
      l.pos[j] = reduce(h.low, m_);
      prefetch(words_ + (l.pos[j] >> 6));
      l.live[j] = static_cast<std::uint16_t>(j);
    }
    l.alive = l.count;
    l.round = 0;
  }

  // One round: test, compact without branches, and prefetch the survivors' next probe.
  void advance(lane& l) noexcept {
    std::size_t kept = 0;
    for (std::size_t a = 0; a < l.alive; ++a) {
      const std::uint16_t j = l.live[a];
      const bool set = test_bit(words_, l.pos[j]);
      l.hit[j] = set;
      l.live[kept] = j;
      kept += set;
    }
    l.alive = kept;
    if (++l.round == k_ || kept == 0) {
      l.active = false;
      return;
    }
    if (l.round == 1 && kept * 4 > l.count * 3) {
      // Mostly present keys need every probe anyway: fetch all remaining lines at once.
      for (std::size_t a = 0; a < kept; ++a) {
        const std::uint16_t j = l.live[a];
        for_each_position({l.g[j] + l.step[j], l.step[j]}, m_, k_ - 1,
                          [&](std::uint64_t p) { prefetch(words_ + (p >> 6)); });
      }
      for (std::size_t a = 0; a < kept; ++a) {
        const std::uint16_t j = l.live[a];
        l.hit[j] = probe_hash(words_, m_, k_ - 1, {l.g[j] + l.step[j], l.step[j]});
      }
      l.active = false;
      return;
    }
    for (std::size_t a = 0; a < kept; ++a) {
      const std::uint16_t j = l.live[a];
      l.g[j] += l.step[j];
      l.pos[j] = reduce(l.g[j], m_);
      prefetch(words_ + (l.pos[j] >> 6));
    }
  }

  void finish(const lane& l) noexcept {
    std::size_t lane_positives = 0;
    for (std::size_t j = 0; j < l.count; ++j) {
      out_[l.base + j] = l.hit[j];
      lane_positives += l.hit[j];
    }
    positives_ += lane_positives;
    mostly_present_ = lane_positives * 4 > l.count * 3;
  }

  // The present path for the next Lane keys (a stream of mostly present keys, say a key
  // file queried against its own filter): hash a small group, prefetch all its lines, then probe
  // each key in one go, as insert_many does.
  void present_group_probe() noexcept {
    const std::size_t base = next_, count = std::min(Lane, n_ - next_);
    next_ += count;
    hash128 hs[present_group];
    std::size_t group_positives = 0;
    for (std::size_t first = 0; first < count; first += present_group) {
      const std::size_t last = std::min(count, first + present_group);
      for (std::size_t j = first; j < last; ++j) {
        hs[j - first] = hash_key(hash_, keys_[base + j]);
        for_each_position(hs[j - first], m_, k_,
                          [&](std::uint64_t p) { prefetch(words_ + (p >> 6)); });
      }
      for (std::size_t j = first; j < last; ++j) {
        const bool h = probe_hash(words_, m_, k_, hs[j - first]);
        out_[base + j] = h;
        group_positives += h;
      }
    }
    positives_ += group_positives;
    mostly_present_ = group_positives * 4 > count * 3;
  }

  Hash hash_;
  const std::uint64_t* words_;
  std::uint64_t m_;
  std::uint32_t k_;
  const Keys& keys_;
  Out& out_;
  std::size_t n_;
  std::size_t next_ = 0;
  std::size_t positives_ = 0;
  bool mostly_present_ = false;
  lane lanes_[2];
};

// Keys in flight in ring_probe: each slot always has one line on its way (16 and 64 slots measured
// slower with `bloomery-probe-study ring`, docs/lookup-paths.md, "Tuned constants").
inline constexpr std::size_t ring_slots = 32;
// Filters at least this large use ring_probe instead of batched_probe. Far outside the last-level
// cache each line costs the full memory latency, and batched_probe's late rounds (a few survivors
// each) wait for it; the ring never waits on a round. Closer to the cache, the branch that
// ring_probe takes per probe (mispredicted about half the time for absent keys) costs more than
// it saves. The crossover was measured with `bloomery-probe-study ring N` (docs/lookup-paths.md,
// "Tuned constants").
inline constexpr std::uint64_t ring_min_bytes = std::uint64_t{32} << 20;

// Batched may_contain as a pipeline: Slots keys are in flight at once, each waiting for the line
// of its current probe. The loop visits the slots in turn; by the time it returns to a slot, Slots
// - 1 other steps have passed and the slot's line has arrived. A set bit moves the key on to its
// next probe (and requests that line); a clear bit or the last probe answers the key, and the slot
// takes the next key at once. So Slots misses stay in flight whatever mix of absent and present
// keys comes, with no round to finish first. Same answers as probe_hash on each key.
// Flattened: GCC decides per translation unit whether to inline XXH3's entry function and stops
// doing so in large ones, and with the hash out of line this loop is far slower
// (docs/lookup-paths.md, "Tuned constants").
template <std::size_t Slots = ring_slots, class Keys, class Out, class Hash>
[[gnu::flatten]] std::size_t ring_probe(const Hash& hash, const std::uint64_t* words,
                                        std::uint64_t m, std::uint32_t k, const Keys& keys,
                                        Out& out) noexcept {
  struct slot {
    std::uint64_t g, step, pos;
    std::size_t key;
    std::uint32_t left;  // probes still to test, this one included; 0 = empty slot
  };
  const std::size_t n = std::ranges::size(keys);
  std::size_t next = 0, live = 0, positives = 0;
  const auto start = [&](slot& s) {
    const hash128 h = hash_key(hash, keys[next]);
    s = {h.low, h.high, reduce(h.low, m), next++, k};
    prefetch(words + (s.pos >> 6));
  };
  slot ring[Slots];
  for (slot& s : ring) {
    s.left = 0;
    if (next < n) {
      start(s);
      ++live;
    }
  }
  for (std::size_t j = 0; live != 0; j = (j + 1) % Slots) {
    slot& s = ring[j];
    if (s.left == 0) continue;
    const bool set = test_bit(words, s.pos);
    if (set && s.left > 1) {
      s.g += s.step;
      s.pos = reduce(s.g, m);
      prefetch(words + (s.pos >> 6));
      --s.left;
      continue;
    }
    out[s.key] = set;
    positives += set;
    if (next < n) {
      start(s);
    } else {
      s.left = 0;
      --live;
    }
  }
  return positives;
}

// may_contain for each key in turn, for filters small enough to stay in cache. Flattened like
// ring_probe.
template <class Keys, class Out, class Hash>
[[gnu::flatten]] std::size_t plain_probe(const Hash& hash, const std::uint64_t* words,
                                         std::uint64_t m, std::uint32_t k, const Keys& keys,
                                         Out& out) noexcept {
  const std::size_t n = std::ranges::size(keys);
  std::size_t positives = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hit = probe_hash(words, m, k, hash_key(hash, keys[i]));
    out[i] = hit;
    positives += hit;
  }
  return positives;
}

// may_contain for many keys: the plain loop on cache-resident filters, batched_probe beyond them,
// ring_probe far beyond them.
template <class Keys, class Out>
std::size_t probe_many(const hasher& hash, const std::uint64_t* words, std::uint64_t m,
                       std::uint32_t k, const Keys& keys, Out& out) {
  check_batch_sizes(keys, out);
  const std::uint64_t bytes = words_for_bits(m) * 8;
  return hash.with_mode([&](const auto& h) {
    if (bytes < batch_min_bytes) return plain_probe(h, words, m, k, keys, out);
    if (bytes >= ring_min_bytes) return ring_probe(h, words, m, k, keys, out);
    return batched_probe<Keys, Out, std::decay_t<decltype(h)>>(h, words, m, k, keys, out).run();
  });
}

}  // namespace bloomery::detail
