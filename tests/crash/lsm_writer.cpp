// The writer crash_harness kills while the LSM store flushes:
//   bloomery_crash_lsm_writer DIR FILTER BATCH
// opens the store in DIR (FILTER: none, bloom, blocked or static), takes its table count as the
// number of durable flushes G, prints "ready G", then forever writes generation G's puts,
// overwrite and remove (crash_model.hpp), flushes and prints "flushed G+1".
#include <unistd.h>

#include <bloomery/lsm/store.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "crash_model.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s DIR none|bloom|blocked|static BATCH\n", argv[0]);
    return 2;
  }
  try {
    const std::string filter = argv[2];
    const std::uint64_t batch = std::stoull(argv[3]);
    bloomery::lsm::options opts;
    opts.filter = filter == "none" ? std::nullopt : bloomery::parse_filter_kind(filter);
    if (filter != "none" && !opts.filter) throw std::runtime_error("unknown filter " + filter);
    opts.memtable_entries = 2 * batch + 16;  // only the explicit flush() writes tables
    bloomery::lsm::store s = bloomery::lsm::store::open(argv[1], opts);
    std::uint64_t g = s.tables().size();
    bloomery_crash::report("ready", g);
    for (;; ++g) {
      for (std::uint64_t i = 0; i < batch; ++i) {
        s.put(bloomery_crash::key(g * batch + i), bloomery_crash::value_of(g, i));
      }
      if (g > 0) {
        s.put(bloomery_crash::key((g - 1) * batch), bloomery_crash::overwrite_of(g));
        s.remove(bloomery_crash::key((g - 1) * batch + 1));
      }
      s.flush();
      bloomery_crash::report("flushed", g + 1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomery_crash_lsm_writer: %s\n", e.what());
    return 3;
  }
}
