// SCANDUMP and LOADCHUNK, one implementation for every filter type: the chunks are dump.hpp's,
// the value reads and writes them, and the type's traits (filter_traits.hpp) give the order of
// the checks and the words of the replies where RedisBloom's BF and CF commands differ.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "command_support.hpp"
#include "dump.hpp"
#include "filter_commands.hpp"
#include "filter_traits.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"
#include "redisbloom_commands.hpp"

namespace bloomery_redis {

// SCANDUMP key iter: [1, header chunk] for iter 0, then [next iter, payload bytes from
// iter - 1], and [0, nil or ""] past the end, as RedisBloom's iterator runs. An empty filter
// dumps like any other (RedisBloom's CF.SCANDUMP replies [0, nil] at once, so it cannot be
// copied).
template <filter_traits T>
int scandump_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  const dump_replies& say = T::replies;
  if (argc != 3) return RedisModule_WrongArity(ctx);
  const std::optional<long long> iter = to_integer(argv[2]);
  const bool bad_iter = !iter || (say.scandump_refuses_negative_iter && *iter < 0);
  if (bad_iter && say.scandump_iter_before_key) {
    return RedisModule_ReplyWithError(ctx, say.bad_scandump_iter);
  }
  key_handle key(ctx, argv[1], open_read);
  if (const auto* chain =
          redisbloom_value<typename T::redisbloom_value>(key, T::redisbloom_type())) {
    if (bad_iter) return RedisModule_ReplyWithError(ctx, say.bad_scandump_iter);
    return rb_scandump(ctx, *chain, *iter, say.scandump_end_is_nil);
  }
  const typename T::value* v = readable_value<T>(ctx, key);
  if (v == nullptr) return redis_ok;
  if (bad_iter) return RedisModule_ReplyWithError(ctx, say.bad_scandump_iter);
  if (*iter == 0) {
    const std::vector<std::byte> header = v->dump_header();
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, 1);
    return reply_bytes(ctx, header);
  }
  const std::optional<payload_chunk> chunk = payload_chunk_at(v->dump_payload(), *iter);
  RedisModule_ReplyWithArray(ctx, 2);
  if (!chunk) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return say.scandump_end_is_nil ? RedisModule_ReplyWithNull(ctx)
                                   : RedisModule_ReplyWithStringBuffer(ctx, "", 0);
  }
  RedisModule_ReplyWithLongLong(ctx, chunk->next_iter);
  return reply_bytes(ctx, chunk->bytes);
}

// LOADCHUNK key iter data: iter 1 with a header chunk starts restoring an empty key; each next
// chunk must follow the bytes received (data chunks are SCANDUMP's, in order). The key answers
// no other command of its type until its last chunk arrives; then the whole image is checked, and
// a damaged dump deletes the key.
template <filter_traits T>
int loadchunk_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  using value = typename T::value;
  const dump_replies& say = T::replies;
  if (argc != 4) return RedisModule_WrongArity(ctx);
  const std::optional<long long> iter = to_integer(argv[2]);
  if (!iter || (say.loadchunk_refuses_iter_0 && *iter == 0)) {
    return RedisModule_ReplyWithError(ctx, say.bad_loadchunk_iter);
  }
  const std::span<const std::byte> data = bytes_of(argv[3]);
  key_handle key(ctx, argv[1], open_read | open_write);
  using rb_value = typename T::redisbloom_value;
  if (rb_value* chain = redisbloom_value<rb_value>(key, T::redisbloom_type())) {
    return rb_load_chunk(ctx, *chain, *iter, data, say.header_for_existing_key, say.bad_chunk);
  }
  bool wrong_type = false;
  value* v = key.value_of<value>(T::type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  // A header chunk that is not bloomery's is RedisBloom's: the key takes RedisBloom's layout.
  if (*iter == 1 && v == nullptr && !is_bloomery_header(data)) {
    return rb_load_header<rb_value>(ctx, key.get(), argv[1], T::redisbloom_type(), data,
                                    say.bad_header);
  }
  if (*iter == 1) {
    if (v != nullptr) return RedisModule_ReplyWithError(ctx, say.header_for_existing_key);
    try {
      const auto restore = [&](memory_check check) {
        return value::restore_from_header(data, check);
      };
      if (store_new_value<T>(ctx, key.get(), argv[1], T::loadchunk, restore) == nullptr) {
        return redis_ok;
      }
    } catch (const bad_dump&) {
      return RedisModule_ReplyWithError(ctx, say.bad_header);
    }
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
  }
  if (v == nullptr) return RedisModule_ReplyWithError(ctx, err_not_found);
  // A complete filter takes no chunks (RedisBloom would overwrite its bits in place).
  if (v->complete() || *iter < 1 || static_cast<std::uint64_t>(*iter - 1) < data.size()) {
    return RedisModule_ReplyWithError(ctx, say.bad_chunk);
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(*iter - 1) - data.size();
  switch (v->restore_chunk(offset, data)) {
    case value::chunk_result::rejected:
      return RedisModule_ReplyWithError(ctx, say.bad_chunk);
    case value::chunk_result::corrupt:
      // Replicas and the AOF get the effect, not a chunk that fails there as well.
      RedisModule_DeleteKey(key.get());
      RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
      return RedisModule_ReplyWithError(ctx, say.bad_chunk);
    case value::chunk_result::accepted:
    case value::chunk_result::completed:
      break;
  }
  // Unlike RedisBloom 2.4, every data chunk reaches the replicas and the AOF.
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

}  // namespace bloomery_redis
