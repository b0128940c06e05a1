// The part of the Redis module API this module uses, declared from Redis's documented module API
// (https://redis.io/docs/reference/modules/): the server hands a module one lookup function,
// RedisModule_GetApi, and every other API function is a pointer the module asks it for by name.
// Declaring only what we call keeps the module free of redismodule.h and of any Redis headers.
#pragma once

#include <cstddef>
#include <cstdint>

// Opaque handles owned by the server; the module only passes them back.
extern "C" {
struct RedisModuleCtx;
struct RedisModuleString;
struct RedisModuleKey;
struct RedisModuleType;
struct RedisModuleIO;
}

namespace bloomery_redis {

// Status codes every API function returns.
inline constexpr int redis_ok = 0;
inline constexpr int redis_err = 1;
// The API version this module is written against (the first, which Redis 7.0 still serves).
inline constexpr int redis_api_version = 1;
// RedisModule_OpenKey modes.
inline constexpr int open_read = 1 << 0;
inline constexpr int open_write = 1 << 1;
// RedisModule_KeyType results the module distinguishes.
inline constexpr int keytype_empty = 0;
inline constexpr int keytype_module = 6;
// RedisModule_GetContextFlags bits the module reads.
inline constexpr int ctx_flags_slave = 1 << 3;
inline constexpr int ctx_flags_readonly = 1 << 4;
inline constexpr int ctx_flags_replicated = 1 << 12;
inline constexpr int ctx_flags_loading = 1 << 13;
// Array length given later with RedisModule_ReplySetArrayLength.
inline constexpr long postponed_length = -1;
// RedisModule_SetModuleOptions: the module's rdb_load callbacks check RedisModule_IsIOError, so a
// short or mistyped RDB value (a hostile RESTORE payload) fails the load instead of stopping the
// server.
inline constexpr int options_handle_io_errors = 1 << 0;

using command_fn = int (*)(RedisModuleCtx*, RedisModuleString**, int);
using rdb_load_fn = void* (*)(RedisModuleIO*, int encoding_version);
using rdb_save_fn = void (*)(RedisModuleIO*, void* value);
using aof_rewrite_fn = void (*)(RedisModuleIO*, RedisModuleString* key, void* value);
using mem_usage_fn = std::size_t (*)(const void* value);
using free_fn = void (*)(void* value);
using copy_fn = void* (*)(RedisModuleString* from_key, RedisModuleString* to_key,
                          const void* value);

// The callbacks of a native data type, in the order the server reads them. Version 3 of the
// struct is the first with `copy`; the fields between are callbacks this module leaves empty.
struct type_methods {
  std::uint64_t version = 3;
  rdb_load_fn rdb_load = nullptr;
  rdb_save_fn rdb_save = nullptr;
  aof_rewrite_fn aof_rewrite = nullptr;
  mem_usage_fn mem_usage = nullptr;
  void* digest = nullptr;
  free_fn free = nullptr;
  void* aux_load = nullptr;
  void* aux_save = nullptr;
  int aux_save_triggers = 0;
  void* free_effort = nullptr;
  void* unlink = nullptr;
  copy_fn copy = nullptr;
  void* defrag = nullptr;
};

// The callbacks a value type of this module has (the server copies them when it creates the type).
struct value_callbacks {
  rdb_load_fn rdb_load;
  rdb_save_fn rdb_save;
  aof_rewrite_fn aof_rewrite;
  mem_usage_fn mem_usage;
  free_fn free;
  copy_fn copy;
};

// X(return type, name without the RedisModule_ prefix, parameter list) for every function used.
#define BLOOMERY_REDIS_API(X)                                                                  \
  X(void, SetModuleAttribs, (RedisModuleCtx*, const char* name, int version, int api_version)) \
  X(int, IsModuleNameBusy, (const char* name))                                                 \
  X(int, CreateCommand,                                                                        \
    (RedisModuleCtx*, const char* name, command_fn, const char* flags, int first_key,          \
     int last_key, int key_step))                                                              \
  X(RedisModuleType*, CreateDataType,                                                          \
    (RedisModuleCtx*, const char* name, int encoding_version, type_methods*))                  \
  X(int, ModuleTypeSetValue, (RedisModuleKey*, RedisModuleType*, void* value))                 \
  X(RedisModuleType*, ModuleTypeGetType, (RedisModuleKey*))                                    \
  X(void*, ModuleTypeGetValue, (RedisModuleKey*))                                              \
  X(RedisModuleKey*, OpenKey, (RedisModuleCtx*, RedisModuleString * name, int mode))           \
  X(void, CloseKey, (RedisModuleKey*))                                                         \
  X(int, KeyType, (RedisModuleKey*))                                                           \
  X(int, DeleteKey, (RedisModuleKey*))                                                         \
  X(int, WrongArity, (RedisModuleCtx*))                                                        \
  X(int, ReplyWithError, (RedisModuleCtx*, const char* message))                               \
  X(int, ReplyWithSimpleString, (RedisModuleCtx*, const char* message))                        \
  X(int, ReplyWithLongLong, (RedisModuleCtx*, long long))                                      \
  X(int, ReplyWithArray, (RedisModuleCtx*, long length))                                       \
  X(void, ReplySetArrayLength, (RedisModuleCtx*, long length))                                 \
  X(int, ReplyWithNull, (RedisModuleCtx*))                                                     \
  X(int, ReplyWithStringBuffer, (RedisModuleCtx*, const char* bytes, std::size_t length))      \
  X(const char*, StringPtrLen, (const RedisModuleString*, std::size_t* length))                \
  X(int, StringToLongLong, (const RedisModuleString*, long long* out))                         \
  X(int, StringToDouble, (const RedisModuleString*, double* out))                              \
  X(int, ReplicateVerbatim, (RedisModuleCtx*))                                                 \
  X(int, Replicate, (RedisModuleCtx*, const char* command, const char* format, ...))           \
  X(int, GetContextFlags, (RedisModuleCtx*))                                                   \
  X(RedisModuleCtx*, GetContextFromIO, (RedisModuleIO*))                                       \
  X(RedisModuleCtx*, GetThreadSafeContext, (void* blocked_client))                             \
  X(void, FreeThreadSafeContext, (RedisModuleCtx*))                                            \
  X(void, SaveUnsigned, (RedisModuleIO*, std::uint64_t))                                       \
  X(std::uint64_t, LoadUnsigned, (RedisModuleIO*))                                             \
  X(void, SaveDouble, (RedisModuleIO*, double))                                                \
  X(double, LoadDouble, (RedisModuleIO*))                                                      \
  X(int, IsIOError, (RedisModuleIO*))                                                          \
  X(void, SetModuleOptions, (RedisModuleCtx*, int options))                                    \
  X(void, SaveStringBuffer, (RedisModuleIO*, const char* bytes, std::size_t length))           \
  X(char*, LoadStringBuffer, (RedisModuleIO*, std::size_t * length))                           \
  X(void, EmitAOF, (RedisModuleIO*, const char* command, const char* format, ...))             \
  X(void, Free, (void*))                                                                       \
  X(void, Log, (RedisModuleCtx*, const char* level, const char* format, ...))                  \
  X(void, LogIOError, (RedisModuleIO*, const char* level, const char* format, ...))

#define BLOOMERY_REDIS_DECLARE(ret, name, params) inline ret(*RedisModule_##name) params = nullptr;
BLOOMERY_REDIS_API(BLOOMERY_REDIS_DECLARE)
#undef BLOOMERY_REDIS_DECLARE

// Looks every function above up through the server's RedisModule_GetApi (which the server stores
// as the first field of the context it passes to RedisModule_OnLoad) and registers the module's
// name. Returns false, having logged nothing it cannot, if the server lacks any of them.
bool init_module_api(RedisModuleCtx* ctx, const char* name, int version);

// Creates the data type `name` (nine characters, unique among modules) of encoding version
// `encoding`; null when the server refuses it.
RedisModuleType* create_data_type(RedisModuleCtx* ctx, const char* name, int encoding,
                                  const value_callbacks& callbacks);

}  // namespace bloomery_redis
