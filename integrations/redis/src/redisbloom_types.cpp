#include "redisbloom_types.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_support.hpp"
#include "memory_guard.hpp"

namespace bloomery_redis {
namespace {

RedisModuleType* bloom_type = nullptr;
RedisModuleType* cuckoo_type = nullptr;
unsigned cuckoo_max_expansions = rb_cuckoo::default_max_expansions;
key_layout layout = key_layout::bloomery;

// A field the server could not read (a short or mistyped value: RedisModule_IsIOError).
struct short_value : std::runtime_error {
  short_value() : std::runtime_error("the value is cut short or its fields have the wrong types") {}
};

// The library's RDB Source and Sink over the module API, which stores each field with its type.
struct rdb_source {
  RedisModuleIO* io;
  void check() const {
    if (RedisModule_IsIOError(io)) throw short_value();
  }
  std::uint64_t read_unsigned() {
    const std::uint64_t v = RedisModule_LoadUnsigned(io);
    check();
    return v;
  }
  double read_double() {
    const double v = RedisModule_LoadDouble(io);
    check();
    return v;
  }
  std::string read_string() {
    redis_buffer b;
    b.data = RedisModule_LoadStringBuffer(io, &b.size);
    check();
    return std::string(b.data, b.size);
  }
};

struct rdb_sink {
  RedisModuleIO* io;
  void write_unsigned(std::uint64_t v) { RedisModule_SaveUnsigned(io, v); }
  void write_double(double v) { RedisModule_SaveDouble(io, v); }
  void write_string(std::span<const std::byte> b) {
    RedisModule_SaveStringBuffer(io, reinterpret_cast<const char*>(b.data()), b.size());
  }
};

// What differs between the two types' callbacks: names, and the stream of chunks after the
// header (CF's AOF rewrite sends an empty filter's slots too, which CF.SCANDUMP would not).
template <class Chain>
struct type_names;
template <>
struct type_names<rb_bloom> {
  static constexpr const char* label = "RedisBloom BF";
  static constexpr const char* loadchunk = "BF.LOADCHUNK";
  static std::optional<rb_bloom::chunk> chunk_at(const rb_bloom& c, std::uint64_t iter) {
    return c.scandump_chunk(iter);
  }
};
template <>
struct type_names<rb_cuckoo> {
  static constexpr const char* label = "RedisBloom CF";
  static constexpr const char* loadchunk = "CF.LOADCHUNK";
  static std::optional<rb_cuckoo::chunk> chunk_at(const rb_cuckoo& c, std::uint64_t iter) {
    return c.stream_chunk(iter);
  }
};

template <class Chain>
struct callbacks {
  using names = type_names<Chain>;

  // RedisBloom's encodings 0 to 4, every field checked before it is trusted (the library's
  // load_rdb); a RESTORE from a client may not take more than a new filter may.
  static void* rdb_load(RedisModuleIO* io, int encver) {
    const memory_check check = memory_check_for(RedisModule_GetContextFromIO(io));
    std::string why;
    try {
      rdb_source in{io};
      return new Chain(Chain::load_rdb(encver, in, admissible_bytes(check)));
    } catch (const std::bad_alloc&) {
      why = check == memory_check::none ? "out of memory" : "more than the memory available";
    } catch (const std::exception& e) {
      why = without_library_prefix(e.what());
    }
    RedisModule_LogIOError(io, "warning", "bloomery-redis: cannot load a %s value: %s",
                           names::label, why.c_str());
    return nullptr;
  }

  // Encoding 4, field for field as RedisBloom writes it, so DUMP of an unchanged key is
  // RedisBloom's payload and the RDB loads into RedisBloom again.
  static void rdb_save(RedisModuleIO* io, void* p) {
    rdb_sink out{io};
    static_cast<const Chain*>(p)->save_rdb(out);
  }

  // RedisBloom's own rewrite: the LOADCHUNK commands of its SCANDUMP sequence.
  static void aof_rewrite(RedisModuleIO* aof, RedisModuleString* key, void* p) {
    const auto& c = *static_cast<const Chain*>(p);
    const std::vector<std::byte> header = c.scandump_header();
    RedisModule_EmitAOF(aof, names::loadchunk, "slb", key, 1LL,
                        reinterpret_cast<const char*>(header.data()), header.size());
    for (auto chunk = names::chunk_at(c, 1); chunk; chunk = names::chunk_at(c, chunk->next_iter)) {
      RedisModule_EmitAOF(aof, names::loadchunk, "slb", key,
                          static_cast<long long>(chunk->next_iter),
                          reinterpret_cast<const char*>(chunk->bytes.data()), chunk->bytes.size());
    }
  }

  // RedisBloom's own figure (its INFO Size), which MEMORY USAGE adds to the key's.
  static std::size_t mem_usage(const void* p) {
    return static_cast<std::size_t>(static_cast<const Chain*>(p)->info_size());
  }

  static void free_value(void* p) { delete static_cast<Chain*>(p); }

  static RedisModuleType* create(RedisModuleCtx* ctx) {
    return create_data_type(
        ctx, std::string(Chain::redis_type_name).c_str(), Chain::rdb_encoding,
        // No copy callback: RedisBloom 2.4 has none, and COPY refuses these keys there too.
        {rdb_load, rdb_save, aof_rewrite, mem_usage, free_value, nullptr});
  }
};

// RedisBloom's types bloomery does not provide: registered only so that loading one names it.
struct absent_type {
  const char* name;  // Redis type name, nine characters
  const char* what;
};
constexpr absent_type absent_types[] = {
    {"TopK-TYPE", "Top-K"},
    {"CMSk-TYPE", "Count-Min sketch"},
    {"TDIS-TYPE", "t-digest"},
};

template <std::size_t I>
void* refuse_absent(RedisModuleIO* io, int) {
  RedisModule_LogIOError(io, "warning",
                         "bloomery-redis: the data holds a RedisBloom %s value (type %s); "
                         "bloomery does not provide %s, so it cannot be loaded (keep RedisBloom "
                         "for it, or delete those keys before switching)",
                         absent_types[I].what, absent_types[I].name, absent_types[I].what);
  return nullptr;
}
void never_saved(RedisModuleIO*, void*) {}
void never_freed(void*) {}

template <std::size_t I>
bool register_absent(RedisModuleCtx* ctx) {
  return create_data_type(
             ctx, absent_types[I].name, 0,
             {refuse_absent<I>, never_saved, nullptr, nullptr, never_freed, nullptr}) != nullptr;
}

}  // namespace

RedisModuleType* rb_bloom_type() noexcept {
  return bloom_type;
}
RedisModuleType* rb_cuckoo_type() noexcept {
  return cuckoo_type;
}

void set_new_key_layout(key_layout l) noexcept {
  layout = l;
}
key_layout new_key_layout() noexcept {
  return layout;
}

void set_rb_cuckoo_max_expansions(unsigned n) noexcept {
  cuckoo_max_expansions = n;
}
unsigned rb_cuckoo_max_expansions() noexcept {
  return cuckoo_max_expansions;
}

bool register_redisbloom_types(RedisModuleCtx* ctx) {
  bloom_type = callbacks<rb_bloom>::create(ctx);
  cuckoo_type = callbacks<rb_cuckoo>::create(ctx);
  return bloom_type != nullptr && cuckoo_type != nullptr && register_absent<0>(ctx) &&
         register_absent<1>(ctx) && register_absent<2>(ctx);
}

}  // namespace bloomery_redis
