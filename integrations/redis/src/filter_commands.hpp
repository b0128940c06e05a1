// What the commands of every filter type do alike, given the type's traits (filter_traits.hpp):
// finding a key's value to read or write, storing a new one, RESERVE on a key, EXISTS and
// MEXISTS.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <string_view>
#include <vector>

#include "command_support.hpp"
#include "filter_traits.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"
#include "redisbloom_commands.hpp"

namespace bloomery_redis {

// The value at `key` for the commands that answer for a missing key as for an empty filter:
// null for a missing key, and null with `replied` set after replying for a key of another type
// or one being restored.
template <filter_traits T>
const typename T::value* value_or_none(RedisModuleCtx* ctx, const key_handle& key, bool& replied) {
  bool wrong_type = false;
  const auto* v = key.value_of<typename T::value>(T::type, wrong_type);
  replied = true;
  if (wrong_type) {
    RedisModule_ReplyWithError(ctx, err_wrong_type);
  } else if (v != nullptr && !v->complete()) {
    RedisModule_ReplyWithError(ctx, T::err_restoring);
  } else {
    replied = false;
    return v;
  }
  return nullptr;
}

// The complete value at `key` for the commands that need one, or null after replying why not.
template <filter_traits T>
const typename T::value* readable_value(RedisModuleCtx* ctx, const key_handle& key) {
  bool replied = false;
  const typename T::value* v = value_or_none<T>(ctx, key, replied);
  if (v == nullptr && !replied) RedisModule_ReplyWithError(ctx, err_not_found);
  return v;
}

// The complete value at `key` for a write: when the key is missing and `may_create`, the one
// `create(key)` stores (`created` is set), which replies why not and returns null when it cannot;
// null after replying why not.
template <filter_traits T, class Create>
typename T::value* value_to_write(RedisModuleCtx* ctx, const key_handle& key, bool may_create,
                                  bool& created, Create&& create) {
  bool wrong_type = false;
  typename T::value* v = key.value_of<typename T::value>(T::type, wrong_type);
  created = false;
  if (wrong_type) {
    RedisModule_ReplyWithError(ctx, err_wrong_type);
  } else if (v == nullptr && !may_create) {
    RedisModule_ReplyWithError(ctx, err_not_found);
  } else if (v == nullptr) {
    v = create(key.get());
    created = v != nullptr;
    return v;
  } else if (!v->complete()) {
    RedisModule_ReplyWithError(ctx, T::err_restoring);
  } else {
    return v;
  }
  return nullptr;
}

// Stores the value `make(check)` builds in the (empty, writable) key `name`, or replies why not
// and returns null. Memory that cannot be had is an error reply, never an abort; but a server
// that follows a master has to hold what the master holds (cannot_follow_master, which names
// the write `what`). Other exceptions of `make` are the caller's.
template <filter_traits T, class Make>
typename T::value* store_new_value(RedisModuleCtx* ctx, RedisModuleKey* key,
                                   RedisModuleString* name, const char* what, Make&& make) {
  const memory_check check = memory_check_for(ctx);
  std::unique_ptr<typename T::value> v;
  try {
    v = make(check);
  } catch (const std::bad_alloc&) {
    if (check == memory_check::none) cannot_follow_master(ctx, what, name);
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  }
  if (RedisModule_ModuleTypeSetValue(key, T::type, v.get()) != redis_ok) {
    RedisModule_ReplyWithError(ctx, T::err_create);
    return nullptr;
  }
  return v.release();
}

// RESERVE's work once its arguments are read: `create(key)` stores the new filter (or replies
// why not and returns null) unless the key holds a value already.
template <filter_traits T, class Create>
int reserve_key(RedisModuleCtx* ctx, RedisModuleString* name, Create&& create) {
  key_handle key(ctx, name, open_read | open_write);
  bool wrong_type = false;
  if (key.value_of<typename T::value>(T::type, wrong_type) != nullptr ||
      redisbloom_value<typename T::redisbloom_value>(key, T::redisbloom_type()) != nullptr) {
    return RedisModule_ReplyWithError(ctx, err_item_exists);
  }
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (create(key.get()) == nullptr) return redis_ok;
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// Whether a key of another type answers as a missing key would: under LAYOUT redisbloom, as in
// RedisBloom (its EXISTS, MEXISTS and COUNT reply 0, CF.DEL "Not found"); bloomery replies
// WRONGTYPE.
template <filter_traits T>
bool answers_as_missing(const key_handle& key) {
  if (!redisbloom_layout()) return false;  // no second type lookup on bloomery's default path
  bool wrong_type = false;
  key.value_of<typename T::value>(T::type, wrong_type);
  return wrong_type;
}

// EXISTS key item (`Array` false) / MEXISTS key item... (`Array`): 0 for a missing key.
template <filter_traits T, bool Array>
int exists_command(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (Array ? argc < 3 : argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  const std::size_t n = static_cast<std::size_t>(argc - 2);
  std::vector<char> found(n, 0);
  bool replied = false;
  const typename T::value* v = nullptr;
  if (const auto* chain =
          redisbloom_value<typename T::redisbloom_value>(key, T::redisbloom_type())) {
    for (std::size_t i = 0; i < n; ++i) found[i] = chain->may_contain(view_of(argv[2 + i]));
  } else if (answers_as_missing<T>(key)) {
    // Every item answers 0, as for a missing key.
  } else {
    v = value_or_none<T>(ctx, key, replied);
    if (replied) return redis_ok;
  }
  if (v != nullptr) {
    std::vector<std::string_view> items(n);
    for (std::size_t i = 0; i < n; ++i) items[i] = view_of(argv[2 + i]);
    v->filter().may_contain_many(items, found);
  }
  if (!Array) return RedisModule_ReplyWithLongLong(ctx, found[0] ? 1 : 0);
  RedisModule_ReplyWithArray(ctx, static_cast<long>(n));
  for (const char f : found) RedisModule_ReplyWithLongLong(ctx, f ? 1 : 0);
  return redis_ok;
}

}  // namespace bloomery_redis
