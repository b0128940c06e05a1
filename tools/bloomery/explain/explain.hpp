// bloomery explain, the teaching mode: for each kind of filter, where each key goes (from the
// library's positions()) and why a query answers "definitely not" or "possibly". One file per
// kind; explain.cpp parses the arguments and picks the kind.
#pragma once

#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace bloomery_cli::explain {

// "3, 9, 28"
template <class T>
std::string join(const std::vector<T>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

// "bit 7 is" / "bits 3, 9 are": the zero bits or counters of a "definitely not present".
std::string zero_list(const char* what, const std::vector<std::uint64_t>& v);

// The last line of a query's walk-through, the same for every kind: "definitely not present"
// with why the filter can be sure, or "possibly present" with what it saw (which a false positive
// would show too).
void definitely_not(const std::string& why);
void possibly(const std::string& saw);

// Bit i of a filter's words() (bit i % 64 of word i / 64).
inline bool bit_set_in(std::span<const std::uint64_t> words, std::uint64_t i) {
  return ((words[i / 64] >> (i % 64)) & 1) != 0;
}

// What explain was asked: the filter file (empty for a new filter from -m and -k), the keys to
// insert (in memory only; the file is not changed), then the keys to query.
struct request {
  std::string file;
  std::vector<std::string> keys;
  std::vector<std::string> queries;
};

// The walk-through for a filter loaded from r.file: an overload for each kind with a drawing of
// its own (one file each in explain/). A kind without one gets explain_generic: the dispatch in
// explain.cpp comes from the kind table, so a new kind is explained before it has a drawing.
// Return the exit status.
int explain_filter(bloomery::bloom_filter f, const request& r);
int explain_filter(bloomery::blocked_bloom_filter f, const request& r);
int explain_filter(bloomery::counting_bloom_filter f, const request& r);
int explain_filter(bloomery::cuckoo_filter f, const request& r);
int explain_filter(bloomery::scalable_bloom_filter f, const request& r);
int explain_filter(bloomery::static_filter f, const request& r);
int explain_filter(bloomery::scalable_cuckoo_filter f, const request& r);

// Any kind: inserts each key (in memory) and gives each query's verdict, with the filter's
// statistics; no drawing of where the keys go.
int explain_generic(bloomery::any_filter f, const request& r);

}  // namespace bloomery_cli::explain
