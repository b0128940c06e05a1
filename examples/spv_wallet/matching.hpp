// BIP37's matching rules ("Filter matching algorithm"), as a full node applies a light client's
// filter to each transaction, with the filter updates nFlags asks for. The order and the details
// (what counts as a data element, when the loop over a script stops) follow Bitcoin Core's
// CBloomFilter::IsRelevantAndUpdate, so that false positives and updates come out the same.
#pragma once

#include <bloomery/bip37.hpp>

#include <array>
#include <cstdint>
#include <cstring>

#include "transaction.hpp"

namespace spv {

// Calls op(opcode, data) for each operation of a script (data is empty unless the opcode pushes)
// until op returns true or the script ends; stops early, as Bitcoin's script parser does, at a
// push that runs past the end. Returns whether op returned true.
template <class Op>
bool for_each_op(bytes_view script, Op&& op) {
  std::size_t pos = 0;
  while (pos < script.size()) {
    const std::uint8_t opcode = script[pos++];
    std::size_t size = 0, width = 0;   // data size, and the bytes that give it
    if (opcode < 0x4c) size = opcode;  // push 0..75 bytes
    if (opcode >= 0x4c && opcode <= 0x4e) width = opcode == 0x4c ? 1 : opcode == 0x4d ? 2 : 4;
    if (script.size() - pos < width) return false;
    for (std::size_t i = width; i > 0; --i) size = size << 8 | script[pos + i - 1];
    pos += width;
    if (script.size() - pos < size) return false;
    if (op(opcode, script.subspan(pos, size))) return true;
    pos += size;
  }
  return false;
}

// A public key's size agrees with its first byte: 33 for 02/03, 65 for 04/06/07.
inline bool valid_pubkey_size(bytes_view k) {
  if (k.empty()) return false;
  const std::uint8_t h = k[0];
  return k.size() == (h == 2 || h == 3 ? 33u : h == 4 || h == 6 || h == 7 ? 65u : 0u);
}

// Pay to pubkey: <33- or 65-byte key> OP_CHECKSIG.
inline bool is_pay_to_pubkey(bytes_view s) {
  return (s.size() == 67 || s.size() == 35) && s[0] == s.size() - 2 && s.back() == 0xac &&
         valid_pubkey_size(s.subspan(1, s.size() - 2));
}

// Bare multisig: OP_m <n keys> OP_n OP_CHECKMULTISIG, 1 <= m <= n <= 16.
inline bool is_bare_multisig(bytes_view s) {
  const auto small = [](std::uint8_t op) { return op >= 0x51 && op <= 0x60 ? op - 0x50 : 0; };
  if (s.size() < 3 || s.back() != 0xae || small(s[0]) == 0) return false;
  std::size_t keys = 0, end = 0;  // end: where the operation last seen ends
  int n = 0;
  for_each_op(s.subspan(1), [&](std::uint8_t opcode, bytes_view data) {
    end = static_cast<std::size_t>(data.data() - s.data()) + data.size();
    if (valid_pubkey_size(data)) {
      ++keys;
      return false;
    }
    n = small(opcode);
    return true;
  });
  return n != 0 && keys == static_cast<std::size_t>(n) && n >= small(s[0]) && end + 1 == s.size();
}

// The 36-byte outpoint of output `index` of `tx`.
inline std::array<std::uint8_t, 36> outpoint(const transaction& tx, std::uint32_t index) {
  std::array<std::uint8_t, 36> o{};
  std::memcpy(o.data(), tx.txid.data(), 32);
  for (int i = 0; i < 4; ++i) o[32 + i] = static_cast<std::uint8_t>(index >> (8 * i));
  return o;
}

// Whether the filter matches `tx`, updating it as its flags say. In order: the txid; each data
// push of each output script (a matching output's outpoint is inserted under BLOOM_UPDATE_ALL, and
// under BLOOM_UPDATE_P2PUBKEY_ONLY when it pays to a pubkey or a bare multisig); then each spent
// outpoint and each data push of each scriptSig.
inline bool is_relevant_and_update(bloomery::bip37_filter& f, const transaction& tx) {
  bool found = f.may_contain(tx.txid);
  for (std::uint32_t i = 0; i < tx.outputs.size(); ++i) {
    const bytes_view script = tx.outputs[i].script;
    const bool hit = for_each_op(script, [&](std::uint8_t, bytes_view data) {
      return !data.empty() && f.may_contain(data);
    });
    if (!hit) continue;
    found = true;
    if (f.flags() == bloomery::bip37_update::all ||
        (f.flags() == bloomery::bip37_update::p2pubkey_only &&
         (is_pay_to_pubkey(script) || is_bare_multisig(script)))) {
      f.insert(outpoint(tx, i));
    }
  }
  if (found) return true;
  for (const tx_input& in : tx.inputs) {
    if (f.may_contain(in.outpoint)) return true;
    if (for_each_op(in.script_sig, [&](std::uint8_t, bytes_view data) {
          return !data.empty() && f.may_contain(data);
        })) {
      return true;
    }
  }
  return false;
}

}  // namespace spv
