// The BF data type and its commands: registered by RedisModule_OnLoad (module.cpp).
#pragma once

#include "redis_api.hpp"

namespace bloomery_redis {

// Creates the native data type "bloomr-BF" (RDB, AOF rewrite, MEMORY USAGE, COPY, free) and the
// BF.* commands. The keys BF.ADD, BF.MADD and BF.INSERT create take `error_rate` and `capacity`
// unless told otherwise (RedisBloom's load arguments ERROR_RATE and INITIAL_SIZE). Returns false
// when the server refuses any of them.
bool register_bloom(RedisModuleCtx* ctx, double error_rate, long long capacity);

}  // namespace bloomery_redis
