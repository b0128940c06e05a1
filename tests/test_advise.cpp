#include <gtest/gtest.h>
#include <bloomery/advise.hpp>

#include <algorithm>
#include <string>

using namespace bloomery;

namespace {

const advice& find(const std::vector<advice>& list, const std::string& kind) {
  const auto it =
      std::find_if(list.begin(), list.end(), [&](const auto& a) { return a.kind == kind; });
  if (it == list.end()) throw std::runtime_error("no advice for " + kind);
  return *it;
}

std::vector<std::string> suitable_kinds(const std::vector<advice>& list) {
  std::vector<std::string> kinds;
  for (const auto& a : list)
    if (a.suitable) kinds.push_back(a.kind);
  return kinds;
}

}  // namespace

TEST(Advise, RanksEveryKindSuitableFirstBySize) {
  const auto list = advise({.capacity = 1'000'000, .fpr = 0.01});
  ASSERT_EQ(list.size(), 8u);
  bool seen_unsuitable = false;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].suitable) seen_unsuitable = true;
    EXPECT_FALSE(seen_unsuitable && list[i].suitable) << "suitable after unsuitable: " << i;
    if (i > 0 && list[i].suitable == list[i - 1].suitable) {
      EXPECT_GE(list[i].plan.bytes, list[i - 1].plan.bytes) << list[i].kind;
    }
    EXPECT_FALSE(list[i].note.empty());
  }
  // A plain workload: at 1% the cuckoo filter (semi-sorted buckets, 9.49 bits per key) is the
  // smallest thing that fits, just under the classic filter (9.59), beside the scalable cuckoo
  // filter, whose first table is the same; at 5% the classic filter is. The static filter does not
  // fit (keys arrive over time).
  EXPECT_EQ(list.front().kind, "cuckoo");
  EXPECT_EQ(list[1].kind, "scalable-cuckoo");
  EXPECT_EQ(list[1].plan.bytes, list[0].plan.bytes);
  EXPECT_EQ(list[2].kind, "bloom");
  EXPECT_EQ(advise({.capacity = 1'000'000, .fpr = 0.05}).front().kind, "bloom");
  EXPECT_FALSE(find(list, "static").suitable);
  EXPECT_EQ(find(list, "bloom").plan.bytes, bloom_filter::plan({1'000'000, 0.01}).bytes);
  EXPECT_EQ(find(list, "cuckoo").plan.bytes, cuckoo_filter::plan({1'000'000, 0.01}).bytes);
}

TEST(Advise, DeletesLeaveOnlyStructuresThatCanRemove) {
  const auto list = advise({.capacity = 200'000, .fpr = 0.001, .deletes = true});
  EXPECT_EQ(suitable_kinds(list),
            (std::vector<std::string>{"cuckoo", "scalable-cuckoo", "counting", "exact set"}));
  // At 0.1% the cuckoo filter beats even the classic Bloom filter (which cannot delete).
  EXPECT_LT(find(list, "cuckoo").plan.bytes, find(list, "bloom").plan.bytes);
  EXPECT_NE(find(list, "bloom").note.find("cannot delete"), std::string::npos);
}

TEST(Advise, StaticSetsAndGrowingSets) {
  const auto fixed = advise({.capacity = 1'000'000, .fpr = 0.004, .static_set = true});
  EXPECT_EQ(fixed.front().kind, "static");
  EXPECT_LT(fixed.front().plan.bits_per_key, 9.2);
  const auto growing = advise({.capacity = 1'000, .fpr = 0.01, .grows = true});
  EXPECT_EQ(suitable_kinds(growing), (std::vector<std::string>{"scalable", "exact set"}));
  // The cuckoo filter fills up; the scalable cuckoo filter grows, but its rate rises as it does.
  EXPECT_EQ(find(growing, "cuckoo").note, "inserts fail once the table is full");
  EXPECT_EQ(find(growing, "scalable-cuckoo").note,
            "cannot grow past capacity without its FPR rising");
}

TEST(Advise, ExactSetBaselineDependsOnKeyLength) {
  const auto short_keys = advise({.capacity = 1'000, .fpr = 0.01, .key_bytes = 8});
  const auto long_keys = advise({.capacity = 1'000, .fpr = 0.01, .key_bytes = 100});
  const auto& a = find(short_keys, "exact set");
  const auto& b = find(long_keys, "exact set");
  EXPECT_EQ(a.plan.expected_fpr, 0.0);
  EXPECT_EQ(a.plan.bytes, 72'000u);  // 72 bytes per key: node, allocator header, bucket
  EXPECT_GT(b.plan.bytes, a.plan.bytes + 100'000);
  EXPECT_TRUE(a.suitable);
  // Every filter is far smaller than the exact set.
  EXPECT_LT(find(short_keys, "counting").plan.bytes, a.plan.bytes);
}

TEST(Advise, InvalidWorkloadsThrow) {
  EXPECT_THROW(advise({.capacity = 0, .fpr = 0.01}), std::invalid_argument);
  EXPECT_THROW(advise({.capacity = 10, .fpr = 2}), std::invalid_argument);
  EXPECT_THROW(advise({.capacity = 10, .fpr = 0.01, .key_bytes = -1}), std::invalid_argument);
}
