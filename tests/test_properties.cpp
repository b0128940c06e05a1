// Property tests (rapidcheck): on random keys of many shapes, nothing ever yields a false
// negative — not after inserts, union, save/load, or through the mapped view.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <bloomery/bloomery.hpp>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "test_support.hpp"

using namespace bloomery;

namespace {

// One key of any supported shape.
using any_key = std::variant<std::string, std::vector<std::uint8_t>, std::int8_t, std::uint16_t,
                             std::int32_t, std::uint32_t, std::int64_t, std::uint64_t>;

rc::Gen<any_key> gen_key() {
  return rc::gen::oneOf(rc::gen::cast<any_key>(rc::gen::arbitrary<std::string>()),
                        rc::gen::cast<any_key>(rc::gen::mapcat(
                            rc::gen::inRange<std::size_t>(0, 4096),
                            [](std::size_t n) {
                              return rc::gen::container<std::string>(
                                  n, rc::gen::arbitrary<char>());  // long, any bytes
                            })),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::vector<std::uint8_t>>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::int8_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::uint16_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::int32_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::uint32_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::int64_t>()),
                        rc::gen::cast<any_key>(rc::gen::arbitrary<std::uint64_t>()));
}

template <class F>
void insert(F& f, const any_key& k) {
  std::visit([&](const auto& v) { f.insert(v); }, k);
}
template <class F>
bool may_contain(const F& f, const any_key& k) {
  return std::visit([&](const auto& v) { return f.may_contain(v); }, k);
}

// Small filters make collisions and saturation likely, which is where bugs hide.
rc::Gen<bloom_parameters> gen_params() {
  return rc::gen::build<bloom_parameters>(
      rc::gen::set(&bloom_parameters::bits, rc::gen::inRange<std::uint64_t>(1, 5000)),
      rc::gen::set(&bloom_parameters::hashes, rc::gen::inRange<std::uint32_t>(1, 17)));
}

}  // namespace

RC_GTEST_PROP(Properties, NoFalseNegativesAfterInsert, ()) {
  const auto p = *gen_params();
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const auto keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  bloom_filter f(p, seed);
  for (const auto& k : keys) insert(f, k);
  for (const auto& k : keys) RC_ASSERT(may_contain(f, k));
}

RC_GTEST_PROP(Properties, NoFalseNegativesAfterUnion, ()) {
  const auto p = *gen_params();
  const auto a_keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  const auto b_keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  bloom_filter a(p), b(p), both(p);
  for (const auto& k : a_keys) insert(a, k), insert(both, k);
  for (const auto& k : b_keys) insert(b, k), insert(both, k);
  a |= b;
  RC_ASSERT(a == both);
  for (const auto& k : a_keys) RC_ASSERT(may_contain(a, k));
  for (const auto& k : b_keys) RC_ASSERT(may_contain(a, k));
}

RC_GTEST_PROP(Properties, IntersectionKeepsCommonKeys, ()) {
  const auto p = *gen_params();
  const auto common = *rc::gen::container<std::vector<any_key>>(gen_key());
  const auto extra = *rc::gen::container<std::vector<any_key>>(gen_key());
  bloom_filter a(p), b(p);
  for (const auto& k : common) insert(a, k), insert(b, k);
  for (const auto& k : extra) insert(a, k);
  a &= b;
  for (const auto& k : common) RC_ASSERT(may_contain(a, k));
}

RC_GTEST_PROP(Properties, NoFalseNegativesThroughSaveLoadAndMap, ()) {
  const auto p = *gen_params();
  const bool keyed = *rc::gen::arbitrary<bool>();
  const auto keys = *rc::gen::container<std::vector<any_key>>(gen_key());
  bloom_filter f(p, keyed ? hasher(random_key()) : hasher(*rc::gen::arbitrary<std::uint64_t>()));
  for (const auto& k : keys) insert(f, k);
  RC_ASSERT(test::files_keep_every_key(
      f, keys, [](const auto& g, const any_key& k) { return may_contain(g, k); }));
}

RC_GTEST_PROP(Properties, BatchedAnswersEqualSingleAnswers, ()) {
  const auto p = *gen_params();
  const auto inserted =
      *rc::gen::container<std::vector<std::string>>(rc::gen::arbitrary<std::string>());
  const auto probes =
      *rc::gen::container<std::vector<std::string>>(rc::gen::arbitrary<std::string>());
  bloom_filter f(p);
  for (const auto& k : inserted) f.insert(k);
  std::vector<std::string> all = probes;
  all.insert(all.end(), inserted.begin(), inserted.end());
  std::vector<bool> out(all.size());
  f.may_contain_many(all, out);
  for (std::size_t i = 0; i < all.size(); ++i) RC_ASSERT(out[i] == f.may_contain(all[i]));
  for (std::size_t i = probes.size(); i < all.size(); ++i) RC_ASSERT(out[i]);
}

RC_GTEST_PROP(Properties, CorruptedImagesNeverCrash, ()) {
  // Arbitrary damage to a valid image: either a clean format_error or (checksum collision, never
  // seen in practice) a valid filter, but never a crash or another exception.
  const auto p = *gen_params();
  bloom_filter f(p);
  f.insert("x");
  auto bytes = serialize(f);
  const auto edits =
      *rc::gen::container<std::vector<std::pair<std::size_t, std::uint8_t>>>(rc::gen::pair(
          rc::gen::inRange<std::size_t>(0, bytes.size()), rc::gen::arbitrary<std::uint8_t>()));
  const auto cut = *rc::gen::inRange<std::size_t>(0, bytes.size() + 1);
  bool changed = cut < bytes.size();
  for (auto [at, v] : edits) {
    changed |= bytes[at] != std::byte{v};
    bytes[at] = std::byte{v};
  }
  bytes.resize(cut);
  if (changed) {
    RC_ASSERT_THROWS_AS(deserialize<bloom_filter>(bytes), format_error);
  } else {
    RC_ASSERT(deserialize<bloom_filter>(bytes) == f);
  }
}
