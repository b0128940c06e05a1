#include "redis_api.hpp"

namespace bloomery_redis {

bool init_module_api(RedisModuleCtx* ctx, const char* name, int version) {
  using get_api_fn = int (*)(const char*, void*);
  const auto get_api = reinterpret_cast<get_api_fn>(reinterpret_cast<void**>(ctx)[0]);
  bool complete = true;
#define BLOOMERY_REDIS_LOOKUP(ret, fn, params)                                               \
  complete =                                                                                 \
      get_api("RedisModule_" #fn, reinterpret_cast<void*>(&RedisModule_##fn)) == redis_ok && \
      complete;
  BLOOMERY_REDIS_API(BLOOMERY_REDIS_LOOKUP)
#undef BLOOMERY_REDIS_LOOKUP
  if (!complete) return false;
  // A second module with this name would own the same commands.
  if (RedisModule_IsModuleNameBusy(name)) return false;
  RedisModule_SetModuleAttribs(ctx, name, version, redis_api_version);
  return true;
}

}  // namespace bloomery_redis
