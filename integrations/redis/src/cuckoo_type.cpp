// CF.* commands with RedisBloom 2.4's syntax, defaults, replies and error texts (docs/redis.md
// lists where they differ and why), and the native data type holding cuckoo_value.
#include "cuckoo_type.hpp"

#include <algorithm>
#include <bit>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "command_support.hpp"
#include "cuckoo_value.hpp"
#include "native_type.hpp"

namespace bloomery_redis {
namespace {

RedisModuleType* cuckoo_type = nullptr;
std::uint32_t new_fingerprint_bits = cf_default_fingerprint_bits;

constexpr const char* err_restoring = "ERR filter is being restored by CF.LOADCHUNK";
constexpr const char* err_full = "Maximum expansions reached";
constexpr const char* err_grow_memory = "Memory allocation failure";
constexpr const char* err_small_capacity = "Capacity must be at least (BucketSize * 2)";
constexpr const char* err_unknown_argument = "Unknown argument received";
constexpr const char* err_position = "Invalid position";
constexpr const char* err_header = "Invalid header";
constexpr const char* err_chunk = "Couldn't load chunk!";

using add_result = cuckoo_value::add_result;
using chunk_result = cuckoo_value::chunk_result;

// Stores a new filter of `shape` in the (empty, writable) key `name`, or replies the reason and
// returns null. A capacity whose memory cannot be had is an error reply, never an abort; so is one
// past bloomery's 2^48 keys, which no machine has the memory for either. A server that follows a
// master has to hold what the master holds (cannot_follow_master).
cuckoo_value* create_filter(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                            cuckoo_shape shape) {
  shape.fingerprint_bits = new_fingerprint_bits;
  const memory_check check = memory_check_for(ctx);
  std::unique_ptr<cuckoo_value> v;
  try {
    v = std::make_unique<cuckoo_value>(shape, check);
  } catch (const std::bad_alloc&) {
    if (check == memory_check::none) cannot_follow_master(ctx, "a CF filter's creation", name);
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  } catch (const std::invalid_argument&) {
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  }
  if (RedisModule_ModuleTypeSetValue(key, cuckoo_type, v.get()) != redis_ok) {
    RedisModule_ReplyWithError(ctx, "ERR Could not create filter");
    return nullptr;
  }
  return v.release();
}

// An option's integer value in [low, high], or the error RedisBloom replies for it.
std::optional<long long> option_value(RedisModuleCtx* ctx, RedisModuleString* value,
                                      const char* parse_error, const char* range_error,
                                      long long low, long long high) {
  const std::optional<long long> v = to_integer(value);
  if (!v) {
    RedisModule_ReplyWithError(ctx, parse_error);
  } else if (*v < low || *v > high) {
    RedisModule_ReplyWithError(ctx, range_error);
  } else {
    return v;
  }
  return std::nullopt;
}

// CF.RESERVE key capacity [BUCKETSIZE b] [MAXITERATIONS m] [EXPANSION e]
int cf_reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3 || argc % 2 == 0) return RedisModule_WrongArity(ctx);
  const std::optional<long long> capacity = to_integer(argv[2]);
  if (!capacity) return RedisModule_ReplyWithError(ctx, "Bad capacity");
  // Options only after the capacity, so a key spelled like a keyword is not one.
  RedisModuleString* bucket_size_at = nullptr;
  RedisModuleString* max_iterations_at = nullptr;
  RedisModuleString* expansion_at = nullptr;
  for (int i = 3; i < argc; i += 2) {
    if (is_keyword(argv[i], "BUCKETSIZE")) {
      bucket_size_at = argv[i + 1];
    } else if (is_keyword(argv[i], "MAXITERATIONS")) {
      max_iterations_at = argv[i + 1];
    } else if (is_keyword(argv[i], "EXPANSION")) {
      expansion_at = argv[i + 1];
    } else {
      return RedisModule_ReplyWithError(ctx, err_unknown_argument);
    }
  }
  // Checked in RedisBloom's order, so a command with several bad values replies as it does.
  cuckoo_shape shape;
  if (max_iterations_at != nullptr) {
    const std::optional<long long> v =
        option_value(ctx, max_iterations_at, "Couldn't parse MAXITERATIONS",
                     "MAXITERATIONS: value must be an integer between 1 and 65535, inclusive.", 1,
                     cf_max_iterations);
    if (!v) return redis_ok;
    shape.max_iterations = static_cast<std::uint32_t>(*v);
  }
  if (bucket_size_at != nullptr) {
    const std::optional<long long> v =
        option_value(ctx, bucket_size_at, "Couldn't parse BUCKETSIZE",
                     "BUCKETSIZE: value must be an integer between 1 and 255, inclusive.", 1,
                     cf_max_bucket_size);
    if (!v) return redis_ok;
    shape.bucket_size = static_cast<std::uint32_t>(*v);
  }
  if (expansion_at != nullptr) {
    // RedisBloom takes 0 (a filter that never grows, yet reports adds) and says so in its range.
    const std::optional<long long> v = option_value(
        ctx, expansion_at, "Couldn't parse EXPANSION",
        "EXPANSION: value must be an integer between 1 and 32768, inclusive.", 1, cf_max_expansion);
    if (!v) return redis_ok;
    // Rounded up to a power of two, as RedisBloom rounds it.
    shape.expansion = std::bit_ceil(static_cast<std::uint32_t>(*v));
  }
  if (*capacity < 2 * static_cast<long long>(shape.bucket_size)) {
    return RedisModule_ReplyWithError(ctx, err_small_capacity);
  }
  shape.capacity = static_cast<std::uint64_t>(*capacity);

  key_handle key(ctx, argv[1], open_read | open_write);
  bool wrong_type = false;
  if (key.value_of<cuckoo_value>(cuckoo_type, wrong_type) != nullptr) {
    return RedisModule_ReplyWithError(ctx, err_item_exists);
  }
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (create_filter(ctx, key.get(), argv[1], shape) == nullptr) return redis_ok;
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// Adds items (only those not possibly present when `unique`), creating the key with `capacity`
// and the defaults when it is missing and `create` is set. An item that does not fit is an error
// reply for one item, and -1 in an array.
int add_items(RedisModuleCtx* ctx, RedisModuleString* name, std::span<RedisModuleString*> items,
              std::uint64_t capacity, bool create, bool unique, bool array) {
  key_handle key(ctx, name, open_read | open_write);
  bool wrong_type = false;
  cuckoo_value* v = key.value_of<cuckoo_value>(cuckoo_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  bool changed = false;
  if (v == nullptr) {
    if (!create) return RedisModule_ReplyWithError(ctx, err_not_found);
    cuckoo_shape shape;
    shape.capacity = capacity;
    v = create_filter(ctx, key.get(), name, shape);
    if (v == nullptr) return redis_ok;
    changed = true;
  } else if (!v->complete()) {
    return RedisModule_ReplyWithError(ctx, err_restoring);
  }
  if (array) RedisModule_ReplyWithArray(ctx, static_cast<long>(items.size()));
  const memory_check check = memory_check_for(ctx);
  for (RedisModuleString* item : items) {
    const add_result r = v->add(view_of(item), unique, check);
    if (r == add_result::no_memory && check == memory_check::none) {
      cannot_follow_master(ctx, "a CF filter's growth", name);
    }
    changed |= r == add_result::added;
    if (r == add_result::added || r == add_result::present) {
      RedisModule_ReplyWithLongLong(ctx, r == add_result::added ? 1 : 0);
    } else if (array) {
      RedisModule_ReplyWithLongLong(ctx, -1);
    } else {
      RedisModule_ReplyWithError(ctx, r == add_result::full ? err_full : err_grow_memory);
    }
  }
  // Replicas and the AOF run the same command on the same state and reach the same filter.
  if (changed) RedisModule_ReplicateVerbatim(ctx);
  return redis_ok;
}

// CF.ADD key item / CF.ADDNX key item
template <bool Unique>
int cf_add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  return add_items(ctx, argv[1], std::span(argv + 2, 1), cf_default_capacity, true, Unique, false);
}

// CF.INSERT / CF.INSERTNX key [CAPACITY c] [NOCREATE] ITEMS item...
template <bool Unique>
int cf_insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  long long capacity = cf_default_capacity;
  bool create = true;
  int items_at = -1;
  for (int i = 2; i < argc && items_at < 0;) {
    RedisModuleString* a = argv[i];
    if (is_keyword(a, "ITEMS")) {
      items_at = i + 1;
    } else if (is_keyword(a, "NOCREATE")) {
      create = false;
      ++i;
    } else if (is_keyword(a, "CAPACITY")) {
      if (i + 1 == argc) return RedisModule_WrongArity(ctx);
      const std::optional<long long> v = to_integer(argv[i + 1]);
      if (!v) return RedisModule_ReplyWithError(ctx, "Bad capacity");
      if (*v < 2 * cf_default_bucket_size) {
        return RedisModule_ReplyWithError(ctx, err_small_capacity);
      }
      capacity = *v;
      i += 2;
    } else {
      return RedisModule_ReplyWithError(ctx, err_unknown_argument);
    }
  }
  if (items_at < 0 || items_at == argc) return RedisModule_WrongArity(ctx);
  return add_items(ctx, argv[1],
                   std::span(argv + items_at, static_cast<std::size_t>(argc - items_at)),
                   static_cast<std::uint64_t>(capacity), create, Unique, true);
}

// The filter at a key for the commands that answer 0 for a missing key (null then, and for a
// key that replied an error, with `replied` set).
const cuckoo_value* filter_or_none(RedisModuleCtx* ctx, const key_handle& key, bool& replied) {
  bool wrong_type = false;
  const cuckoo_value* v = key.value_of<cuckoo_value>(cuckoo_type, wrong_type);
  replied = true;
  if (wrong_type) {
    RedisModule_ReplyWithError(ctx, err_wrong_type);
  } else if (v != nullptr && !v->complete()) {
    RedisModule_ReplyWithError(ctx, err_restoring);
  } else {
    replied = false;
    return v;
  }
  return nullptr;
}

// CF.EXISTS key item / CF.MEXISTS key item...: 0 for a missing key.
template <bool Array>
int cf_exists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (Array ? argc < 3 : argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  bool replied = false;
  const cuckoo_value* v = filter_or_none(ctx, key, replied);
  if (replied) return redis_ok;
  const std::size_t n = static_cast<std::size_t>(argc - 2);
  std::vector<char> found(n, 0);
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

// CF.COUNT key item: copies of the item's fingerprint in its buckets (0 for a missing key).
int cf_count(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  bool replied = false;
  const cuckoo_value* v = filter_or_none(ctx, key, replied);
  if (replied) return redis_ok;
  return RedisModule_ReplyWithLongLong(
      ctx, v == nullptr ? 0 : clamp(v->filter().count(view_of(argv[2]))));
}

// CF.DEL key item: 1 when a copy of the item's fingerprint was removed, 0 when there is none.
int cf_del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read | open_write);
  bool wrong_type = false;
  cuckoo_value* v = key.value_of<cuckoo_value>(cuckoo_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (v == nullptr) return RedisModule_ReplyWithError(ctx, "Not found");
  if (!v->complete()) return RedisModule_ReplyWithError(ctx, err_restoring);
  if (!v->remove(view_of(argv[2]))) return RedisModule_ReplyWithLongLong(ctx, 0);
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}

// The complete filter at a key for CF.INFO and CF.SCANDUMP, or null after replying why not.
const cuckoo_value* readable_filter(RedisModuleCtx* ctx, const key_handle& key) {
  bool replied = false;
  const cuckoo_value* v = filter_or_none(ctx, key, replied);
  if (v == nullptr && !replied) RedisModule_ReplyWithError(ctx, err_not_found);
  return v;
}

// CF.INFO key
int cf_info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  const cuckoo_value* v = readable_filter(ctx, key);
  if (v == nullptr) return redis_ok;
  const bloomery::scalable_cuckoo_filter& f = v->filter();
  const struct {
    const char* label;
    long long value;
  } fields[] = {
      {"Size", clamp(v->memory_usage())},
      // RedisBloom's count is the first sub-filter's (each later one has `expansion` times more).
      {"Number of buckets", clamp(f.sub_filter(0).buckets)},
      {"Number of filters", clamp(f.sub_filter_count())},
      // RedisBloom's "inserted" drops on delete: the items the filter holds.
      {"Number of items inserted", clamp(f.approximate_count())},
      {"Number of items deleted", clamp(f.removed())},
      {"Bucket size", v->bucket_size()},
      {"Expansion rate", f.expansion()},
      {"Max iterations", f.max_kicks()},
  };
  RedisModule_ReplyWithArray(ctx, static_cast<long>(2 * std::size(fields)));
  for (const auto& x : fields) {
    RedisModule_ReplyWithSimpleString(ctx, x.label);
    RedisModule_ReplyWithLongLong(ctx, x.value);
  }
  return redis_ok;
}

// CF.SCANDUMP key iter: [1, header chunk] for iter 0, then [next iter, payload bytes from
// iter - 1], and [0, nil] past the end, as RedisBloom's iterator runs. An empty filter dumps
// like any other (RedisBloom replies [0, nil] at once, so it cannot be copied).
int cf_scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  const std::optional<long long> iter = to_integer(argv[2]);
  if (!iter || *iter < 0) return RedisModule_ReplyWithError(ctx, err_position);
  key_handle key(ctx, argv[1], open_read);
  const cuckoo_value* v = readable_filter(ctx, key);
  if (v == nullptr) return redis_ok;
  RedisModule_ReplyWithArray(ctx, 2);
  if (*iter == 0) {
    const std::vector<std::byte> header = v->dump_header();
    RedisModule_ReplyWithLongLong(ctx, 1);
    return RedisModule_ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(header.data()),
                                             header.size());
  }
  const std::span<const std::byte> payload = v->dump_payload();
  const std::uint64_t offset = static_cast<std::uint64_t>(*iter - 1);
  if (offset >= payload.size()) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return RedisModule_ReplyWithNull(ctx);
  }
  const std::uint64_t length = std::min(max_chunk_bytes, payload.size() - offset);
  RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(offset + length + 1));
  return RedisModule_ReplyWithStringBuffer(
      ctx, reinterpret_cast<const char*>(payload.data() + offset), length);
}

// CF.LOADCHUNK key iter data: iter 1 with a header chunk starts restoring an empty key; each next
// chunk must follow the bytes received (data chunks are SCANDUMP's, in order). The key answers
// no other CF command until its last chunk arrives; then the whole image is checked, and a
// damaged dump deletes the key and replies `Couldn't load chunk!`.
int cf_loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return RedisModule_WrongArity(ctx);
  const std::optional<long long> iter = to_integer(argv[2]);
  if (!iter || *iter == 0) return RedisModule_ReplyWithError(ctx, err_position);
  const std::span<const std::byte> data = bytes_of(argv[3]);
  key_handle key(ctx, argv[1], open_read | open_write);
  bool wrong_type = false;
  cuckoo_value* v = key.value_of<cuckoo_value>(cuckoo_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (*iter == 1) {
    if (v != nullptr) return RedisModule_ReplyWithError(ctx, err_item_exists);
    std::unique_ptr<cuckoo_value> restored;
    const memory_check check = memory_check_for(ctx);
    try {
      restored = cuckoo_value::restore_from_header(data, check);
    } catch (const bad_dump&) {
      return RedisModule_ReplyWithError(ctx, err_header);
    } catch (const std::bad_alloc&) {
      if (check == memory_check::none) cannot_follow_master(ctx, "CF.LOADCHUNK", argv[1]);
      return RedisModule_ReplyWithError(ctx, err_no_memory);
    }
    if (RedisModule_ModuleTypeSetValue(key.get(), cuckoo_type, restored.get()) != redis_ok) {
      return RedisModule_ReplyWithError(ctx, "ERR Could not create filter");
    }
    restored.release();
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
  }
  if (v == nullptr) return RedisModule_ReplyWithError(ctx, err_not_found);
  // A complete filter takes no chunks (RedisBloom would overwrite its buckets in place).
  if (v->complete() || *iter < 1 || static_cast<std::uint64_t>(*iter - 1) < data.size()) {
    return RedisModule_ReplyWithError(ctx, err_chunk);
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(*iter - 1) - data.size();
  switch (v->restore_chunk(offset, data)) {
    case chunk_result::rejected:
      return RedisModule_ReplyWithError(ctx, err_chunk);
    case chunk_result::corrupt:
      // Replicas and the AOF get the effect, not a chunk that fails there as well.
      RedisModule_DeleteKey(key.get());
      RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
      return RedisModule_ReplyWithError(ctx, err_chunk);
    case chunk_result::accepted:
    case chunk_result::completed:
      break;
  }
  // Unlike RedisBloom 2.4, every data chunk reaches the replicas and the AOF.
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

struct cf_traits {
  using value = cuckoo_value;
  static constexpr const char* label = "CF";
  static constexpr const char* loadchunk = "CF.LOADCHUNK";
};

}  // namespace

bool register_cuckoo(RedisModuleCtx* ctx, std::uint32_t fingerprint_bits) {
  new_fingerprint_bits = fingerprint_bits;
  // Nine characters, unique among modules; not RedisBloom's "MBbloomCF", whose RDB values differ.
  cuckoo_type = dump_type_callbacks<cf_traits>::create(ctx, "bloomr-CF");
  if (cuckoo_type == nullptr) return false;

  struct command {
    const char* name;
    command_fn fn;
    const char* flags;
  };
  const command commands[] = {
      {"cf.reserve", guarded<cf_reserve>, "write deny-oom"},
      {"cf.add", guarded<cf_add<false>>, "write deny-oom"},
      {"cf.addnx", guarded<cf_add<true>>, "write deny-oom"},
      {"cf.insert", guarded<cf_insert<false>>, "write deny-oom"},
      {"cf.insertnx", guarded<cf_insert<true>>, "write deny-oom"},
      {"cf.exists", guarded<cf_exists<false>>, "readonly fast"},
      {"cf.mexists", guarded<cf_exists<true>>, "readonly fast"},
      {"cf.count", guarded<cf_count>, "readonly fast"},
      // A write that never needs memory, as RedisBloom flags it.
      {"cf.del", guarded<cf_del>, "write fast"},
      {"cf.info", guarded<cf_info>, "readonly fast"},
      {"cf.scandump", guarded<cf_scandump>, "readonly"},
      {"cf.loadchunk", guarded<cf_loadchunk>, "write deny-oom"},
  };
  for (const command& c : commands) {
    // One key, the first argument: what Redis Cluster routes on.
    if (RedisModule_CreateCommand(ctx, c.name, c.fn, c.flags, 1, 1, 1) != redis_ok) return false;
  }
  return true;
}

}  // namespace bloomery_redis
