// The writer crash_harness kills while it is inside bloomery::save:
//   bloomery_crash_save_writer FILE BATCH
// loads FILE (any insertable kind), finds its generation from the insert count, prints
// "ready G", then forever inserts the next generation's keys, saves the filter over FILE and
// prints "saved G+1". Lines go straight to the descriptor, so the harness sees every report the
// writer made before it died.
#include <unistd.h>

#include <bloomery/bloomery.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "crash_model.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s FILE BATCH\n", argv[0]);
    return 2;
  }
  try {
    const std::string file = argv[1];
    const std::uint64_t batch = std::stoull(argv[2]);
    bloomery::any_filter f = bloomery::load_any(file);
    const std::uint64_t inserted = f.stats().inserted;
    // Scalable filters skip keys that already answer "possibly present", so their count may fall
    // short of the keys given by a few false positives: round up to the generation.
    std::uint64_t g = (inserted + batch / 2) / batch;
    bloomery_crash::report("ready", g);
    for (;; ++g) {
      f.visit([&]<class F>(F& x) {
        if constexpr (bloomery::insertable_filter<F>) {
          for (std::uint64_t i = g * batch; i < (g + 1) * batch; ++i) {
            if (!x.insert(bloomery_crash::key(i))) {
              throw std::runtime_error("the filter is full at key " + std::to_string(i));
            }
          }
        } else {
          throw std::runtime_error("a filter that takes no inserts");
        }
      });
      bloomery::save(f, file);
      bloomery_crash::report("saved", g + 1);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bloomery_crash_save_writer: %s\n", e.what());
    return 3;
  }
}
