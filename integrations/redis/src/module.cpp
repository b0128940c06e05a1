// bloomery-redis.so: RedisBloom-compatible BF.* and CF.* commands on bloomery's filters
// (docs/redis.md).
#include <bloomery/version.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>

#include "bloom_type.hpp"
#include "bloom_value.hpp"
#include "command_support.hpp"
#include "cuckoo_type.hpp"
#include "cuckoo_value.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"
#include "redisbloom_types.hpp"

using namespace bloomery_redis;

namespace {

// bloomery's range of fingerprint widths.
constexpr long long min_fingerprint_bits = 4, max_fingerprint_bits = 16;
// bloomery's cuckoo chains hold at most 64 sub-filters; RedisBloom's at most 65535.
constexpr long long max_bloomery_sub_filters = 64;

struct load_options {
  std::uint32_t cf_fingerprint_bits = cf_default_fingerprint_bits;
  double memory_headroom = default_memory_headroom;
  double error_rate = bf_default_error_rate;
  long long initial_size = bf_default_capacity;
  long long cf_max_expansions = cf_max_sub_filters;
  std::optional<key_layout> layout;
};

// The load arguments, name/value pairs: `LAYOUT bloomery|redisbloom` (the layout of new keys),
// bloomery's `CF_FINGERPRINT_BITS n` (n in 4..16) and
// `MEMORY_HEADROOM f` (f in 0..0.9), and RedisBloom's `ERROR_RATE e` and `INITIAL_SIZE n` (the
// shape of the BF keys BF.ADD, BF.MADD and BF.INSERT create) and `CF_MAX_EXPANSIONS n` (the
// number of sub-filters at which a CF add is refused). Anything else is logged and fails the
// load, so a typo in redis.conf is not silently ignored.
std::optional<load_options> parse_load_arguments(RedisModuleCtx* ctx, RedisModuleString** argv,
                                                 int argc) {
  load_options o;
  for (int i = 0; i < argc; i += 2) {
    RedisModuleString* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (is_keyword(argv[i], "LAYOUT")) {
      if (o.layout) {
        RedisModule_Log(ctx, "warning", "bloomery-redis: LAYOUT is given twice");
        return std::nullopt;
      }
      if (value && is_keyword(value, "BLOOMERY")) {
        o.layout = key_layout::bloomery;
      } else if (value && is_keyword(value, "REDISBLOOM")) {
        o.layout = key_layout::redisbloom;
      } else {
        RedisModule_Log(ctx, "warning", "bloomery-redis: LAYOUT must be bloomery or redisbloom");
        return std::nullopt;
      }
    } else if (is_keyword(argv[i], "ERROR_RATE")) {
      const std::optional<double> e = value ? to_double(value) : std::nullopt;
      if (!e || !(*e > 0 && *e < 1)) {
        RedisModule_Log(ctx, "warning", "bloomery-redis: ERROR_RATE must be a number in (0, 1)");
        return std::nullopt;
      }
      o.error_rate = *e;
    } else if (is_keyword(argv[i], "INITIAL_SIZE")) {
      const std::optional<long long> n = value ? to_integer(value) : std::nullopt;
      if (!n || *n < 1) {
        RedisModule_Log(ctx, "warning", "bloomery-redis: INITIAL_SIZE must be an integer >= 1");
        return std::nullopt;
      }
      o.initial_size = *n;
    } else if (is_keyword(argv[i], "CF_MAX_EXPANSIONS")) {
      const std::optional<long long> n = value ? to_integer(value) : std::nullopt;
      if (!n || *n < 1) {
        RedisModule_Log(ctx, "warning",
                        "bloomery-redis: CF_MAX_EXPANSIONS must be an integer >= 1");
        return std::nullopt;
      }
      // No chain has more than 65535 sub-filters (RedisBloom's 16-bit count): more means no limit.
      o.cf_max_expansions = std::min(*n, static_cast<long long>(rb_cuckoo::max_filters));
    } else if (is_keyword(argv[i], "CF_FINGERPRINT_BITS")) {
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
                      "LAYOUT bloomery|redisbloom, ERROR_RATE e, INITIAL_SIZE n, "
                      "CF_MAX_EXPANSIONS n, CF_FINGERPRINT_BITS n and MEMORY_HEADROOM f)",
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
  set_rb_cuckoo_max_expansions(static_cast<unsigned>(options->cf_max_expansions));
  set_new_key_layout(options->layout.value_or(key_layout::bloomery));
  // The rdb_load callbacks check every read (RedisModule_IsIOError): a damaged value is refused.
  RedisModule_SetModuleOptions(ctx, options_handle_io_errors);
  const auto bloomery_sub_filters =
      static_cast<std::uint32_t>(std::min(options->cf_max_expansions, max_bloomery_sub_filters));
  return register_bloom(ctx, options->error_rate, options->initial_size) &&
                 register_cuckoo(ctx, options->cf_fingerprint_bits, bloomery_sub_filters) &&
                 register_redisbloom_types(ctx)
             ? redis_ok
             : redis_err;
}
