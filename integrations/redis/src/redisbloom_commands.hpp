// What the BF.* and CF.* commands do on a key of RedisBloom's own types (redisbloom_types.hpp):
// RedisBloom 2.4's behaviour and replies, computed by the library's RedisBloom layouts. The
// commands (bloom_type.cpp, cuckoo_type.cpp, filter_commands.hpp, dump_commands.hpp) parse their
// arguments once and come here when the key holds such a value.
#pragma once

#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "command_support.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"
#include "redisbloom_types.hpp"

namespace bloomery_redis {

// The value at `key` when it is of the RedisBloom type `type`, else null.
template <class Chain>
Chain* redisbloom_value(const key_handle& key, RedisModuleType* type) {
  bool other_type = false;
  return key.value_of<Chain>(type, other_type);
}

// A new key of RedisBloom's layout (LAYOUT redisbloom) stored in the empty, writable `key`: null
// after replying why not — RedisBloom's refusals, and memory that cannot be had (an error reply,
// where RedisBloom's server aborts).
rb_bloom* rb_create_bloom(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                          const rb_bloom::parameters& p);
rb_cuckoo* rb_create_cuckoo(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                            const rb_cuckoo::parameters& p);

// BF.ADD / BF.MADD / BF.INSERT's items; `array` for the latter two; `created` when the command
// made the key (it is replicated then, whatever the adds did).
int rb_bf_add(RedisModuleCtx* ctx, rb_bloom& chain, RedisModuleString* name,
              std::span<RedisModuleString*> items, bool array, bool created = false);
// CF.ADD / CF.ADDNX (one item) and CF.INSERT / CF.INSERTNX (`array`).
int rb_cf_add(RedisModuleCtx* ctx, rb_cuckoo& chain, RedisModuleString* name,
              std::span<RedisModuleString*> items, bool unique, bool array, bool created = false);
// CF.DEL of `item`.
int rb_cf_del(RedisModuleCtx* ctx, rb_cuckoo& chain, RedisModuleString* item);
// BF.DEBUG and CF.DEBUG: RedisBloom's replies.
int rb_bf_debug(RedisModuleCtx* ctx, const rb_bloom& chain);
int rb_cf_debug(RedisModuleCtx* ctx, const rb_cuckoo& chain);

// SCANDUMP at `iter` (parsed, as the command's checks allow it): RedisBloom's header at 0 and its
// chunks after, a negative iter as past the end; the end is [0, nil] or [0, ""].
template <class Chain>
int rb_scandump(RedisModuleCtx* ctx, const Chain& chain, long long iter, bool end_is_nil) {
  std::optional<typename Chain::chunk> chunk;
  if (iter == 0) {
    bool refused = false;
    if constexpr (requires { chain.scandump_refused(); }) refused = chain.scandump_refused();
    if (!refused) {
      const std::vector<std::byte> header = chain.scandump_header();
      RedisModule_ReplyWithArray(ctx, 2);
      RedisModule_ReplyWithLongLong(ctx, 1);
      return reply_bytes(ctx, header);
    }
  } else if (iter > 0) {
    chunk = chain.scandump_chunk(static_cast<std::uint64_t>(iter));
  }
  RedisModule_ReplyWithArray(ctx, 2);
  if (!chunk) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return end_is_nil ? RedisModule_ReplyWithNull(ctx)
                      : RedisModule_ReplyWithStringBuffer(ctx, "", 0);
  }
  RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(chunk->next_iter));
  return reply_bytes(ctx, chunk->bytes);
}

// Whether a LOADCHUNK header chunk is one of bloomery's own dumps (dump.hpp's magic "BLMRY-BF" /
// "BLMRY-CF") rather than RedisBloom's, whose headers start with a little-endian item count.
inline bool is_bloomery_header(std::span<const std::byte> data) {
  return data.size() >= 6 && std::memcmp(data.data(), "BLMRY-", 6) == 0;
}

// LOADCHUNK key 1 <RedisBloom header> on a missing key: the key gets RedisBloom's layout with
// empty arrays, the data to follow. A refused header stores nothing and replies RedisBloom's
// error: `bad_header`, or for CF a header of the right length that describes no filter
// "Couldn't create filter!".
template <class Chain>
int rb_load_header(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                   RedisModuleType* type, std::span<const std::byte> header,
                   const char* bad_header) {
  const memory_check check = memory_check_for(ctx);
  std::unique_ptr<Chain> chain;
  try {
    chain = std::make_unique<Chain>(Chain::from_scandump_header(header, admissible_bytes(check)));
  } catch (const std::bad_alloc&) {
    if (check == memory_check::none) cannot_follow_master(ctx, "a LOADCHUNK header", name);
    return RedisModule_ReplyWithError(ctx, err_no_memory);
  } catch (const std::exception&) {
    if constexpr (std::is_same_v<Chain, rb_cuckoo>) {
      if (header.size() == rb_cuckoo::scandump_header_bytes) {
        return RedisModule_ReplyWithError(ctx, "Couldn't create filter!");
      }
    }
    return RedisModule_ReplyWithError(ctx, bad_header);
  }
  if (RedisModule_ModuleTypeSetValue(key, type, chain.get()) != redis_ok) {
    return RedisModule_ReplyWithError(ctx, "ERR could not create filter");
  }
  chain.release();
  // Unlike RedisBloom 2.4, LOADCHUNK reaches the replicas and the AOF.
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// Why BF.LOADCHUNK refuses a data chunk, in RedisBloom's words: no iterator it can use, an offset
// no link holds, or a chunk running past its link.
inline const char* rb_bloom_chunk_error(const rb_bloom& chain, long long iter, std::size_t len) {
  if (iter <= 0 || static_cast<std::uint64_t>(iter) < len) return err_bad_data;
  if (!chain.scandump_chunk(static_cast<std::uint64_t>(iter) - len)) {
    return "ERR invalid offset - no link found";
  }
  return "ERR invalid chunk - Too big for current filter";
}

// LOADCHUNK key iter <data> on a key of RedisBloom's layout: a data chunk copied in place, as
// RedisBloom does (the key answers throughout); a header for an existing key is refused.
template <class Chain>
int rb_load_chunk(RedisModuleCtx* ctx, Chain& chain, long long iter,
                  std::span<const std::byte> data, const char* header_for_existing_key,
                  const char* bad_chunk) {
  if (iter == 1) return RedisModule_ReplyWithError(ctx, header_for_existing_key);
  if (!chain.load_chunk(static_cast<std::uint64_t>(iter), data)) {
    if constexpr (std::is_same_v<Chain, rb_bloom>) {
      bad_chunk = rb_bloom_chunk_error(chain, iter, data.size());
    }
    return RedisModule_ReplyWithError(ctx, bad_chunk);
  }
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

}  // namespace bloomery_redis
