// BF.* commands with RedisBloom 2.4's syntax, defaults, replies and error texts (docs/redis.md
// lists where they differ and why), and the native data type holding bloom_value.
#include "bloom_type.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bloom_value.hpp"
#include "command_support.hpp"
#include "native_type.hpp"

namespace bloomery_redis {
namespace {

RedisModuleType* bloom_type = nullptr;

constexpr const char* err_restoring = "ERR filter is being restored by BF.LOADCHUNK";
constexpr const char* err_full = "ERR non scaling filter is full";
constexpr const char* err_cannot_grow = "ERR problem inserting into filter";
constexpr const char* err_unknown_argument = "Unknown argument received";

using add_result = bloom_value::add_result;
using chunk_result = bloom_value::chunk_result;

// Stores a new filter of `shape` in the (empty, writable) key `name`, or replies the reason and
// returns null. A capacity whose memory cannot be had is an error reply, never an abort; but a
// server that follows a master has to hold what the master holds (cannot_follow_master).
bloom_value* create_filter(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                           const bloom_shape& shape) {
  const memory_check check = memory_check_for(ctx);
  std::unique_ptr<bloom_value> v;
  try {
    v = std::make_unique<bloom_value>(shape, check);
  } catch (const std::bad_alloc&) {
    if (check == memory_check::none) cannot_follow_master(ctx, "a BF filter's creation", name);
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  } catch (const std::exception& e) {
    reply_error(ctx, "ERR could not create filter: " + without_library_prefix(e.what()));
    return nullptr;
  }
  if (RedisModule_ModuleTypeSetValue(key, bloom_type, v.get()) != redis_ok) {
    RedisModule_ReplyWithError(ctx, "ERR could not create filter");
    return nullptr;
  }
  return v.release();
}

// BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]
int bf_reserve(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4 || argc > 7) return RedisModule_WrongArity(ctx);
  bloom_shape shape;
  const std::optional<double> rate = to_double(argv[2]);
  if (!rate) return RedisModule_ReplyWithError(ctx, "ERR bad error rate");
  if (!(*rate > 0 && *rate < 1)) {
    return RedisModule_ReplyWithError(ctx, "ERR (0 < error rate range < 1) ");
  }
  const std::optional<long long> capacity = to_integer(argv[3]);
  if (!capacity) return RedisModule_ReplyWithError(ctx, "ERR bad capacity");
  if (*capacity <= 0) {
    return RedisModule_ReplyWithError(ctx, "ERR (capacity should be larger than 0)");
  }
  // Options only after the capacity, so a key or rate spelled like a keyword is not one.
  int expansion_at = -1;
  for (int i = 4; i < argc;) {
    if (is_keyword(argv[i], "NONSCALING")) {
      shape.nonscaling = true;
      ++i;
    } else if (is_keyword(argv[i], "EXPANSION")) {
      if (i + 1 == argc) return RedisModule_ReplyWithError(ctx, "ERR no expansion");
      expansion_at = i + 1;
      i += 2;
    } else {
      return RedisModule_ReplyWithError(ctx, err_unknown_argument);
    }
  }
  if (expansion_at != -1) {
    if (shape.nonscaling) {
      return RedisModule_ReplyWithError(ctx, "Nonscaling filters cannot expand");
    }
    const std::optional<long long> expansion = to_integer(argv[expansion_at]);
    if (!expansion || *expansion < 1 || *expansion > bf_max_expansion) {
      return RedisModule_ReplyWithError(ctx, "ERR bad expansion");
    }
    shape.expansion = static_cast<std::uint64_t>(*expansion);
  }
  shape.error_rate = *rate;
  shape.capacity = static_cast<std::uint64_t>(*capacity);

  key_handle key(ctx, argv[1], open_read | open_write);
  bool wrong_type = false;
  if (key.value_of<bloom_value>(bloom_type, wrong_type) != nullptr) {
    return RedisModule_ReplyWithError(ctx, err_item_exists);
  }
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (create_filter(ctx, key.get(), argv[1], shape) == nullptr) return redis_ok;
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

// Adds items, creating the key with `shape` when it is missing and `create` is set. In an array
// reply an item that cannot be added is an error element, and the array stops there.
int add_items(RedisModuleCtx* ctx, RedisModuleString* name, std::span<RedisModuleString*> items,
              const bloom_shape& shape, bool create, bool array) {
  key_handle key(ctx, name, open_read | open_write);
  bool wrong_type = false;
  bloom_value* v = key.value_of<bloom_value>(bloom_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  bool changed = false;
  if (v == nullptr) {
    if (!create) return RedisModule_ReplyWithError(ctx, err_not_found);
    v = create_filter(ctx, key.get(), name, shape);
    if (v == nullptr) return redis_ok;
    changed = true;
  } else if (!v->complete()) {
    return RedisModule_ReplyWithError(ctx, err_restoring);
  }
  if (array) RedisModule_ReplyWithArray(ctx, postponed_length);
  const memory_check check = memory_check_for(ctx);
  long replies = 0;
  for (RedisModuleString* item : items) {
    ++replies;
    const add_result r = v->add(view_of(item), check);
    if (r == add_result::no_memory && check == memory_check::none) {
      cannot_follow_master(ctx, "a BF filter's growth", name);
    }
    if (r == add_result::added || r == add_result::present) {
      changed |= r == add_result::added;
      RedisModule_ReplyWithLongLong(ctx, r == add_result::added ? 1 : 0);
    } else {
      RedisModule_ReplyWithError(ctx, r == add_result::full ? err_full : err_cannot_grow);
      break;
    }
  }
  if (array) RedisModule_ReplySetArrayLength(ctx, replies);
  // Replicas and the AOF run the same command on the same state and reach the same filter.
  if (changed) RedisModule_ReplicateVerbatim(ctx);
  return redis_ok;
}

// BF.ADD key item
int bf_add(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  return add_items(ctx, argv[1], std::span(argv + 2, 1), bloom_shape{}, true, false);
}

// BF.MADD key item...
int bf_madd(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return RedisModule_WrongArity(ctx);
  return add_items(ctx, argv[1], std::span(argv + 2, static_cast<std::size_t>(argc - 2)),
                   bloom_shape{}, true, true);
}

// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item...
int bf_insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  double rate = bf_default_error_rate;
  long long capacity = bf_default_capacity;
  long long expansion = bf_default_expansion;
  bool create = true;
  bool nonscaling = false;
  int items_at = -1;
  for (int i = 2; i < argc && items_at < 0;) {
    RedisModuleString* a = argv[i];
    if (is_keyword(a, "ITEMS")) {
      items_at = i + 1;
    } else if (is_keyword(a, "NOCREATE")) {
      create = false;
      ++i;
    } else if (is_keyword(a, "NONSCALING")) {
      nonscaling = true;
      ++i;
    } else if (is_keyword(a, "ERROR") || is_keyword(a, "CAPACITY") || is_keyword(a, "EXPANSION")) {
      if (i + 1 == argc) return RedisModule_WrongArity(ctx);
      RedisModuleString* value = argv[i + 1];
      if (is_keyword(a, "ERROR")) {
        const std::optional<double> v = to_double(value);
        if (!v) return RedisModule_ReplyWithError(ctx, "Bad error rate");
        rate = *v;
      } else {
        const std::optional<long long> v = to_integer(value);
        if (!v) {
          return RedisModule_ReplyWithError(
              ctx, is_keyword(a, "CAPACITY") ? "Bad capacity" : "Bad expansion");
        }
        (is_keyword(a, "CAPACITY") ? capacity : expansion) = *v;
      }
      i += 2;
    } else {
      return RedisModule_ReplyWithError(ctx, err_unknown_argument);
    }
  }
  if (items_at < 0 || items_at == argc) return RedisModule_WrongArity(ctx);
  if (!(rate > 0 && rate < 1) || capacity < 1 || expansion < 1 || expansion > bf_max_expansion) {
    return RedisModule_ReplyWithError(ctx, "Bad argument received");
  }
  const bloom_shape shape{rate, static_cast<std::uint64_t>(capacity),
                          static_cast<std::uint64_t>(expansion), nonscaling};
  return add_items(ctx, argv[1],
                   std::span(argv + items_at, static_cast<std::size_t>(argc - items_at)), shape,
                   create, true);
}

// BF.EXISTS key item / BF.MEXISTS key item...: 0 for a missing key.
int check_items(RedisModuleCtx* ctx, RedisModuleString** argv, int argc, bool array) {
  if (array ? argc < 3 : argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  bool wrong_type = false;
  const bloom_value* v = key.value_of<bloom_value>(bloom_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (v != nullptr && !v->complete()) return RedisModule_ReplyWithError(ctx, err_restoring);
  const std::size_t n = static_cast<std::size_t>(argc - 2);
  std::vector<char> found(n, 0);
  if (v != nullptr) {
    std::vector<std::string_view> items(n);
    for (std::size_t i = 0; i < n; ++i) items[i] = view_of(argv[2 + i]);
    v->filter().may_contain_many(items, found);
  }
  if (!array) return RedisModule_ReplyWithLongLong(ctx, found[0] ? 1 : 0);
  RedisModule_ReplyWithArray(ctx, static_cast<long>(n));
  for (const char f : found) RedisModule_ReplyWithLongLong(ctx, f ? 1 : 0);
  return redis_ok;
}
int bf_exists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return check_items(ctx, argv, argc, false);
}
int bf_mexists(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  return check_items(ctx, argv, argc, true);
}

// The complete filter at a key for the read-only commands, or null after replying why not.
const bloom_value* readable_filter(RedisModuleCtx* ctx, const key_handle& key) {
  bool wrong_type = false;
  const bloom_value* v = key.value_of<bloom_value>(bloom_type, wrong_type);
  if (wrong_type) {
    RedisModule_ReplyWithError(ctx, err_wrong_type);
  } else if (v == nullptr) {
    RedisModule_ReplyWithError(ctx, err_not_found);
  } else if (!v->complete()) {
    RedisModule_ReplyWithError(ctx, err_restoring);
  } else {
    return v;
  }
  return nullptr;
}

// BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]
int bf_info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2 && argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  const bloom_value* v = readable_filter(ctx, key);
  if (v == nullptr) return redis_ok;
  const bloomery::scalable_bloom_filter& f = v->filter();
  struct field {
    const char* keyword;
    const char* label;
    long long value;  // -1: nil (the expansion of a NONSCALING filter)
  };
  const field fields[] = {
      {"CAPACITY", "Capacity", clamp(f.current_capacity())},
      {"SIZE", "Size", clamp(v->memory_usage())},
      {"FILTERS", "Number of filters", clamp(f.sub_filter_count())},
      {"ITEMS", "Number of items inserted", clamp(f.inserted())},
      {"EXPANSION", "Expansion rate",
       v->nonscaling() ? -1 : static_cast<long long>(f.options().growth)},
  };
  const auto reply_value = [&](const field& x) {
    return x.value < 0 ? RedisModule_ReplyWithNull(ctx)
                       : RedisModule_ReplyWithLongLong(ctx, x.value);
  };
  if (argc == 3) {
    for (const field& x : fields) {
      if (is_keyword(argv[2], x.keyword)) {
        RedisModule_ReplyWithArray(ctx, 1);
        return reply_value(x);
      }
    }
    return RedisModule_ReplyWithError(ctx, "Invalid information value");
  }
  RedisModule_ReplyWithArray(ctx, static_cast<long>(2 * std::size(fields)));
  for (const field& x : fields) {
    RedisModule_ReplyWithSimpleString(ctx, x.label);
    reply_value(x);
  }
  return redis_ok;
}

// BF.CARD key: items added, 0 for a missing key.
int bf_card(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  if (key.get() == nullptr) return RedisModule_ReplyWithLongLong(ctx, 0);
  const bloom_value* v = readable_filter(ctx, key);
  if (v == nullptr) return redis_ok;
  return RedisModule_ReplyWithLongLong(ctx, clamp(v->filter().inserted()));
}

// BF.SCANDUMP key iter: [1, header chunk] for iter 0, then [next iter, payload bytes from
// iter - 1], and [0, ""] past the end, as RedisBloom's iterator runs.
int bf_scandump(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  const bloom_value* v = readable_filter(ctx, key);
  if (v == nullptr) return redis_ok;
  const std::optional<long long> iter = to_integer(argv[2]);
  if (!iter) return RedisModule_ReplyWithError(ctx, "Second argument must be numeric");
  if (*iter == 0) {
    const std::vector<std::byte> header = v->dump_header();
    RedisModule_ReplyWithArray(ctx, 2);
    RedisModule_ReplyWithLongLong(ctx, 1);
    return RedisModule_ReplyWithStringBuffer(ctx, reinterpret_cast<const char*>(header.data()),
                                             header.size());
  }
  const std::span<const std::byte> payload = v->dump_payload();
  RedisModule_ReplyWithArray(ctx, 2);
  if (*iter < 1 || static_cast<std::uint64_t>(*iter - 1) >= payload.size()) {
    RedisModule_ReplyWithLongLong(ctx, 0);
    return RedisModule_ReplyWithStringBuffer(ctx, "", 0);
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(*iter - 1);
  const std::uint64_t length = std::min(max_chunk_bytes, payload.size() - offset);
  RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(offset + length + 1));
  return RedisModule_ReplyWithStringBuffer(
      ctx, reinterpret_cast<const char*>(payload.data() + offset), length);
}

// BF.LOADCHUNK key iter data: iter 1 with a header chunk starts restoring an empty key; each next
// chunk must follow the bytes received (data chunks are SCANDUMP's, in order). The key answers
// no other BF command until its last chunk arrives; then the whole image is checked, and a
// damaged dump deletes the key and replies `ERR received bad data`.
int bf_loadchunk(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 4) return RedisModule_WrongArity(ctx);
  const std::optional<long long> iter = to_integer(argv[2]);
  if (!iter) return RedisModule_ReplyWithError(ctx, "ERR Second argument must be numeric");
  const std::span<const std::byte> data = bytes_of(argv[3]);
  key_handle key(ctx, argv[1], open_read | open_write);
  bool wrong_type = false;
  bloom_value* v = key.value_of<bloom_value>(bloom_type, wrong_type);
  if (wrong_type) return RedisModule_ReplyWithError(ctx, err_wrong_type);
  if (v == nullptr) {
    if (*iter != 1) return RedisModule_ReplyWithError(ctx, err_not_found);
    std::unique_ptr<bloom_value> restored;
    const memory_check check = memory_check_for(ctx);
    try {
      restored = bloom_value::restore_from_header(data, check);
    } catch (const bad_dump&) {
      return RedisModule_ReplyWithError(ctx, err_bad_data);
    } catch (const std::bad_alloc&) {
      if (check == memory_check::none) cannot_follow_master(ctx, "BF.LOADCHUNK", argv[1]);
      return RedisModule_ReplyWithError(ctx, err_no_memory);
    }
    if (RedisModule_ModuleTypeSetValue(key.get(), bloom_type, restored.get()) != redis_ok) {
      return RedisModule_ReplyWithError(ctx, "ERR could not create filter");
    }
    restored.release();
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
  }
  // A complete filter takes no chunks (RedisBloom would overwrite its bits in place).
  if (v->complete() || *iter < 1 || static_cast<std::uint64_t>(*iter - 1) < data.size()) {
    return RedisModule_ReplyWithError(ctx, err_bad_data);
  }
  const std::uint64_t offset = static_cast<std::uint64_t>(*iter - 1) - data.size();
  switch (v->restore_chunk(offset, data)) {
    case chunk_result::rejected:
      return RedisModule_ReplyWithError(ctx, err_bad_data);
    case chunk_result::corrupt:
      // Replicas and the AOF get the effect, not a chunk that fails there as well.
      RedisModule_DeleteKey(key.get());
      RedisModule_Replicate(ctx, "DEL", "s", argv[1]);
      return RedisModule_ReplyWithError(ctx, err_bad_data);
    case chunk_result::accepted:
    case chunk_result::completed:
      break;
  }
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

struct bf_traits {
  using value = bloom_value;
  static constexpr const char* label = "BF";
  static constexpr const char* loadchunk = "BF.LOADCHUNK";
};

}  // namespace

bool register_bloom(RedisModuleCtx* ctx) {
  // Nine characters, unique among modules; not RedisBloom's "MBbloom--", whose RDB values differ.
  bloom_type = dump_type_callbacks<bf_traits>::create(ctx, "bloomr-BF");
  if (bloom_type == nullptr) return false;

  struct command {
    const char* name;
    command_fn fn;
    const char* flags;
  };
  const command commands[] = {
      {"bf.reserve", guarded<bf_reserve>, "write deny-oom"},
      {"bf.add", guarded<bf_add>, "write deny-oom"},
      {"bf.madd", guarded<bf_madd>, "write deny-oom"},
      {"bf.insert", guarded<bf_insert>, "write deny-oom"},
      {"bf.exists", guarded<bf_exists>, "readonly fast"},
      {"bf.mexists", guarded<bf_mexists>, "readonly fast"},
      {"bf.info", guarded<bf_info>, "readonly fast"},
      {"bf.card", guarded<bf_card>, "readonly fast"},
      {"bf.scandump", guarded<bf_scandump>, "readonly"},
      {"bf.loadchunk", guarded<bf_loadchunk>, "write deny-oom"},
  };
  for (const command& c : commands) {
    // One key, the first argument: what Redis Cluster routes on.
    if (RedisModule_CreateCommand(ctx, c.name, c.fn, c.flags, 1, 1, 1) != redis_ok) return false;
  }
  return true;
}

}  // namespace bloomery_redis
