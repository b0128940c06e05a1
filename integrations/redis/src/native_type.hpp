// The callbacks of a native data type whose values are kept and copied as dumps (dump.hpp): the
// BF and CF types share them. `Traits` names the value type (`value`: bloom_value or
// cuckoo_value), `label` ("BF") for log lines and `loadchunk` ("BF.LOADCHUNK") for the AOF.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <new>
#include <span>
#include <vector>

#include "command_support.hpp"
#include "dump.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"

namespace bloomery_redis {

template <class Traits>
struct dump_type_callbacks {
  using value = typename Traits::value;
  using chunk_result = typename value::chunk_result;

  // The RDB value (encoding version 1): whether the filter is complete, the dump's header chunk,
  // and its payload (what was received, for a key still being restored).
  static constexpr int rdb_encoding = 1;

  static void rdb_save(RedisModuleIO* io, void* p) {
    const auto* v = static_cast<const value*>(p);
    try {
      const std::vector<std::byte> header = v->dump_header();
      const std::span<const std::byte> payload = v->dump_payload();
      RedisModule_SaveUnsigned(io, v->complete() ? 1 : 0);
      RedisModule_SaveStringBuffer(io, reinterpret_cast<const char*>(header.data()), header.size());
      RedisModule_SaveStringBuffer(io, reinterpret_cast<const char*>(payload.data()),
                                   payload.size());
    } catch (const std::exception& e) {
      // A save cannot report failure; out of memory ends the process, as zmalloc does in Redis.
      RedisModule_LogIOError(io, "warning", "bloomery-redis: cannot save a %s value: %s",
                             Traits::label, e.what());
      std::abort();
    }
  }

  static void* rdb_load(RedisModuleIO* io, int encoding) {
    if (encoding != rdb_encoding) {
      RedisModule_LogIOError(io, "warning", "bloomery-redis: %s value encoding %d is unknown",
                             Traits::label, encoding);
      return nullptr;
    }
    const bool complete = RedisModule_LoadUnsigned(io) == 1;
    redis_buffer header, payload;
    header.data = RedisModule_LoadStringBuffer(io, &header.size);
    payload.data = RedisModule_LoadStringBuffer(io, &payload.size);
    const char* why = "the dump is damaged";
    try {
      std::unique_ptr<value> v = value::restore_from_header(header.bytes());
      const chunk_result r =
          payload.size == 0 ? chunk_result::accepted : v->restore_chunk(0, payload.bytes());
      if ((r == chunk_result::accepted || r == chunk_result::completed) &&
          v->complete() == complete) {
        return v.release();
      }
    } catch (const bad_dump&) {
    } catch (const std::bad_alloc&) {
      why = "out of memory";
    }
    RedisModule_LogIOError(io, "warning", "bloomery-redis: cannot load a %s value: %s",
                           Traits::label, why);
    return nullptr;
  }

  // The key rebuilt by the same LOADCHUNK commands a SCANDUMP/LOADCHUNK copy sends.
  static void aof_rewrite(RedisModuleIO* aof, RedisModuleString* key, void* p) {
    const auto* v = static_cast<const value*>(p);
    std::vector<std::byte> header;
    try {
      header = v->dump_header();
    } catch (const std::exception& e) {
      RedisModule_LogIOError(aof, "warning", "bloomery-redis: cannot rewrite a %s value: %s",
                             Traits::label, e.what());
      std::abort();
    }
    RedisModule_EmitAOF(aof, Traits::loadchunk, "slb", key, 1LL,
                        reinterpret_cast<const char*>(header.data()), header.size());
    const std::span<const std::byte> payload = v->dump_payload();
    for (std::uint64_t offset = 0; offset < payload.size();) {
      const std::uint64_t length = std::min(max_chunk_bytes, payload.size() - offset);
      RedisModule_EmitAOF(
          aof, Traits::loadchunk, "slb", key, static_cast<long long>(offset + length + 1),
          reinterpret_cast<const char*>(payload.data() + offset), static_cast<std::size_t>(length));
      offset += length;
    }
  }

  static std::size_t mem_usage(const void* p) {
    return static_cast<const value*>(p)->memory_usage();
  }

  static void free_value(void* p) { delete static_cast<value*>(p); }

  static void* copy_value(RedisModuleString*, RedisModuleString*, const void* p) {
    const auto* v = static_cast<const value*>(p);
    if (!memory_available(v->memory_usage())) return nullptr;  // COPY then fails with an error
    try {
      return new value(*v);
    } catch (const std::bad_alloc&) {
      return nullptr;  // COPY then fails with an error
    }
  }

  // Creates the type named `name` (nine characters, unique among modules).
  static RedisModuleType* create(RedisModuleCtx* ctx, const char* name) {
    static type_methods methods;
    methods.rdb_load = rdb_load;
    methods.rdb_save = rdb_save;
    methods.aof_rewrite = aof_rewrite;
    methods.mem_usage = mem_usage;
    methods.free = free_value;
    methods.copy = copy_value;
    return RedisModule_CreateDataType(ctx, name, rdb_encoding, &methods);
  }
};

}  // namespace bloomery_redis
