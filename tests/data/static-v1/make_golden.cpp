// Writes tests/data/static-v1: static filter files of both widths as bloomery wrote them before the
// any-width layout, plus every absent probe each one answered "maybe" to.
#include <bloomery/bloomery.hpp>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>
using namespace bloomery;
int main(int, char** argv) {
  const std::string dir = argv[1];
  std::vector<std::uint64_t> ints;
  for (std::uint64_t i = 0; i < 10000; ++i) ints.push_back(i * 7919 + 1);
  std::vector<std::string> strs;
  for (int i = 0; i < 10000; ++i) strs.push_back("https://example.com/page/" + std::to_string(i));
  const auto s8 = static_filter::build(ints, 0.01);
  const auto s16 = static_filter::build(ints, 0.0001);
  const auto t8 = static_filter::build(strs, fingerprint_width::bits8);
  save(s8, dir + "/static8.bf");
  save(s16, dir + "/static16.bf");
  save(t8, dir + "/static8_strings.bf");
  std::ofstream out(dir + "/answers.txt");
  out << "# file probe-index (the absent probes answered \"maybe\")\n";
  for (std::uint64_t i = 0; i < 200000; ++i) {
    const std::uint64_t k = i * 7919 + 2;  // never a key: keys are 1 mod 7919
    if (s8.may_contain(k)) out << "static8.bf " << i << "\n";
    if (s16.may_contain(k)) out << "static16.bf " << i << "\n";
    const std::string s = "https://example.com/absent/" + std::to_string(i);
    if (t8.may_contain(s)) out << "static8_strings.bf " << i << "\n";
  }
  std::printf("%u %u %u\n", s8.fingerprint_bits(), s16.fingerprint_bits(), t8.fingerprint_bits());
}
