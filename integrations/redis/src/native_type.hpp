// The callbacks of a native data type whose values are kept and copied as dumps (dump.hpp): the
// BF and CF types share them, given the type's traits (filter_traits.hpp).
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
#include "filter_traits.hpp"
#include "memory_guard.hpp"
#include "redis_api.hpp"

namespace bloomery_redis {

template <filter_traits Traits>
struct dump_type_callbacks {
  using value = typename Traits::value;
  using chunk_result = typename value::chunk_result;

  // The RDB value. Encoding 2: whether the filter is complete, the dump's header chunk, the
  // payload's length (what was received, for a key still being restored), then the payload in
  // strings of at most max_chunk_bytes, so neither saving nor loading holds a second copy of the
  // filter. Encoding 1 (bloomery 0.1.0) had the payload as one string; it still loads.
  static constexpr int rdb_encoding = 2;

  // The dump's header chunk for a save or a rewrite (`doing`), which cannot report failure: out of
  // memory ends the process, as zmalloc does in Redis.
  static std::vector<std::byte> header_or_abort(RedisModuleIO* io, const value& v,
                                                const char* doing) {
    try {
      return v.dump_header();
    } catch (const std::exception& e) {
      RedisModule_LogIOError(io, "warning", "bloomery-redis: cannot %s a %s value: %s", doing,
                             Traits::label, e.what());
      std::abort();
    }
  }

  static void rdb_save(RedisModuleIO* io, void* p) {
    const auto* v = static_cast<const value*>(p);
    const std::vector<std::byte> header = header_or_abort(io, *v, "save");
    const std::span<const std::byte> payload = v->dump_payload();
    RedisModule_SaveUnsigned(io, v->complete() ? 1 : 0);
    RedisModule_SaveStringBuffer(io, reinterpret_cast<const char*>(header.data()), header.size());
    RedisModule_SaveUnsigned(io, payload.size());
    for_each_payload_chunk(payload, [&](const payload_chunk& c) {
      RedisModule_SaveStringBuffer(io, reinterpret_cast<const char*>(c.bytes.data()),
                                   c.bytes.size());
    });
  }

  // The payload's strings into the restore: for encoding 2, its length, then strings that fill
  // it (each within what is missing); for encoding 1, one string (empty for none). False when one
  // does not fit or the restore rejects it.
  static bool load_payload(RedisModuleIO* io, value& v, int encoding) {
    const auto load_piece = [&](std::uint64_t offset, const redis_buffer& piece) {
      const chunk_result r = v.restore_chunk(offset, piece.bytes());
      return r == chunk_result::accepted || r == chunk_result::completed;
    };
    if (encoding == 1) {
      redis_buffer piece;
      piece.data = RedisModule_LoadStringBuffer(io, &piece.size);
      if (RedisModule_IsIOError(io)) return false;
      return piece.size == 0 || load_piece(0, piece);
    }
    const std::uint64_t length = RedisModule_LoadUnsigned(io);
    if (RedisModule_IsIOError(io)) return false;
    for (std::uint64_t offset = 0; offset < length;) {
      redis_buffer piece;
      piece.data = RedisModule_LoadStringBuffer(io, &piece.size);
      if (RedisModule_IsIOError(io) || piece.size == 0 || piece.size > length - offset ||
          !load_piece(offset, piece)) {
        return false;
      }
      offset += piece.size;
    }
    return true;
  }

  static void* rdb_load(RedisModuleIO* io, int encoding) {
    if (encoding < 1 || encoding > rdb_encoding) {
      RedisModule_LogIOError(io, "warning", "bloomery-redis: %s value encoding %d is unknown",
                             Traits::label, encoding);
      return nullptr;
    }
    const bool complete = RedisModule_LoadUnsigned(io) == 1;
    redis_buffer header;
    header.data = RedisModule_LoadStringBuffer(io, &header.size);
    if (RedisModule_IsIOError(io)) {
      RedisModule_LogIOError(
          io, "warning", "bloomery-redis: cannot load a %s value: it is cut short", Traits::label);
      return nullptr;
    }
    // RESTORE from a client is admitted like any new filter; an RDB load or a replica's is not.
    const memory_check check = memory_check_for(RedisModule_GetContextFromIO(io));
    const char* why = "the dump is damaged";
    try {
      std::unique_ptr<value> v = value::restore_from_header(header.bytes(), check);
      if (load_payload(io, *v, encoding) && v->complete() == complete) return v.release();
    } catch (const bad_dump&) {
    } catch (const std::bad_alloc&) {
      why = check == memory_check::none ? "out of memory" : "more than the memory available";
    }
    RedisModule_LogIOError(io, "warning", "bloomery-redis: cannot load a %s value: %s",
                           Traits::label, why);
    return nullptr;
  }

  // The key rebuilt by the same LOADCHUNK commands a SCANDUMP/LOADCHUNK copy sends.
  static void aof_rewrite(RedisModuleIO* aof, RedisModuleString* key, void* p) {
    const auto* v = static_cast<const value*>(p);
    const std::vector<std::byte> header = header_or_abort(aof, *v, "rewrite");
    RedisModule_EmitAOF(aof, Traits::loadchunk, "slb", key, 1LL,
                        reinterpret_cast<const char*>(header.data()), header.size());
    for_each_payload_chunk(v->dump_payload(), [&](const payload_chunk& c) {
      RedisModule_EmitAOF(aof, Traits::loadchunk, "slb", key, c.next_iter,
                          reinterpret_cast<const char*>(c.bytes.data()), c.bytes.size());
    });
  }

  static std::size_t mem_usage(const void* p) {
    return static_cast<const value*>(p)->memory_usage();
  }

  static void free_value(void* p) { delete static_cast<value*>(p); }

  static void* copy_value(RedisModuleString*, RedisModuleString*, const void* p) {
    const auto* v = static_cast<const value*>(p);
    // COPY then fails with an error: for want of memory, or of a key still being restored.
    if (!may_allocate(memory_check_for_server(), v->memory_usage())) return nullptr;
    try {
      return v->copy().release();
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
  }

  // Creates the type named `name` (nine characters, unique among modules).
  static RedisModuleType* create(RedisModuleCtx* ctx, const char* name) {
    return create_data_type(ctx, name, rdb_encoding,
                            {rdb_load, rdb_save, aof_rewrite, mem_usage, free_value, copy_value});
  }
};

}  // namespace bloomery_redis
