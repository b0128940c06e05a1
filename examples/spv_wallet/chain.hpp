// The synthetic chain of `bloomery-spv --simulate`: a wallet's keys, typical transactions (some
// paying or spending the wallet) and the size of what a light client downloads per block.
#pragma once

#include <bloomery/examples/workload.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace spv {

namespace ex = bloomery::examples;
using bytes = std::vector<std::uint8_t>;

inline void put_random(bytes& out, std::size_t n, std::uint64_t& state) {
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(static_cast<std::uint8_t>(ex::uniform_below(state, 256)));
}
inline void put_le(bytes& out, std::uint64_t v, int width) {
  for (int i = 0; i < width; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}

// The wallet's keys and their hashes. Only bytes reach a filter, so the hashes are random stand-ins
// for HASH160(key), and the keys random 33-byte compressed-key shapes.
struct wallet {
  std::vector<bytes> pubkeys, hashes;
  wallet(std::uint64_t n, std::uint64_t& state) {
    for (std::uint64_t i = 0; i < n; ++i) {
      pubkeys.push_back({2});
      put_random(pubkeys.back(), 32, state);
      hashes.emplace_back();
      put_random(hashes.back(), 20, state);
    }
  }
};

// A typical transaction: 1-3 inputs spending pay-to-pubkey-hash outputs (scriptSig: signature and
// key), 1-3 pay-to-pubkey-hash outputs. `pay`/`spend`: the first output pays / the first input
// is signed by one of the wallet's keys.
inline bytes make_tx(std::uint64_t& state, const wallet& w, bool pay, bool spend) {
  bytes tx;
  put_le(tx, 1, 4);  // version
  const auto inputs = 1 + ex::uniform_below(state, 3), outputs = 1 + ex::uniform_below(state, 3);
  tx.push_back(static_cast<std::uint8_t>(inputs));
  for (std::uint64_t i = 0; i < inputs; ++i) {
    put_random(tx, 32, state);                   // spent txid
    put_le(tx, ex::uniform_below(state, 4), 4);  // and output index
    tx.insert(tx.end(), {107, 72});  // scriptSig: push 72-byte signature, push 33-byte key
    put_random(tx, 72, state);
    tx.push_back(33);
    if (spend && i == 0) {
      const bytes& key = w.pubkeys[ex::uniform_below(state, w.pubkeys.size())];
      tx.insert(tx.end(), key.begin(), key.end());
    } else {
      tx.push_back(3);
      put_random(tx, 32, state);
    }
    put_le(tx, 0xFFFFFFFF, 4);  // sequence
  }
  tx.push_back(static_cast<std::uint8_t>(outputs));
  for (std::uint64_t i = 0; i < outputs; ++i) {
    put_le(tx, 1000 + ex::uniform_below(state, 100'000'000), 8);
    // Pay to pubkey hash: OP_DUP OP_HASH160 <20 bytes> OP_EQUALVERIFY OP_CHECKSIG.
    tx.insert(tx.end(), {25, 0x76, 0xa9, 20});
    if (pay && i == 0) {
      const bytes& h = w.hashes[ex::uniform_below(state, w.hashes.size())];
      tx.insert(tx.end(), h.begin(), h.end());
    } else {
      put_random(tx, 20, state);
    }
    tx.insert(tx.end(), {0x88, 0xac});
  }
  put_le(tx, 0, 4);  // lock time
  return tx;
}

inline std::uint64_t compact_size_bytes(std::uint64_t n) {
  return n < 0xfd ? 1 : n <= 0xffff ? 3 : n <= 0xffffffff ? 5 : 9;
}

// A merkleblock's bytes for a block whose `matched` transactions are sent (BIP 37, "Partial
// Merkle branch format"): header, transaction count, the hashes and flag bits of the partial tree.
inline std::uint64_t merkleblock_bytes(const std::vector<bool>& matched) {
  const std::uint64_t n = matched.size();
  const auto width = [n](int h) { return (n + (std::uint64_t{1} << h) - 1) >> h; };
  int height = 0;
  while (width(height) > 1) ++height;
  std::uint64_t hashes = 0, bits = 0;
  const auto walk = [&](const auto& self, int h, std::uint64_t pos) -> void {
    ++bits;
    const auto first = matched.begin() + static_cast<std::ptrdiff_t>(pos << h);
    const auto last = matched.begin() + static_cast<std::ptrdiff_t>(std::min((pos + 1) << h, n));
    if (h == 0 || std::find(first, last, true) == last) return void(++hashes);
    self(self, h - 1, pos * 2);
    if (pos * 2 + 1 < width(h - 1)) self(self, h - 1, pos * 2 + 1);
  };
  walk(walk, height, 0);
  const std::uint64_t flag_bytes = (bits + 7) / 8;
  return 80 + 4 + compact_size_bytes(hashes) + 32 * hashes + compact_size_bytes(flag_bytes) +
         flag_bytes;
}

}  // namespace spv
