// CF.* commands with RedisBloom 2.4's syntax, defaults, replies and error texts (docs/redis.md
// lists where they differ and why), and the native data type holding cuckoo_value.
#include "cuckoo_type.hpp"

#include <algorithm>
#include <array>
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
#include "dump_commands.hpp"
#include "filter_commands.hpp"
#include "filter_traits.hpp"
#include "native_type.hpp"
#include "redisbloom_commands.hpp"
#include "redisbloom_types.hpp"

namespace bloomery_redis {
namespace {

std::uint32_t new_fingerprint_bits = cf_default_fingerprint_bits;
std::uint32_t new_max_sub_filters = cf_max_sub_filters;

constexpr const char* err_small_capacity = "Capacity must be at least (BucketSize * 2)";
constexpr const char* err_unknown_argument = "Unknown argument received";

struct cf_traits {
  using value = cuckoo_value;
  static inline RedisModuleType* type = nullptr;
  static constexpr const char* label = "CF";
  static constexpr const char* loadchunk = "CF.LOADCHUNK";
  static constexpr const char* err_restoring = "ERR filter is being restored by CF.LOADCHUNK";
  static constexpr const char* err_create = "ERR Could not create filter";
  // Keys that came from RedisBloom keep its layout (redisbloom_commands.hpp).
  using redisbloom_value = rb_cuckoo;
  static RedisModuleType* redisbloom_type() { return rb_cuckoo_type(); }
  // CF.SCANDUMP and CF.LOADCHUNK check the iter first, as a position; CF.LOADCHUNK tells a bad
  // header from a bad chunk.
  static constexpr dump_replies replies = {
      .bad_scandump_iter = "Invalid position",
      .scandump_refuses_negative_iter = true,
      .scandump_iter_before_key = true,
      .scandump_end_is_nil = true,
      .bad_loadchunk_iter = "Invalid position",
      .loadchunk_refuses_iter_0 = true,
      .header_for_existing_key = err_item_exists,
      .bad_header = "Invalid header",
      .bad_chunk = "Couldn't load chunk!",
  };
};

using add_result = cuckoo_value::add_result;

// Stores a new filter of `shape` in the (empty, writable) key `name`, or replies the reason and
// returns null (store_new_value); a capacity past bloomery's 2^48 keys, which no machine has the
// memory for either, replies as memory that cannot be had.
cuckoo_value* create_filter(RedisModuleCtx* ctx, RedisModuleKey* key, RedisModuleString* name,
                            cuckoo_shape shape) {
  shape.fingerprint_bits = new_fingerprint_bits;
  shape.max_sub_filters = new_max_sub_filters;
  try {
    return store_new_value<cf_traits>(
        ctx, key, name, "a CF filter's creation",
        [&](memory_check check) { return std::make_unique<cuckoo_value>(shape, check); });
  } catch (const std::invalid_argument&) {
    RedisModule_ReplyWithError(ctx, err_no_memory);
    return nullptr;
  }
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
  long long rb_expansion = cf_default_expansion;
  if (expansion_at != nullptr) {
    // RedisBloom takes 0 (a filter that never grows) and says so in its range; bloomery's own
    // chains grow, from 1.
    const bool zero = redisbloom_layout();
    const std::optional<long long> v =
        option_value(ctx, expansion_at, "Couldn't parse EXPANSION",
                     zero ? "EXPANSION: value must be an integer between 0 and 32768, inclusive."
                          : "EXPANSION: value must be an integer between 1 and 32768, inclusive.",
                     zero ? 0 : 1, cf_max_expansion);
    if (!v) return redis_ok;
    rb_expansion = *v;
    // Rounded up to a power of two, as RedisBloom rounds it.
    shape.expansion = std::bit_ceil(static_cast<std::uint32_t>(*v));
  }
  if (*capacity < 2 * static_cast<long long>(shape.bucket_size)) {
    return RedisModule_ReplyWithError(ctx, err_small_capacity);
  }
  shape.capacity = static_cast<std::uint64_t>(*capacity);
  if (redisbloom_layout()) {
    const rb_cuckoo::parameters p{*capacity, shape.bucket_size, shape.max_iterations, rb_expansion};
    return reserve_key<cf_traits>(
        ctx, argv[1], [&](RedisModuleKey* key) { return rb_create_cuckoo(ctx, key, argv[1], p); });
  }

  return reserve_key<cf_traits>(
      ctx, argv[1], [&](RedisModuleKey* key) { return create_filter(ctx, key, argv[1], shape); });
}

// Adds items (only those not possibly present when `unique`), creating the key with `capacity`
// and the defaults when it is missing and `create` is set. An item that does not fit is an error
// reply for one item, and -1 in an array.
int add_items(RedisModuleCtx* ctx, RedisModuleString* name, std::span<RedisModuleString*> items,
              std::uint64_t capacity, bool create, bool unique, bool array) {
  key_handle key(ctx, name, open_read | open_write);
  if (rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    return rb_cf_add(ctx, *chain, name, items, unique, array);
  }
  if (redisbloom_layout() && create && RedisModule_KeyType(key.get()) == keytype_empty) {
    rb_cuckoo::parameters p;
    p.capacity = static_cast<long long>(capacity);
    rb_cuckoo* chain = rb_create_cuckoo(ctx, key.get(), name, p);
    return chain == nullptr ? redis_ok : rb_cf_add(ctx, *chain, name, items, unique, array, true);
  }
  bool changed = false;
  cuckoo_value* v = value_to_write<cf_traits>(ctx, key, create, changed, [&](RedisModuleKey* k) {
    cuckoo_shape shape;
    shape.capacity = capacity;
    return create_filter(ctx, k, name, shape);
  });
  if (v == nullptr) return redis_ok;
  if (array) RedisModule_ReplyWithArray(ctx, static_cast<long>(items.size()));
  const memory_check check = memory_check_for(ctx);
  for (RedisModuleString* item : items) {
    const add_result r = v->add(view_of(item), unique, check);
    if (r == add_result::no_memory && check == memory_check::none) {
      cannot_follow_master(ctx, "a CF filter's growth", name);
    }
    changed |= r == add_result::added;
    reply_cf_add(ctx, r == add_result::added, r == add_result::present, array,
                 r == add_result::full ? err_cf_max_expansions : err_cf_grow_memory);
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

// CF.COUNT key item: copies of the item's fingerprint in its buckets (0 for a missing key).
int cf_count(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  if (const rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    return RedisModule_ReplyWithLongLong(ctx,
                                         static_cast<long long>(chain->count(view_of(argv[2]))));
  }
  if (answers_as_missing<cf_traits>(key)) return RedisModule_ReplyWithLongLong(ctx, 0);
  bool replied = false;
  const cuckoo_value* v = value_or_none<cf_traits>(ctx, key, replied);
  if (replied) return redis_ok;
  return RedisModule_ReplyWithLongLong(
      ctx, v == nullptr ? 0 : clamp(v->filter().count(view_of(argv[2]))));
}

// CF.DEL key item: 1 when a copy of the item's fingerprint was removed, 0 when there is none.
int cf_del(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 3) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read | open_write);
  if (rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    return rb_cf_del(ctx, *chain, argv[2]);
  }
  bool wrong_type = false;
  cuckoo_value* v = key.value_of<cuckoo_value>(cf_traits::type, wrong_type);
  if (wrong_type) {
    return RedisModule_ReplyWithError(ctx, redisbloom_layout() ? "Not found" : err_wrong_type);
  }
  if (v == nullptr) return RedisModule_ReplyWithError(ctx, "Not found");
  if (!v->complete()) return RedisModule_ReplyWithError(ctx, cf_traits::err_restoring);
  if (!v->remove(view_of(argv[2]))) return RedisModule_ReplyWithLongLong(ctx, 0);
  RedisModule_ReplicateVerbatim(ctx);
  return RedisModule_ReplyWithLongLong(ctx, 1);
}

// CF.INFO's figures of a bloomery key, in CF.INFO's order (info_field names the places).
enum class info_field {
  size,
  buckets,
  filters,
  items,
  deletes,
  bucket_size,
  expansion,
  iterations
};
using info_figures = std::array<long long, 8>;
info_figures info_of(const cuckoo_value& v) {
  const bloomery::scalable_cuckoo_filter& f = v.filter();
  return {clamp(v.memory_usage()),
          // RedisBloom's count is the first sub-filter's (each later one has `expansion` times
          // more).
          clamp(f.sub_filter(0).buckets), clamp(f.sub_filter_count()),
          // RedisBloom's "inserted" drops on delete: the items the filter holds.
          clamp(f.approximate_count()), clamp(f.removed()), v.bucket_size(), f.expansion(),
          f.max_kicks()};
}

// CF.INFO key
int cf_info(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  struct field {
    const char* label;
    long long value;
  };
  field fields[] = {
      {"Size", 0},
      {"Number of buckets", 0},
      {"Number of filters", 0},
      {"Number of items inserted", 0},
      {"Number of items deleted", 0},
      {"Bucket size", 0},
      {"Expansion rate", 0},
      {"Max iterations", 0},
  };
  if (const rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    // RedisBloom's figures, replied as it replies its unsigned counts (signed 64-bit).
    const std::uint64_t values[] = {
        chain->info_size(),   chain->num_buckets(), chain->num_filters(), chain->num_items(),
        chain->num_deletes(), chain->bucket_size(), chain->expansion(),   chain->max_iterations()};
    for (std::size_t i = 0; i < std::size(fields); ++i) {
      fields[i].value = static_cast<long long>(values[i]);
    }
  } else {
    const cuckoo_value* v = readable_value<cf_traits>(ctx, key);
    if (v == nullptr) return redis_ok;
    const info_figures values = info_of(*v);
    for (std::size_t i = 0; i < std::size(fields); ++i) fields[i].value = values[i];
  }
  RedisModule_ReplyWithArray(ctx, static_cast<long>(2 * std::size(fields)));
  for (const auto& x : fields) {
    RedisModule_ReplyWithSimpleString(ctx, x.label);
    RedisModule_ReplyWithLongLong(ctx, x.value);
  }
  return redis_ok;
}

// CF.DEBUG key: RedisBloom's one line on a key of its layout; on bloomery's, the same line from
// the figures CF.INFO reports.
int cf_debug(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read);
  if (const rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    return rb_cf_debug(ctx, *chain);
  }
  const cuckoo_value* v = readable_value<cf_traits>(ctx, key);
  if (v == nullptr) return redis_ok;
  const info_figures x = info_of(*v);
  const auto figure = [&](info_field i) {
    return static_cast<std::uint64_t>(x[static_cast<std::size_t>(i)]);
  };
  return reply_text(ctx, rb_cuckoo::debug_line({.bucket_size = figure(info_field::bucket_size),
                                                .buckets = figure(info_field::buckets),
                                                .items = figure(info_field::items),
                                                .deletes = figure(info_field::deletes),
                                                .filters = figure(info_field::filters),
                                                .max_iterations = figure(info_field::iterations),
                                                .expansion = figure(info_field::expansion)}));
}

// CF.COMPACT key: RedisBloom's compaction on a key of its layout; on bloomery's, OK with nothing
// to do (its chain never moves a fingerprint between sub-filters: docs/redis.md).
int cf_compact(RedisModuleCtx* ctx, RedisModuleString** argv, int argc) {
  if (argc != 2) return RedisModule_WrongArity(ctx);
  key_handle key(ctx, argv[1], open_read | open_write);
  if (rb_cuckoo* chain = redisbloom_value<rb_cuckoo>(key, rb_cuckoo_type())) {
    chain->compact();
    RedisModule_ReplicateVerbatim(ctx);
    return RedisModule_ReplyWithSimpleString(ctx, "OK");
  }
  bool wrong_type = false;
  const cuckoo_value* v = key.value_of<cuckoo_value>(cf_traits::type, wrong_type);
  if (v == nullptr) return RedisModule_ReplyWithError(ctx, "Cuckoo filter was not found");
  if (!v->complete()) return RedisModule_ReplyWithError(ctx, cf_traits::err_restoring);
  return RedisModule_ReplyWithSimpleString(ctx, "OK");
}

}  // namespace

bool register_cuckoo(RedisModuleCtx* ctx, std::uint32_t fingerprint_bits,
                     std::uint32_t max_sub_filters) {
  new_fingerprint_bits = fingerprint_bits;
  new_max_sub_filters = max_sub_filters;
  // bloomery's own type for new keys (nine characters, unique among modules); RedisBloom's
  // "MBbloomCF" holds the keys that came from RedisBloom (redisbloom_types.hpp).
  cf_traits::type = dump_type_callbacks<cf_traits>::create(ctx, "bloomr-CF");
  if (cf_traits::type == nullptr) return false;
  const command_spec commands[] = {
      {"cf.reserve", guarded<cf_reserve>, "write deny-oom"},
      {"cf.add", guarded<cf_add<false>>, "write deny-oom"},
      {"cf.addnx", guarded<cf_add<true>>, "write deny-oom"},
      {"cf.insert", guarded<cf_insert<false>>, "write deny-oom"},
      {"cf.insertnx", guarded<cf_insert<true>>, "write deny-oom"},
      {"cf.exists", guarded<exists_command<cf_traits, false>>, "readonly fast"},
      {"cf.mexists", guarded<exists_command<cf_traits, true>>, "readonly fast"},
      {"cf.count", guarded<cf_count>, "readonly fast"},
      // A write that never needs memory, as RedisBloom flags it.
      {"cf.del", guarded<cf_del>, "write fast"},
      {"cf.info", guarded<cf_info>, "readonly fast"},
      {"cf.debug", guarded<cf_debug>, "readonly fast"},
      // A write (it moves fingerprints) that never needs memory; RedisBloom flags it readonly,
      // which would keep it from replicas and the AOF.
      {"cf.compact", guarded<cf_compact>, "write fast"},
      {"cf.scandump", guarded<scandump_command<cf_traits>>, "readonly"},
      {"cf.loadchunk", guarded<loadchunk_command<cf_traits>>, "write deny-oom"},
  };
  return create_commands(ctx, commands);
}

}  // namespace bloomery_redis
