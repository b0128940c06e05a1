// The CF data type and its commands: registered by RedisModule_OnLoad (module.cpp).
#pragma once

#include <cstdint>

#include "redis_api.hpp"

namespace bloomery_redis {

// Creates the native data type "bloomr-CF" (RDB, AOF rewrite, MEMORY USAGE, COPY, free) and the
// CF.* commands; new filters get `fingerprint_bits`-bit fingerprints and at most
// `max_sub_filters` sub-filters (RedisBloom's load argument CF_MAX_EXPANSIONS, capped at
// bloomery's 64). Returns false when the server refuses any of them.
bool register_cuckoo(RedisModuleCtx* ctx, std::uint32_t fingerprint_bits,
                     std::uint32_t max_sub_filters);

}  // namespace bloomery_redis
