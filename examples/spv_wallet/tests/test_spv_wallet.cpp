// bloomery-spv's parsing and matching (transaction.hpp, matching.hpp) against Bitcoin Core's
// vectors: src/test/bloom_tests.cpp, test case `bloom_match` (a real transaction, one that spends
// it, which elements must and must not match, and BLOOM_UPDATE_ALL adding the matched outpoint).
#include <gtest/gtest.h>
#include <bloomery/bip37.hpp>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "matching.hpp"
#include "transaction.hpp"

namespace {

using bloomery::bip37_filter;
using bloomery::bip37_update;
using bytes = std::vector<std::uint8_t>;

// bloom_match's transaction b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b.
const std::string tx_hex =
    "01000000010b26e9b7735eb6aabdf358bab62f9816a21ba9ebdb719d5299e88607d722c190000000008b48304502"
    "20070aca44506c5cef3a16ed519d7c3c39f8aab192c4e1c90d065f37b8a4af6141022100a8e160b856c2d43d27d8"
    "fba71e5aef6405b8643ac4cb7cb3c462aced7f14711a0141046d11fee51b0e60666d5049a9101a72741df480b96e"
    "e26488a4d3466b95c9a40ac5eeef87e10a5cd336c19a84565f80fa6c547957b7700ff4dfbdefe76036c339ffffff"
    "ff021bff3d11000000001976a91404943fdd508053c75000106d3bc6e2754dbcff1988ac2f15de00000000001976"
    "a914a266436d2965547608b9e15d9032a7b9d64fa43188ac00000000";
// bloom_match's spending transaction
// e2769b09e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436 (Core writes it as a byte array;
// these are the same bytes).
const std::string spending_hex =
    "01000000016bff7fcd4f8565ef406dd5d63d4ff94f318fe82027fd4dc451b04474019f74b4000000008c49304602"
    "2100da0dc6aecefe1e06efdf05773757deb168820930e3b0d03f46f5fcf150bf990c022100d25b5c87040076e4f2"
    "53f8262e763e2dd51e7ff0be157727c4bc42807f17bd39014104e6c26ef67dc610d2cd192484789a6cf9aea9930b"
    "944b7e2db5342b9d9e5b9ff79aff9a2ee1978dd7fd01dfc522ee02283d3b06a9d03acf8096968d7dbb0f9178ffff"
    "ffff028ba7940e000000001976a914badeecfdef0507247fc8f74241d73bc039972d7b88ac4094a8020000000019"
    "76a914c10932483fec93ed51f5fe95e72559f2cc7043f988ac00000000";

// Core's uint256S: display hex (byte-reversed) to the bytes as hashed.
bytes reversed(const std::string& display_hex) {
  bytes b = spv::from_hex(display_hex);
  std::reverse(b.begin(), b.end());
  return b;
}
bytes outpoint(const std::string& display_txid, std::uint8_t index) {
  bytes b = reversed(display_txid);
  b.resize(36);
  b[32] = index;
  return b;
}

// bloom_match's filter: CBloomFilter(10, 0.000001, 0, flags), holding one element.
bip37_filter filter_with(const bytes& element, bip37_update flags = bip37_update::all) {
  bip37_filter f({.capacity = 10, .fpr = 0.000001}, 0, flags);
  f.insert(element);
  return f;
}

bool matches(const bytes& element, const std::string& hex) {
  bip37_filter f = filter_with(element);
  const bytes raw = spv::from_hex(hex);
  return spv::is_relevant_and_update(f, spv::parse_transaction(raw));
}

}  // namespace

TEST(SpvWallet, TxidIsTheDoubleSha256ShownReversed) {
  const bytes raw = spv::from_hex(tx_hex), spend = spv::from_hex(spending_hex);
  const spv::transaction tx = spv::parse_transaction(raw);
  EXPECT_EQ(spv::to_hex(tx.txid, true),
            "b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b");
  EXPECT_FALSE(tx.segwit);
  EXPECT_EQ(tx.inputs.size(), 1u);
  EXPECT_EQ(tx.outputs.size(), 2u);
  EXPECT_EQ(tx.outputs[0].value, 0x113dff1bu);
  EXPECT_EQ(spv::to_hex(spv::parse_transaction(spend).txid, true),
            "e2769b09e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436");
}

// bloom_match: the elements Core expects to match, each in a fresh filter.
TEST(SpvWallet, BitcoinCoreBloomMatchPositives) {
  const std::string txid = "b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b";
  EXPECT_TRUE(matches(reversed(txid), tx_hex));  // tx hash
  EXPECT_TRUE(matches(spv::from_hex("6bff7fcd4f8565ef406dd5d63d4ff94f318fe82027fd4dc451b04474019f7"
                                    "4b4"),
                      tx_hex));  // manually serialized tx hash
  EXPECT_TRUE(matches(spv::from_hex("30450220070aca44506c5cef3a16ed519d7c3c39f8aab192c4e1c90d065f37"
                                    "b8a4af6141022100a8e160b856c2d43d27d8fba71e5aef6405b8643ac4cb7c"
                                    "b3c462aced7f14711a01"),
                      tx_hex));  // input signature
  EXPECT_TRUE(matches(spv::from_hex("046d11fee51b0e60666d5049a9101a72741df480b96ee26488a4d3466b95c9"
                                    "a40ac5eeef87e10a5cd336c19a84565f80fa6c547957b7700ff4dfbdefe760"
                                    "36c339"),
                      tx_hex));  // input public key
  EXPECT_TRUE(matches(spv::from_hex("a266436d2965547608b9e15d9032a7b9d64fa431"), tx_hex));
  // COutPoint, and the same 36 bytes serialized by hand.
  EXPECT_TRUE(matches(
      outpoint("90c122d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b", 0), tx_hex));
}

TEST(SpvWallet, BitcoinCoreBloomMatchNegatives) {
  EXPECT_FALSE(matches(reversed("00000009e784f32f62ef849763d4f45b98e07ba658647343b915ff832b110436"),
                       tx_hex));
  EXPECT_FALSE(matches(spv::from_hex("0000006d2965547608b9e15d9032a7b9d64fa431"), tx_hex));
  EXPECT_FALSE(matches(
      outpoint("90c122d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b", 1), tx_hex));
  EXPECT_FALSE(matches(
      outpoint("000000d70786e899529d71dbeba91ba216982fb6ba58f3bdaab65e73b7e9260b", 0), tx_hex));
}

// bloom_match: "didn't add output". Under BLOOM_UPDATE_ALL a matched output's outpoint joins the
// filter, so the transaction spending it matches too; under NONE, and under P2PUBKEY_ONLY for
// this pay-to-pubkey-hash output, it does not.
TEST(SpvWallet, UpdateAllAddsTheMatchedOutpoint) {
  const bytes raw = spv::from_hex(tx_hex), spend_raw = spv::from_hex(spending_hex);
  const spv::transaction tx = spv::parse_transaction(raw);
  const spv::transaction spend = spv::parse_transaction(spend_raw);
  const bytes address = spv::from_hex("04943fdd508053c75000106d3bc6e2754dbcff19");
  for (const auto flags : {bip37_update::all, bip37_update::none, bip37_update::p2pubkey_only}) {
    bip37_filter f = filter_with(address, flags);
    EXPECT_FALSE(f.may_contain(spv::outpoint(tx, 0)));
    EXPECT_TRUE(spv::is_relevant_and_update(f, tx));
    EXPECT_EQ(f.may_contain(spv::outpoint(tx, 0)), flags == bip37_update::all);
    EXPECT_EQ(spv::is_relevant_and_update(f, spend), flags == bip37_update::all);
  }
}

// A transaction with one input and the given output scripts (legacy serialization), all in hex.
// (Built as hex: GCC 12 warns falsely, -Warray-bounds, on small inserts into byte vectors.)
std::string make_tx(const std::vector<std::string>& scripts,
                    const std::string& prevout = std::string(72, '1')) {
  const auto byte = [](std::size_t v) { return spv::to_hex(bytes{static_cast<std::uint8_t>(v)}); };
  std::string tx = "0100000001" + prevout + "00ffffffff" + byte(scripts.size());
  for (const std::string& s : scripts) tx += "1027000000000000" + byte(s.size() / 2) + s;
  return tx + "00000000";
}

TEST(SpvWallet, P2PubkeyOnlyAddsPayToPubkeyAndMultisigOutpoints) {
  const std::string key = "02" + std::string(64, 'a'), other = "03" + std::string(64, 'b');
  const std::string p2pk = "21" + key + "ac";
  const std::string multisig = "5121" + key + "21" + other + "52ae";  // 1-of-2
  EXPECT_TRUE(spv::is_pay_to_pubkey(spv::from_hex(p2pk)));
  EXPECT_FALSE(spv::is_bare_multisig(spv::from_hex(p2pk)));
  EXPECT_TRUE(spv::is_bare_multisig(spv::from_hex(multisig)));
  EXPECT_FALSE(spv::is_pay_to_pubkey(spv::from_hex(multisig)));
  EXPECT_FALSE(spv::is_bare_multisig(spv::from_hex("53" + multisig.substr(2))));  // 3-of-2
  EXPECT_FALSE(spv::is_bare_multisig(spv::from_hex(multisig + "ae")));            // a byte too many
  EXPECT_FALSE(spv::is_pay_to_pubkey(spv::from_hex("2104" + std::string(64, 'a') + "ac")));

  for (const std::string& script : {p2pk, multisig}) {
    const bytes raw = spv::from_hex(make_tx({"76a914" + std::string(40, '0') + "88ac", script}));
    const spv::transaction tx = spv::parse_transaction(raw);
    bip37_filter f = filter_with(spv::from_hex(key), bip37_update::p2pubkey_only);
    EXPECT_TRUE(spv::is_relevant_and_update(f, tx));
    EXPECT_TRUE(f.may_contain(spv::outpoint(tx, 1)));   // the matched output
    EXPECT_FALSE(f.may_contain(spv::outpoint(tx, 0)));  // not the other one
    const bytes spender = spv::from_hex(make_tx({}, spv::to_hex(spv::outpoint(tx, 1))));
    EXPECT_TRUE(spv::is_relevant_and_update(f, spv::parse_transaction(spender)));
  }
}

TEST(SpvWallet, ScriptPushesAsBitcoinReadsThem) {
  const auto pushes = [](const std::string& hex) {
    const bytes script = spv::from_hex(hex);
    std::vector<std::string> out;
    spv::for_each_op(script, [&](std::uint8_t, spv::bytes_view data) {
      out.push_back(spv::to_hex(data));
      return false;
    });
    return out;
  };
  using v = std::vector<std::string>;
  EXPECT_EQ(pushes("02aabb76"), (v{"aabb", ""}));
  EXPECT_EQ(pushes("4c03aabbcc4d0200ddee4e01000000ff00"), (v{"aabbcc", "ddee", "ff", ""}));
  EXPECT_EQ(pushes("51054c05aabb"), v{""});  // OP_1, then a 5-byte push with 4 bytes left
  EXPECT_EQ(pushes("4c05aabb"), v{});        // runs past the end: parsing stops
  EXPECT_EQ(pushes("4d01"), v{});
}

// The segwit serialization of bloom_match's transaction, with a witness added: same txid, same
// answers.
TEST(SpvWallet, SegwitSerializationKeepsTheTxid) {
  std::string segwit = tx_hex.substr(0, 8) + "0001" + tx_hex.substr(8, tx_hex.size() - 16) +
                       "0201aa02bbcc" + tx_hex.substr(tx_hex.size() - 8);
  const bytes raw = spv::from_hex(segwit);
  const spv::transaction tx = spv::parse_transaction(raw);
  EXPECT_TRUE(tx.segwit);
  EXPECT_EQ(spv::to_hex(tx.txid, true),
            "b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b");
  EXPECT_TRUE(matches(spv::from_hex("a266436d2965547608b9e15d9032a7b9d64fa431"), segwit));
  EXPECT_FALSE(matches(spv::from_hex("aa"), segwit));  // witness items are not data elements
}

TEST(SpvWallet, MalformedTransactionsAreErrors) {
  const auto error_of = [](const std::string& hex) {
    try {
      const bytes raw = spv::from_hex(hex);
      (void)spv::parse_transaction(raw);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(tx_hex.substr(0, tx_hex.size() - 2)),
            "truncated: the lock time at byte 254 needs 4 bytes, 3 left");
  EXPECT_EQ(error_of(tx_hex + "00"), "1 byte after the transaction's end");
  EXPECT_EQ(error_of("0100"), "truncated: the version at byte 0 needs 4 bytes, 2 left");
  EXPECT_EQ(error_of("01000000"), "truncated: the input count at byte 4 needs 1 byte, 0 left");
  EXPECT_EQ(error_of("01000000ff"), "truncated: the input count at byte 5 needs 8 bytes, 0 left");
  EXPECT_EQ(error_of("01000000fd0100"), "non-canonical compact size for the input count");
  EXPECT_EQ(error_of("0100000005" + std::string(100, '0')),
            "the input count says 5, more than the 50 bytes left hold");
  EXPECT_EQ(error_of("010000000002"),
            "segwit marker 0x00 followed by flag 2; only flag 1 is defined");
  std::string no_witness = tx_hex.substr(0, 8) + "0001" + tx_hex.substr(8, tx_hex.size() - 16) +
                           "00" + tx_hex.substr(tx_hex.size() - 8);
  EXPECT_EQ(error_of(no_witness), "segwit serialization without any witness data");
  EXPECT_EQ(error_of("abc"), "odd number of hex digits (3)");
  EXPECT_EQ(error_of("0g"), "character 2 is not a hex digit");
}
