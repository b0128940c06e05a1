// Helpers every command shares: key handles, argument parsing, the error texts clients match on.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "memory_guard.hpp"
#include "redis_api.hpp"

namespace bloomery_redis {

// Error texts of RedisBloom 2.4 that several commands reply.
inline constexpr const char* err_wrong_type =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr const char* err_not_found = "ERR not found";
inline constexpr const char* err_item_exists = "ERR item exists";
inline constexpr const char* err_bad_data = "ERR received bad data";
inline constexpr const char* err_no_memory = "ERR Insufficient memory to create filter";
// BF adds: a NONSCALING filter at its capacity; a sub-filter that cannot be added.
inline constexpr const char* err_bf_full = "ERR non scaling filter is full";
inline constexpr const char* err_bf_cannot_grow = "ERR problem inserting into filter";
// CF adds: no more sub-filters may be added; one could not be allocated; no room and EXPANSION 0.
inline constexpr const char* err_cf_max_expansions = "Maximum expansions reached";
inline constexpr const char* err_cf_grow_memory = "Memory allocation failure";
inline constexpr const char* err_cf_full = "Filter is full";

// One CF add's reply: 1 (stored), 0 (not stored: may be present), or for an item that did not
// fit, -1 in CF.INSERT's array and `error` for CF.ADD.
inline void reply_cf_add(RedisModuleCtx* ctx, bool stored, bool present, bool array,
                         const char* error) {
  if (stored || present) {
    RedisModule_ReplyWithLongLong(ctx, stored ? 1 : 0);
  } else if (array) {
    RedisModule_ReplyWithLongLong(ctx, -1);
  } else {
    RedisModule_ReplyWithError(ctx, error);
  }
}

inline std::string_view view_of(const RedisModuleString* s) {
  std::size_t n = 0;
  const char* p = RedisModule_StringPtrLen(s, &n);
  return {p, n};
}

inline std::span<const std::byte> bytes_of(const RedisModuleString* s) {
  return std::as_bytes(std::span(view_of(s)));
}

inline int reply_error(RedisModuleCtx* ctx, const std::string& message) {
  return RedisModule_ReplyWithError(ctx, message.c_str());
}

inline int reply_text(RedisModuleCtx* ctx, const std::string& text) {
  return RedisModule_ReplyWithStringBuffer(ctx, text.data(), text.size());
}

inline int reply_bytes(RedisModuleCtx* ctx, std::span<const std::byte> bytes) {
  return RedisModule_ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(bytes.data()),
                                           bytes.size());
}

// Counts are replied as signed 64-bit integers.
inline long long clamp(std::uint64_t v) {
  return static_cast<long long>(std::min<std::uint64_t>(v, INT64_MAX));
}

// Options are whole keywords in any letter case (RedisBloom looks at first letters only).
inline bool is_keyword(const RedisModuleString* s, std::string_view keyword) {
  const std::string_view v = view_of(s);
  if (v.size() != keyword.size()) return false;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(v[i])) != keyword[i]) return false;
  }
  return true;
}

inline std::optional<long long> to_integer(const RedisModuleString* s) {
  long long v = 0;
  if (RedisModule_StringToLongLong(s, &v) != redis_ok) return std::nullopt;
  return v;
}

inline std::optional<double> to_double(const RedisModuleString* s) {
  double v = 0;
  if (RedisModule_StringToDouble(s, &v) != redis_ok) return std::nullopt;
  return v;
}

// Whether what runs in `ctx` follows a master rather than a client: a command the master
// replicated, an RDB or AOF being loaded, or anything on a read-only replica (where only the
// master writes; RESTORE's and COPY's callbacks do not see which client called them).
inline bool follows_master(RedisModuleCtx* ctx) {
  const int flags = RedisModule_GetContextFlags(ctx);
  return (flags & (ctx_flags_replicated | ctx_flags_loading)) != 0 ||
         ((flags & ctx_flags_slave) != 0 && (flags & ctx_flags_readonly) != 0);
}
inline memory_check memory_check_for(RedisModuleCtx* ctx) {
  return follows_master(ctx) ? memory_check::none : memory_check::admission;
}
// For callbacks that get no context (COPY's): the server-wide flags of a detached one.
inline memory_check memory_check_for_server() {
  RedisModuleCtx* ctx = RedisModule_GetThreadSafeContext(nullptr);
  const memory_check check = memory_check_for(ctx);
  RedisModule_FreeThreadSafeContext(ctx);
  return check;
}

// A write the master made that this server cannot make for want of memory: going on would leave
// a replica (or a server replaying its AOF) answering from another filter than its master's, or
// from none, so it stops, as Redis stops when an allocation fails.
[[noreturn]] inline void cannot_follow_master(RedisModuleCtx* ctx, const char* command,
                                              const RedisModuleString* key) {
  RedisModule_Log(ctx, "warning",
                  "bloomery-redis: cannot apply %s to key '%s' as its master did: its memory "
                  "cannot be had here; stopping rather than diverge from the master",
                  command, RedisModule_StringPtrLen(key, nullptr));
  std::abort();
}

// An open key, closed when the handle goes out of scope (the module does not use auto memory).
class key_handle {
 public:
  key_handle(RedisModuleCtx* ctx, RedisModuleString* name, int mode)
      : key_(RedisModule_OpenKey(ctx, name, mode)) {}
  key_handle(const key_handle&) = delete;
  key_handle& operator=(const key_handle&) = delete;
  ~key_handle() {
    if (key_ != nullptr) RedisModule_CloseKey(key_);
  }
  RedisModuleKey* get() const noexcept { return key_; }

  // The value when the key holds one of `type`; `wrong_type` is set when it holds anything else.
  template <class V>
  V* value_of(RedisModuleType* type, bool& wrong_type) const {
    wrong_type = false;
    if (key_ == nullptr || RedisModule_KeyType(key_) == keytype_empty) return nullptr;
    if (RedisModule_KeyType(key_) != keytype_module ||
        RedisModule_ModuleTypeGetType(key_) != type) {
      wrong_type = true;
      return nullptr;
    }
    return static_cast<V*>(RedisModule_ModuleTypeGetValue(key_));
  }

 private:
  RedisModuleKey* key_;
};

// bloomery's messages start with "bloomery: "; a reply reads better without it.
inline std::string without_library_prefix(std::string_view message) {
  constexpr std::string_view prefix = "bloomery: ";
  if (message.starts_with(prefix)) message.remove_prefix(prefix.size());
  return std::string(message);
}

// Exceptions must not cross into the server's C code: anything unexpected is an error reply.
template <int (*Command)(RedisModuleCtx*, RedisModuleString**, int)>
int guarded(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) noexcept {
  try {
    return Command(ctx, argv, argc);
  } catch (const std::bad_alloc&) {
    return RedisModule_ReplyWithError(ctx, "ERR out of memory");
  } catch (const std::exception& e) {
    return reply_error(ctx, "ERR " + without_library_prefix(e.what()));
  } catch (...) {
    return RedisModule_ReplyWithError(ctx, "ERR internal error");
  }
}

// A command as RedisModule_CreateCommand takes it.
struct command_spec {
  const char* name;
  command_fn fn;
  const char* flags;
};
inline bool create_commands(RedisModuleCtx* ctx, std::span<const command_spec> commands) {
  for (const command_spec& c : commands) {
    // One key, the first argument: what Redis Cluster routes on.
    if (RedisModule_CreateCommand(ctx, c.name, c.fn, c.flags, 1, 1, 1) != redis_ok) return false;
  }
  return true;
}

// A buffer RedisModule_LoadStringBuffer returned, freed with the handle.
struct redis_buffer {
  char* data = nullptr;
  std::size_t size = 0;
  redis_buffer() = default;
  redis_buffer(const redis_buffer&) = delete;
  redis_buffer& operator=(const redis_buffer&) = delete;
  ~redis_buffer() {
    if (data != nullptr) RedisModule_Free(data);
  }
  std::span<const std::byte> bytes() const { return std::as_bytes(std::span(data, size)); }
};

}  // namespace bloomery_redis
