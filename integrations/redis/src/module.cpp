// bloomery-redis.so: RedisBloom-compatible BF.* commands on bloomery's filters (docs/redis.md).
#include <bloomery/version.hpp>

#include "bloom_type.hpp"
#include "redis_api.hpp"

using namespace bloomery_redis;

extern "C" __attribute__((visibility("default"))) int RedisModule_OnLoad(RedisModuleCtx* ctx,
                                                                         RedisModuleString**,
                                                                         int argc) {
  constexpr int version =
      bloomery::version_major * 10000 + bloomery::version_minor * 100 + bloomery::version_patch;
  if (!init_module_api(ctx, "bloomery", version)) return redis_err;
  if (argc != 0) {
    RedisModule_Log(ctx, "warning", "bloomery-redis: the module takes no arguments");
    return redis_err;
  }
  return register_bloom(ctx) ? redis_ok : redis_err;
}
