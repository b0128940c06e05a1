// RedisBloom 2.4's own data types, `MBbloom--` and `MBbloomCF`, registered under RedisBloom's
// names so that its RDB files, AOFs and DUMP payloads load here (docs/redis.md, "Moving from
// RedisBloom"). A key of these types holds the library's bit-exact RedisBloom layout
// (bloomery/interop/redisbloom_*.hpp) and is saved back in RedisBloom's encoding; the BF.* and
// CF.* commands answer on it as RedisBloom does (redisbloom_commands.hpp).
#pragma once

#include <bloomery/interop/redisbloom_bloom.hpp>
#include <bloomery/interop/redisbloom_cuckoo.hpp>

#include "redis_api.hpp"

namespace bloomery_redis {

using rb_bloom = bloomery::interop::redisbloom::bloom_chain;
using rb_cuckoo = bloomery::interop::redisbloom::cuckoo_chain;

// The registered types (null before register_redisbloom_types).
RedisModuleType* rb_bloom_type() noexcept;
RedisModuleType* rb_cuckoo_type() noexcept;

// Registers both types, and RedisBloom's types that bloomery does not provide (Top-K, Count-Min
// sketch, t-digest) under their names, so an RDB holding one fails to load with a log line that
// says so rather than Redis's "no matching module type".
bool register_redisbloom_types(RedisModuleCtx* ctx);

// The layout new keys get (the load argument LAYOUT): bloomery's own types, or RedisBloom's, whose
// every reply is RedisBloom's. Keys keep the layout they were created or loaded in.
enum class key_layout { bloomery, redisbloom };
void set_new_key_layout(key_layout layout) noexcept;
key_layout new_key_layout() noexcept;
inline bool redisbloom_layout() noexcept {
  return new_key_layout() == key_layout::redisbloom;
}

// CF_MAX_EXPANSIONS: the number of sub-filters at which a CF add on a RedisBloom key is refused.
void set_rb_cuckoo_max_expansions(unsigned n) noexcept;
unsigned rb_cuckoo_max_expansions() noexcept;

}  // namespace bloomery_redis
