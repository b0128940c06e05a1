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

RedisModuleType* create_data_type(RedisModuleCtx* ctx, const char* name, int encoding,
                                  const value_callbacks& c) {
  type_methods methods;
  methods.rdb_load = c.rdb_load;
  methods.rdb_save = c.rdb_save;
  methods.aof_rewrite = c.aof_rewrite;
  methods.mem_usage = c.mem_usage;
  methods.free = c.free;
  methods.copy = c.copy;
  return RedisModule_CreateDataType(ctx, name, encoding, &methods);
}

}  // namespace bloomery_redis
