#include "redisbloom_commands.hpp"

#include <cstdint>
#include <memory>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace bloomery_redis {
namespace {

// The most bytes a growth may add now, given the bound a command read once (admissible_bytes
// reads /proc): a client's add is admitted like a new filter (the value's memory plus the new
// part), a master's or the AOF's is not judged.
std::uint64_t growth_allowance(std::uint64_t bound, std::uint64_t held) {
  return bound > held ? bound - held : 0;
}

// Stores `make()`'s chain in `key` after weighing `bytes` (nullopt: parameters RedisBloom refuses,
// which make() throws for) against the memory a new filter may take.
template <class Chain, class Make>
Chain* store_chain(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                   RedisModuleType* type, std::optional<std::uint64_t> bytes, Make&& make,
                   const char* err_refused) {
  const memory_check check = memory_check_for(ctx);
  std::unique_ptr<Chain> chain;
  try {
    if (bytes && !may_allocate(check, *bytes)) throw std::bad_alloc();
    chain = std::make_unique<Chain>(make());
  } catch (const std::bad_alloc&) {
    if (check == memory_check::none) cannot_follow_master(ctx, "a new filter", name);
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  } catch (const std::invalid_argument&) {
    RedisModule_ReplyWithError(ctx, err_refused);
    return nullptr;
  }
  if (RedisModule_ModuleTypeSetValue(key, type, chain.get()) != redis_ok) {
    RedisModule_ReplyWithError(ctx, err_refused);
    return nullptr;
  }
  return chain.release();
}

}  // namespace

rb_bloom* rb_create_bloom(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                          const rb_bloom::parameters& p) {
  return store_chain<rb_bloom>(
      ctx, key, name, rb_bloom_type(), rb_bloom::first_link_bytes(p), [&] { return rb_bloom(p); },
      "ERR could not create filter");
}

rb_cuckoo* rb_create_cuckoo(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                            const rb_cuckoo::parameters& p) {
  std::optional<std::uint64_t> bytes;
  try {
    bytes = rb_cuckoo::slot_bytes_for(p);
  } catch (const std::bad_alloc&) {
    // More buckets than RedisBloom can hold: its "Insufficient memory" refusal.
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  } catch (const std::invalid_argument&) {
    // Refused by the constructor below, with RedisBloom's reply.
  }
  return store_chain<rb_cuckoo>(
      ctx, key, name, rb_cuckoo_type(), bytes, [&] { return rb_cuckoo(p); },
      "ERR Could not create filter");
}

int rb_bf_add(RedisModuleCtx* ctx, rb_bloom& chain, RedisModuleString* name,
              std::span<RedisModuleString*> items, bool array, bool created) {
  using result = rb_bloom::add_result;
  const memory_check check = memory_check_for(ctx);
  if (array) RedisModule_ReplyWithArray(ctx, postponed_length);
  long replies = 0;
  bool changed = false;
  for (RedisModuleString* item : items) {
    ++replies;
    const std::string_view bytes = view_of(item);
    // The next link's memory is known before the add: refuse it here rather than have it fail.
    const std::optional<std::uint64_t> next = chain.next_link_bytes();
    std::optional<result> r;
    if (next && *next > growth_allowance(admissible_bytes(check), chain.bytes_held())) {
      if (chain.may_contain(bytes)) {
        r = result::exists;
      } else if (check == memory_check::none) {
        cannot_follow_master(ctx, "a RedisBloom BF filter's growth", name);
      }
    } else {
      try {
        r = chain.add(bytes);
      } catch (const std::bad_alloc&) {
        if (check == memory_check::none) {
          cannot_follow_master(ctx, "a RedisBloom BF filter's growth", name);
        }
      }
    }
    if (!r) {
      RedisModule_ReplyWithError(ctx, err_bf_cannot_grow);
      break;
    }
    if (*r == result::full) {
      RedisModule_ReplyWithError(ctx, err_bf_full);
      break;
    }
    changed |= *r == result::added;
    // RedisBloom replies 1 when its sizing refused the new link, though nothing was stored.
    RedisModule_ReplyWithLongLong(ctx, *r == result::exists ? 0 : 1);
  }
  if (array) RedisModule_ReplySetArrayLength(ctx, replies);
  if (changed || created) RedisModule_ReplicateVerbatim(ctx);
  return redis_ok;
}

int rb_cf_add(RedisModuleCtx* ctx, rb_cuckoo& chain, RedisModuleString* name,
              std::span<RedisModuleString*> items, bool unique, bool array, bool created) {
  using result = rb_cuckoo::add_result;
  // RedisBloom refuses the whole command once the filter has CF_MAX_EXPANSIONS sub-filters.
  if (chain.at_max_expansions(rb_cuckoo_max_expansions())) {
    if (created) RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithError(ctx, err_cf_max_expansions);
  }
  const memory_check check = memory_check_for(ctx);
  if (array) RedisModule_ReplyWithArray(ctx, static_cast<long>(items.size()));
  bool changed = false;
  const std::uint64_t bound = admissible_bytes(check);
  for (RedisModuleString* item : items) {
    const std::string_view bytes = view_of(item);
    const std::uint64_t allowance = growth_allowance(bound, chain.bytes_held());
    const result r = unique ? chain.add_unique(bytes, allowance) : chain.add(bytes, allowance);
    if (r == result::allocation_failed && check == memory_check::none &&
        chain.next_sub_filter_bytes()) {
      // The master had this memory; a replica without it would answer from another filter.
      cannot_follow_master(ctx, "a RedisBloom CF filter's growth", name);
    }
    changed |= r == result::added;
    reply_cf_add(ctx, r == result::added, r == result::exists, array,
                 r == result::full ? err_cf_full : err_cf_grow_memory);
  }
  if (changed || created) RedisModule_ReplicateVerbatim(ctx);
  return redis_ok;
}

int rb_cf_del(RedisModuleCtx* ctx, rb_cuckoo& chain, RedisModuleString* item) {
  if (!chain.remove(view_of(item))) return RedisModule_ReplyWithLongLong(ctx, 0);
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}

int rb_bf_debug(RedisModuleCtx* ctx, const rb_bloom& chain) {
  const std::vector<std::string> lines = chain.debug_lines();
  RedisModule_ReplyWithArray(ctx, static_cast<long>(lines.size()));
  for (const std::string& line : lines) reply_text(ctx, line);
  return redis_ok;
}

int rb_cf_debug(RedisModuleCtx* ctx, const rb_cuckoo& chain) {
  return reply_text(ctx, chain.debug_string());
}

}  // namespace bloomery_redis
