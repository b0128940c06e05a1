// bloomery-redis.so: RedisBloom-compatible BF.* and CF.* commands on bloomery's filters
// (docs/redis.md).
#include <bloomery/version.hpp>

#include <cstdint>
#include <optional>

#include "bloom_type.hpp"
#include "command_support.hpp"
#include "cuckoo_type.hpp"
#include "cuckoo_value.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"

using namespace bloomery_redis;

namespace {

// bloomery's range of fingerprint widths.
constexpr long long min_fingerprint_bits = 4, max_fingerprint_bits = 16;

struct load_options {
  std::uint32_t cf_fingerprint_bits = cf_default_fingerprint_bits;
  double memory_headroom = default_memory_headroom;
};

// The load arguments, name/value pairs: `CF_FINGERPRINT_BITS n` (n in 4..16) and
// `MEMORY_HEADROOM f` (f in 0..0.9). Anything else is logged and fails the load, so a typo in
// redis.conf is not silently ignored.
std::optional<load_options> parse_load_arguments(RedisModuleCtx* ctx, RedisModuleString** argv,
                                                 int argc) {
  load_options o;
  for (int i = 0; i < argc; i += 2) {
    RedisModuleString* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (is_keyword(argv[i], "CF_FINGERPRINT_BITS")) {
      const std::optional<long long> bits = value ? to_integer(value) : std::nullopt;
      if (!bits || *bits < min_fingerprint_bits || *bits > max_fingerprint_bits) {
        RedisModule_Log(ctx, "warning",
                        "bloomery-redis: CF_FINGERPRINT_BITS must be an integer from 4 to 16");
        return std::nullopt;
      }
      o.cf_fingerprint_bits = static_cast<std::uint32_t>(*bits);
    } else if (is_keyword(argv[i], "MEMORY_HEADROOM")) {
      const std::optional<double> f = value ? to_double(value) : std::nullopt;
      if (!f || !(*f >= 0 && *f <= max_memory_headroom)) {
        RedisModule_Log(ctx, "warning",
                        "bloomery-redis: MEMORY_HEADROOM must be a fraction from 0 to 0.9 (of the "
                        "available memory a new filter must leave free)");
        return std::nullopt;
      }
      o.memory_headroom = *f;
    } else {
      RedisModule_Log(ctx, "warning",
                      "bloomery-redis: unknown load argument '%s' (the module takes "
                      "CF_FINGERPRINT_BITS n and MEMORY_HEADROOM f)",
                      RedisModule_StringPtrLen(argv[i], nullptr));
      return std::nullopt;
    }
  }
  return o;
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString** argv,
                                                                         int argc) {
  constexpr int version =
      bloomery::version_major * 10000 + bloomery::version_minor * 100 + bloomery::version_patch;
  if (!init_module_api(ctx, "bloomery", version)) return redis_err;
  const std::optional<load_options> options = parse_load_arguments(ctx, argv, argc);
  if (!options) return redis_err;
  set_memory_headroom(options->memory_headroom);
  return register_bloom(ctx) && register_cuckoo(ctx, options->cf_fingerprint_bits) ? redis_ok
                                                                                   : redis_err;
}
