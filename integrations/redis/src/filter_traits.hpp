// What the code every filter type shares (native_type.hpp, filter_commands.hpp,
// dump_commands.hpp) asks of a type: a traits struct naming its value, its Redis type and the
// words of its replies.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "memory_guard.hpp"
#include "redis_api.hpp"

namespace bloomery_redis {

// Where SCANDUMP and LOADCHUNK of one type reply otherwise than another's: RedisBloom's BF and CF
// commands check in different orders and word their errors differently, and clients match on
// the words.
struct dump_replies {
  // SCANDUMP: an iter that is no integer (or a negative one, where refused); whether it is
  // checked before the key is; what the chunk past the end is, nil or "".
  const char* bad_scandump_iter;
  bool scandump_refuses_negative_iter;
  bool scandump_iter_before_key;
  bool scandump_end_is_nil;
  // LOADCHUNK: an iter that is no integer (or 0, where refused); a header chunk (iter 1) for a key
  // that holds a value; a header chunk this type did not write; a data chunk that does not follow,
  // is too long, comes for a complete key or completes a damaged image.
  const char* bad_loadchunk_iter;
  bool loadchunk_refuses_iter_0;
  const char* header_for_existing_key;
  const char* bad_header;
  const char* bad_chunk;
};

// `value`: a key's value, its filter or the restore of its dump in progress; `redisbloom_value`
// and `redisbloom_type()`: the RedisBloom layout and type of the same family, which keys that
// came from RedisBloom keep (redisbloom_types.hpp); `type`: the Redis
// type, set when it is created; `label` ("BF") for log lines; `loadchunk` ("BF.LOADCHUNK") for
// the AOF; `err_restoring` for a command on a key being restored; `err_create` when the server
// does not take a new value; `replies`: SCANDUMP's and LOADCHUNK's.
template <class T>
concept filter_traits = requires(const typename T::value& v, typename T::value& w,
                                 std::span<const std::byte> bytes, memory_check check) {
  { T::type } -> std::convertible_to<RedisModuleType*>;
  { T::label } -> std::convertible_to<const char*>;
  { T::loadchunk } -> std::convertible_to<const char*>;
  { T::err_restoring } -> std::convertible_to<const char*>;
  { T::err_create } -> std::convertible_to<const char*>;
  { T::replies } -> std::convertible_to<const dump_replies&>;
  { T::redisbloom_type() } -> std::convertible_to<RedisModuleType*>;
  typename T::redisbloom_value;
  { v.complete() } -> std::same_as<bool>;
  { v.dump_header() } -> std::same_as<std::vector<std::byte>>;
  { v.dump_payload() } -> std::same_as<std::span<const std::byte>>;
  { v.memory_usage() } -> std::same_as<std::size_t>;
  { v.copy() } -> std::same_as<std::unique_ptr<typename T::value>>;
  { w.restore_chunk(std::uint64_t{}, bytes) } -> std::same_as<typename T::value::chunk_result>;
  {
    T::value::restore_from_header(bytes, check)
    } -> std::same_as<std::unique_ptr<typename T::value>>;
};

}  // namespace bloomery_redis
