// explain, blocked Bloom filter: each key picks one 512-bit block and k bits inside it; bits are
// numbered within the block.
#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "cli.hpp"
#include "explain/explain.hpp"

namespace bloomery_cli::explain {

int explain_filter(bloomery::blocked_bloom_filter f, const request& r) {
  using positions_t = bloomery::blocked_positions;
  std::printf(
      "The blocked Bloom filter %s: %llu blocks of %u bits, k = %u bits per key in one block, "
      "%llu bits set.\n",
      quoted(r.file).c_str(),
      static_cast<unsigned long long>(f.bit_count() / positions_t::block_bits),
      positions_t::block_bits, f.hash_count(), static_cast<unsigned long long>(f.set_bit_count()));
  for (const std::string& key : r.keys) {
    const positions_t p = bloomery::positions(f, key);
    f.insert(key);
    std::printf("\ninsert %s: block %llu, bits %s of that block; set them to 1.\n",
                quoted(key).c_str(), static_cast<unsigned long long>(p.block),
                join(p.bits).c_str());
  }
  for (const std::string& key : r.queries) {
    const positions_t p = bloomery::positions(f, key);
    std::printf("\nquery %s: block %llu, bits %s\n", quoted(key).c_str(),
                static_cast<unsigned long long>(p.block), join(p.bits).c_str());
    std::vector<std::uint64_t> clear;
    for (std::size_t i = 0; i < p.bits.size(); ++i) {
      const bool set = bit_set_in(f.words(), p.bit_index(i));
      if (!set) clear.push_back(p.bits[i]);
      std::printf("  bit %u is %s\n", p.bits[i], set ? "1" : "0");
    }
    if (!clear.empty()) {
      definitely_not(zero_list("bit", clear) + " 0, and every inserted key sets all of its bits");
    } else {
      possibly("all " + std::to_string(f.hash_count()) + " bits of block " +
               std::to_string(p.block) + " are 1. They may have been set by other keys");
    }
  }
  return 0;
}

}  // namespace bloomery_cli::explain
