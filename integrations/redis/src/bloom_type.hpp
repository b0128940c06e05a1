// The BF data type and its commands: registered by RedisModule_OnLoad (module.cpp).
#pragma once

#include "redis_api.hpp"

namespace bloomery_redis {

// Creates the native data type "bloomr-BF" (RDB, AOF rewrite, MEMORY USAGE, COPY, free) and the
// BF.* commands. Returns false when the server refuses any of them.
bool register_bloom(RedisModuleCtx* ctx);

}  // namespace bloomery_redis
