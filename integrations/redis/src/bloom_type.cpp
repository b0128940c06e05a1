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
#include "dump_commands.hpp"
#include "filter_commands.hpp"
#include "filter_traits.hpp"
#include "native_type.hpp"
#include "redisbloom_commands.hpp"
#include "redisbloom_types.hpp"

namespace bloomery_redis {
namespace {

// The shape of a key that BF.ADD / BF.MADD create, and BF.INSERT's defaults (register_bloom).
bloom_shape new_key_shape;

constexpr const char* err_unknown_argument = "Unknown argument received";

struct bf_traits {
  using value = bloom_value;
  static inline RedisModuleType* type = nullptr;
  static constexpr const char* label = "BF";
  static constexpr const char* loadchunk = "BF.LOADCHUNK";
  static constexpr const char* err_restoring = "ERR filter is being restored by BF.LOADCHUNK";
  static constexpr const char* err_create = "ERR could not create filter";
  // Keys that came from RedisBloom keep its layout (redisbloom_commands.hpp).
  using redisbloom_value = rb_bloom;
  static RedisModuleType* redisbloom_type() { return rb_bloom_type(); }
  // BF.SCANDUMP reads a negative iter as past the end; BF.LOADCHUNK replies one error for any
  // chunk it cannot take.
  static constexpr dump_replies replies = {
      .bad_scandump_iter = "Second argument must be numeric",
      .scandump_refuses_negative_iter = false,
      .scandump_iter_before_key = false,
      .scandump_end_is_nil = false,
      .bad_loadchunk_iter = "ERR Second argument must be numeric",
      .loadchunk_refuses_iter_0 = false,
      .header_for_existing_key = err_bad_data,
      .bad_header = err_bad_data,
      .bad_chunk = err_bad_data,
  };
};

using add_result = bloom_value::add_result;

// Stores a new filter of `shape` in the (empty, writable) key `name`, or replies the reason and
// returns null (store_new_value); a shape bloomery cannot build is an error reply too.
bloom_value* create_filter(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                           const bloom_shape& shape) {
  try {
    return store_new_value<bf_traits>(
        ctx, key, name, "a BF filter's creation",
        [&](memory_check check) { return std::make_unique<bloom_value>(shape, check); });
  } catch (const std::exception& e) {
    reply_error(ctx, "ERR could not create filter: " + without_library_prefix(e.what()));
    return nullptr;
  }
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
  long long rb_expansion = bf_default_expansion;
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
    // RedisBloom's layout takes any integer (0 and negative ones make a chain that cannot grow).
    if (!expansion || (!redisbloom_layout() && (*expansion < 1 || *expansion > bf_max_expansion))) {
      return RedisModule_ReplyWithError(ctx, "ERR bad expansion");
    }
    rb_expansion = *expansion;
    shape.expansion = static_cast<std::uint64_t>(*expansion);
  }
  shape.error_rate = *rate;
  shape.capacity = static_cast<std::uint64_t>(*capacity);

  if (redisbloom_layout()) {
    const rb_bloom::parameters p{*capacity, *rate, rb_expansion, shape.nonscaling};
    return reserve_key<bf_traits>(
        ctx, argv[1], [&](RedisModuleKey* key) { return rb_create_bloom(ctx, key, argv[1], p); });
  }
  return reserve_key<bf_traits>(
      ctx, argv[1], [&](RedisModuleKey* key) { return create_filter(ctx, key, argv[1], shape); });
}

// Adds items, creating the key with `shape` when it is missing and `create` is set. In an array
// reply an item that cannot be added is an error element, and the array stops there.
int add_items(RedisModuleCtx* ctx, RedisModuleString* name, std::span<RedisModuleString*> items,
              const bloom_shape& shape, bool create, bool array) {
  key_handle key(ctx, name, open_read | open_write);
  if (rb_bloom* chain = redisbloom_value<rb_bloom>(key, rb_bloom_type())) {
    return rb_bf_add(ctx, *chain, name, items, array);
  }
  if (redisbloom_layout() && create && RedisModule_KeyType(key.get()) == keytype_empty) {
    const rb_bloom::parameters p{static_cast<long long>(shape.capacity), shape.error_rate,
                                 static_cast<long long>(shape.expansion), shape.nonscaling};
    rb_bloom* chain = rb_create_bloom(ctx, key.get(), name, p);
    return chain == nullptr ? redis_ok : rb_bf_add(ctx, *chain, name, items, array, true);
  }
  bool changed = false;
  bloom_value* v = value_to_write<bf_traits>(ctx, key, create, changed, [&](RedisModuleKey* k) {
    return create_filter(ctx, k, name, shape);
  });
  if (v == nullptr) return redis_ok;
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
      RedisModule_ReplyWithError(ctx, r == add_result::full ? err_bf_full : err_bf_cannot_grow);
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
  return add_items(ctx, argv[1], std::span(argv + 2, 1), new_key_shape, true, false);
}

// BF.MADD key item...
int bf_madd(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 3) return RedisModule_WrongArity(ctx);
  return add_items(ctx, argv[1], std::span(argv + 2, static_cast<std::size_t>(argc - 2)),
                   new_key_shape, true, true);
}

// BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE] [NONSCALING] ITEMS item...
int bf_insert(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc < 4) return RedisModule_WrongArity(ctx);
  double rate = new_key_shape.error_rate;
  long long capacity = static_cast<long long>(new_key_shape.capacity);
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
  // RedisBloom's layout has no upper bound on the expansion (it keeps 32 bits of it).
  if (!(rate > 0 && rate < 1) || capacity < 1 || expansion < 1 ||
      (!redisbloom_layout() && expansion > bf_max_expansion)) {
    return RedisModule_ReplyWithError(ctx, "Bad argument received");
  }
  const bloom_shape shape{rate, static_cast<std::uint64_t>(capacity),
                          static_cast<std::uint64_t>(expansion), nonscaling};
  return add_items(ctx, argv[1],
                   std::span(argv + items_at, static_cast<std::size_t>(argc - items_at)), shape,
                   create, true);
}

// BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]
int bf_info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2 && argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  struct field {
    const char* keyword;
    const char* label;
    long long value;  // -1: nil (the expansion of a NONSCALING filter)
  };
  field fields[] = {
      {"CAPACITY", "Capacity", 0},         {"SIZE", "Size", 0},
      {"FILTERS", "Number of filters", 0}, {"ITEMS", "Number of items inserted", 0},
      {"EXPANSION", "Expansion rate", -1},
  };
  if (const rb_bloom* chain = redisbloom_value<rb_bloom>(key, rb_bloom_type())) {
    // RedisBloom's figures, replied as it replies its unsigned counts (signed 64-bit).
    fields[0].value = static_cast<long long>(chain->capacity());
    fields[1].value = static_cast<long long>(chain->info_size());
    fields[2].value = static_cast<long long>(chain->filter_count());
    fields[3].value = static_cast<long long>(chain->items());
    if (chain->expansion()) fields[4].value = *chain->expansion();
  } else {
    const bloom_value* v = readable_value<bf_traits>(ctx, key);
    if (v == nullptr) return redis_ok;
    const bloomery::scalable_bloom_filter& f = v->filter();
    fields[0].value = clamp(f.current_capacity());
    fields[1].value = clamp(v->memory_usage());
    fields[2].value = clamp(f.sub_filter_count());
    fields[3].value = clamp(f.inserted());
    if (!v->nonscaling()) fields[4].value = static_cast<long long>(f.options().growth);
  }
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
  if (const rb_bloom* chain = redisbloom_value<rb_bloom>(key, rb_bloom_type())) {
    return RedisModule_ReplyWithLongLong(ctx, static_cast<long long>(chain->items()));
  }
  const bloom_value* v = readable_value<bf_traits>(ctx, key);
  if (v == nullptr) return redis_ok;
  return RedisModule_ReplyWithLongLong(ctx, clamp(v->filter().inserted()));
}

// BF.DEBUG key: RedisBloom's reply on a key of its layout; on bloomery's, the same format from
// its sub-filters: "size:<items>", then per sub-filter its bytes, bits, hashes, hash width (64),
// capacity, items and target rate.
int bf_debug(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  if (const rb_bloom* chain = redisbloom_value<rb_bloom>(key, rb_bloom_type())) {
    return rb_bf_debug(ctx, *chain);
  }
  const bloom_value* v = readable_value<bf_traits>(ctx, key);
  if (v == nullptr) return redis_ok;
  const bloomery::scalable_bloom_filter& f = v->filter();
  RedisModule_ReplyWithArray(ctx, static_cast<long>(1 + f.sub_filter_count()));
  reply_text(ctx, rb_bloom::debug_size_line(f.inserted()));
  for (std::size_t i = 0; i < f.sub_filter_count(); ++i) {
    const bloomery::bloom_filter::view s = f.sub_filter(i);
    reply_text(ctx, rb_bloom::debug_link_line(s.size_in_bytes(), s.bit_count(), s.hash_count(), 64,
                                              s.capacity(), s.inserted(), s.target_fpr()));
  }
  return redis_ok;
}

}  // namespace

bool register_bloom(RedisModuleCtx* ctx, double error_rate, long long capacity) {
  new_key_shape.error_rate = error_rate;
  new_key_shape.capacity = static_cast<std::uint64_t>(capacity);
  // bloomery's own type for new keys (nine characters, unique among modules); RedisBloom's
  // "MBbloom--" holds the keys that came from RedisBloom (redisbloom_types.hpp).
  bf_traits::type = dump_type_callbacks<bf_traits>::create(ctx, "bloomr-BF");
  if (bf_traits::type == nullptr) return false;
  const command_spec commands[] = {
      {"bf.reserve", guarded<bf_reserve>, "write deny-oom"},
      {"bf.add", guarded<bf_add>, "write deny-oom"},
      {"bf.madd", guarded<bf_madd>, "write deny-oom"},
      {"bf.insert", guarded<bf_insert>, "write deny-oom"},
      {"bf.exists", guarded<exists_command<bf_traits, false>>, "readonly fast"},
      {"bf.mexists", guarded<exists_command<bf_traits, true>>, "readonly fast"},
      {"bf.info", guarded<bf_info>, "readonly fast"},
      {"bf.card", guarded<bf_card>, "readonly fast"},
      {"bf.debug", guarded<bf_debug>, "readonly fast"},
      {"bf.scandump", guarded<scandump_command<bf_traits>>, "readonly"},
      {"bf.loadchunk", guarded<loadchunk_command<bf_traits>>, "write deny-oom"},
  };
  return create_commands(ctx, commands);
}

}  // namespace bloomery_redis
