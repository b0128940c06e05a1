// The module against bloomery's library in-process: the same random sequence of BF.* (or CF.*)
// commands goes to a real redis-server (through hiredis) and to a model built from the public
// library, and every reply must be the same; every item ever added must answer 1 (no false
// negative), also after the server reloads its RDB (DEBUG RELOAD) and after a SCANDUMP/LOADCHUNK
// copy.
//
// The model states RedisBloom's rules with the library's own filter: a scaling filter is a
// scalable_bloom_filter with bound p = error rate, tightening 1/2 and growth = expansion (its
// sub-filter i gets p (1 - r) r^i = error / 2^(i+1), RedisBloom's chain); a NONSCALING one is a
// single sub-filter at the error rate itself (p = 2 error, r = 1/2) that refuses item capacity + 1.
// A CF key is a scalable_cuckoo_filter with RedisBloom's CF parameters (8-bit fingerprints,
// MAXITERATIONS as max kicks, EXPANSION, 32 sub-filters); CF.DEL only ever deletes items added more
// often than deleted (deleting a never-added item may take another item's copy, by design).
#include <hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bloomery/scalable_bloom_filter.hpp>
#include <bloomery/scalable_cuckoo_filter.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <variant>
#include <vector>

namespace {

namespace fs = std::filesystem;

// A reply reduced to what the comparison needs: an integer, a string, an error text, nil, or an
// array of those.
struct reply {
  enum kind { integer, string, error, nil, array } type = nil;
  long long number = 0;
  std::string text;
  std::vector<reply> elements;
  friend bool operator==(const reply&, const reply&) = default;
};

std::string describe(const reply& r) {
  switch (r.type) {
    case reply::integer:
      return std::to_string(r.number);
    case reply::string:
      return '"' + r.text + '"';
    case reply::error:
      return "(error) " + r.text;
    case reply::nil:
      return "(nil)";
    case reply::array: {
      std::string s = "[";
      for (const reply& e : r.elements) s += (s.size() > 1 ? ", " : "") + describe(e);
      return s + "]";
    }
  }
  return "?";
}

void PrintTo(const reply& r, std::ostream* os) {
  *os << describe(r);
}

reply from_hiredis(const redisReply* r) {
  reply out;
  switch (r->type) {
    case REDIS_REPLY_INTEGER:
      out.type = reply::integer;
      out.number = r->integer;
      break;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
      out.type = reply::string;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ERROR:
      out.type = reply::error;
      out.text.assign(r->str, r->len);
      break;
    case REDIS_REPLY_ARRAY:
      out.type = reply::array;
      for (size_t i = 0; i < r->elements; ++i) out.elements.push_back(from_hiredis(r->element[i]));
      break;
    default:
      out.type = reply::nil;
  }
  return out;
}

reply integer(long long v) {
  reply r;
  r.type = reply::integer;
  r.number = v;
  return r;
}
reply error(std::string text) {
  reply r;
  r.type = reply::error;
  r.text = std::move(text);
  return r;
}
reply ok() {
  reply r;
  r.type = reply::string;
  r.text = "OK";
  return r;
}
reply array(std::vector<reply> elements) {
  reply r;
  r.type = reply::array;
  r.elements = std::move(elements);
  return r;
}

// A redis-server with the module, on a free loopback port, killed when this object goes (and,
// through PR_SET_PDEATHSIG, when the test process dies).
class server {
 public:
  server() : dir_(fs::temp_directory_path() / ("bloomery-redis-diff-" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
    port_ = free_port();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      const std::string port = std::to_string(port_), dir = dir_.string();
      const char* module = std::getenv("BLOOMERY_REDIS_MODULE");
      const char* exe = std::getenv("BLOOMERY_REDIS_SERVER");
      if (exe == nullptr) exe = "redis-server";
      const std::string log = (dir_ / "redis.log").string();
      execlp(exe, exe, "--port", port.c_str(), "--bind", "127.0.0.1", "--dir", dir.c_str(),
             "--loadmodule", module, "--save", "", "--appendonly", "no", "--logfile", log.c_str(),
             "--protected-mode", "no", "--enable-debug-command", "yes",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      ctx_ = redisConnect("127.0.0.1", port_);
      if (ctx_ != nullptr && ctx_->err == 0) return;
      if (ctx_ != nullptr) redisFree(ctx_);
      ctx_ = nullptr;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~server() {
    if (ctx_ != nullptr) redisFree(ctx_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  server(const server&) = delete;
  server& operator=(const server&) = delete;

  bool connected() const { return ctx_ != nullptr; }

  reply run(const std::vector<std::string>& args) {
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(ctx_, static_cast<int>(argv.size()), argv.data(), lens.data()));
    if (r == nullptr) return error("connection lost");
    reply out = from_hiredis(r);
    freeReplyObject(r);
    return out;
  }

 private:
  static int free_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    close(fd);
    return ntohs(a.sin_port);
  }

  fs::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
  redisContext* ctx_ = nullptr;
};

// Copies `key` into `copy` by `kind`'s SCANDUMP and LOADCHUNK ("BF", "CF"), as a client would;
// `compare(command, expected)` checks that every chunk loads.
template <class Compare>
void copy_by_scandump(server& srv, const std::string& kind, const std::string& key,
                      const std::string& copy, Compare&& compare) {
  srv.run({"DEL", copy});
  std::vector<std::pair<std::string, std::string>> chunks;
  for (long long cursor = 0;;) {
    const reply r = srv.run({kind + ".SCANDUMP", key, std::to_string(cursor)});
    ASSERT_EQ(r.type, reply::array) << describe(r);
    ASSERT_EQ(r.elements.size(), 2u);
    cursor = r.elements[0].number;
    if (cursor == 0) break;
    chunks.emplace_back(std::to_string(cursor), r.elements[1].text);
  }
  for (const auto& [cursor, data] : chunks)
    compare({kind + ".LOADCHUNK", copy, cursor, data}, ok());
}

// RedisBloom's BF.* rules over the library's scalable filter.
class bf_model {
 public:
  struct entry {
    bloomery::scalable_bloom_filter filter;
    bool nonscaling;
    std::uint64_t capacity;
  };

  static entry make(double error, std::uint64_t capacity, std::uint64_t expansion,
                    bool nonscaling) {
    const double bound = nonscaling ? 2 * error : error;
    return {bloomery::scalable_bloom_filter(
                {.capacity = capacity, .fpr = bound},
                {.growth = static_cast<double>(expansion), .tightening = 0.5}),
            nonscaling, capacity};
  }

  // One item into `e`: 1 new, 0 maybe present, or the non-scaling filter's error.
  static reply add(entry& e, const std::string& item) {
    if (e.filter.may_contain(item)) return integer(0);
    if (e.nonscaling && e.filter.inserted() >= e.capacity) {
      return error("ERR non scaling filter is full");
    }
    return integer(e.filter.check_and_insert(item) ? 1 : 0);
  }

  std::map<std::string, entry> keys;
};

std::string format_rate(double e) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", e);
  return b;
}

// Runs `steps` random commands on both sides; returns the number of replies compared.
void run_sequence(unsigned seed, int steps) {
  server srv;
  ASSERT_TRUE(srv.connected()) << "redis-server did not start";
  bf_model model;
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  std::map<std::string, std::set<std::string>> added;  // every item a "1" or "0" reply covers
  auto item = [&] { return "item" + std::to_string(pick(400)); };

  auto compare = [&](const std::vector<std::string>& cmd, const reply& expected) {
    const reply got = srv.run(cmd);
    std::string line;
    for (const std::string& a : cmd) line += a + ' ';
    ASSERT_EQ(got, expected) << "seed " << seed << ": " << line << "\n  module: " << describe(got)
                             << "\n  model:  " << describe(expected);
  };

  for (int step = 0; step < steps; ++step) {
    const std::string key = names[pick(names.size())];
    auto it = model.keys.find(key);
    const unsigned what = static_cast<unsigned>(pick(100));
    if (what < 8) {  // BF.RESERVE
      const double e = std::vector<double>{0.01, 0.001, 0.1, 0.25}[pick(4)];
      const std::uint64_t cap = 1 + pick(pick(2) ? 50 : 2000);
      const std::uint64_t exp = std::vector<std::uint64_t>{1, 2, 4}[pick(3)];
      const bool nonscaling = pick(3) == 0;
      std::vector<std::string> cmd = {"BF.RESERVE", key, format_rate(e), std::to_string(cap)};
      if (nonscaling) {
        cmd.push_back("NONSCALING");
      } else if (pick(2)) {
        cmd.insert(cmd.end(), {"EXPANSION", std::to_string(exp)});
      }
      reply expected = ok();
      if (it != model.keys.end()) {
        expected = error("ERR item exists");
      } else {
        model.keys.emplace(
            key, bf_model::make(e, cap, cmd.size() > 4 && !nonscaling ? exp : 2, nonscaling));
      }
      compare(cmd, expected);
    } else if (what < 40) {  // BF.ADD (creates the key with the defaults)
      const std::string x = item();
      if (it == model.keys.end())
        it = model.keys.emplace(key, bf_model::make(0.01, 100, 2, false)).first;
      const reply expected = bf_model::add(it->second, x);
      if (expected.type == reply::integer) added[key].insert(x);
      compare({"BF.ADD", key, x}, expected);
    } else if (what < 55) {  // BF.MADD
      if (it == model.keys.end())
        it = model.keys.emplace(key, bf_model::make(0.01, 100, 2, false)).first;
      std::vector<std::string> cmd = {"BF.MADD", key};
      std::vector<reply> expected;
      const std::uint64_t count = 1 + pick(8);
      for (std::uint64_t j = 0; j < count; ++j) cmd.push_back(item());
      for (std::uint64_t j = 2; j < cmd.size(); ++j) {
        reply r = bf_model::add(it->second, cmd[j]);
        const bool stop = r.type == reply::error;
        if (!stop) added[key].insert(cmd[j]);
        expected.push_back(std::move(r));
        if (stop) break;
      }
      compare(cmd, array(std::move(expected)));
    } else if (what < 75) {  // BF.EXISTS / BF.MEXISTS
      std::vector<std::string> cmd = {"BF.MEXISTS", key};
      const std::uint64_t count = 1 + pick(8);
      std::vector<reply> expected;
      for (std::uint64_t j = 0; j < count; ++j) {
        cmd.push_back(item());
        expected.push_back(
            integer(it != model.keys.end() && it->second.filter.may_contain(cmd.back())));
      }
      if (count == 1) {
        compare({"BF.EXISTS", key, cmd[2]}, expected[0]);
      } else {
        compare(cmd, array(std::move(expected)));
      }
    } else if (what < 85) {  // BF.INSERT [NOCREATE] ITEMS ...
      const bool nocreate = pick(3) == 0;
      std::vector<std::string> cmd = {"BF.INSERT", key};
      if (nocreate) cmd.push_back("NOCREATE");
      cmd.push_back("ITEMS");
      const std::uint64_t count = 1 + pick(5);
      for (std::uint64_t j = 0; j < count; ++j) cmd.push_back(item());
      if (it == model.keys.end() && nocreate) {
        compare(cmd, error("ERR not found"));
        continue;
      }
      if (it == model.keys.end())
        it = model.keys.emplace(key, bf_model::make(0.01, 100, 2, false)).first;
      std::vector<reply> expected;
      for (std::uint64_t j = cmd.size() - count; j < cmd.size(); ++j) {
        reply r = bf_model::add(it->second, cmd[j]);
        const bool stop = r.type == reply::error;
        if (!stop) added[key].insert(cmd[j]);
        expected.push_back(std::move(r));
        if (stop) break;
      }
      compare(cmd, array(std::move(expected)));
    } else if (what < 92) {  // BF.CARD and BF.INFO's fields the model knows
      if (it == model.keys.end()) {
        compare({"BF.CARD", key}, integer(0));
        continue;
      }
      const auto& f = it->second.filter;
      compare({"BF.CARD", key}, integer(static_cast<long long>(f.inserted())));
      compare({"BF.INFO", key, "ITEMS"}, array({integer(static_cast<long long>(f.inserted()))}));
      compare({"BF.INFO", key, "FILTERS"},
              array({integer(static_cast<long long>(f.sub_filter_count()))}));
    } else if (what < 96) {  // the server saves and reloads its RDB
      compare({"DEBUG", "RELOAD"}, ok());
    } else {  // SCANDUMP the key into "copy", then the copy must answer exactly as the key
      if (it == model.keys.end()) continue;
      ASSERT_NO_FATAL_FAILURE(copy_by_scandump(srv, "BF", key, "copy", compare));
      for (const std::string& x : added[key]) compare({"BF.EXISTS", "copy", x}, integer(1));
      for (int j = 0; j < 50; ++j) {
        const std::string x = "absent" + std::to_string(pick(100000));
        compare({"BF.EXISTS", "copy", x}, integer(it->second.filter.may_contain(x)));
      }
    }
  }
  // No false negative, ever: every item any reply covered still answers 1.
  for (const auto& [key, items] : added) {
    for (const std::string& x : items) compare({"BF.EXISTS", key, x}, integer(1));
  }
}

// RedisBloom's CF.* rules over the library's scalable cuckoo filter.
bloomery::scalable_cuckoo_filter make_cf(std::uint64_t capacity, std::uint32_t max_iterations,
                                         std::uint32_t expansion) {
  return bloomery::scalable_cuckoo_filter({.initial_capacity = capacity,
                                           .fingerprint_bits = 8,
                                           .max_kicks = max_iterations,
                                           .expansion = expansion,
                                           .max_sub_filters = 32,
                                           .semi_sorted = true});
}

// CF.ADD (nx = false) or CF.ADDNX of one item: 1, 0 (NX and maybe present), or the chain's end.
reply cf_add(bloomery::scalable_cuckoo_filter& f, const std::string& item, bool nx) {
  if (nx && f.may_contain(item)) return integer(0);
  return f.insert(item) ? integer(1) : error("Maximum expansions reached");
}

void run_cf_sequence(unsigned seed, int steps) {
  server srv;
  ASSERT_TRUE(srv.connected()) << "redis-server did not start";
  std::map<std::string, bloomery::scalable_cuckoo_filter> model;
  std::map<std::string, std::map<std::string, long long>> copies;  // added minus deleted
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t n) { return static_cast<std::uint64_t>(rng() % n); };
  const std::vector<std::string> names = {"cf:a", "cf:b", "cf:c"};
  auto item = [&] { return "item" + std::to_string(pick(300)); };
  auto compare = [&](const std::vector<std::string>& cmd, const reply& expected) {
    const reply got = srv.run(cmd);
    std::string line;
    for (const std::string& a : cmd) line += a + ' ';
    ASSERT_EQ(got, expected) << "seed " << seed << ": " << line << "\n  module: " << describe(got)
                             << "\n  model:  " << describe(expected);
  };
  auto created = [&](const std::string& key) -> bloomery::scalable_cuckoo_filter& {
    auto it = model.find(key);
    if (it == model.end()) it = model.emplace(key, make_cf(1024, 20, 1)).first;
    return it->second;
  };
  auto note_add = [&](const std::string& key, const std::string& x, const reply& r) {
    if (r.type == reply::integer && r.number == 1) ++copies[key][x];
  };

  for (int step = 0; step < steps; ++step) {
    const std::string key = names[pick(names.size())];
    const bool exists = model.count(key) != 0;
    const unsigned what = static_cast<unsigned>(pick(100));
    if (what < 8) {  // CF.RESERVE key capacity [MAXITERATIONS m] [EXPANSION e]
      const std::uint64_t cap = 8 + pick(pick(2) ? 40 : 3000);
      const std::uint32_t iters = pick(2) ? 20 : static_cast<std::uint32_t>(1 + pick(50));
      const std::uint32_t exp = std::vector<std::uint32_t>{1, 2, 4}[pick(3)];
      std::vector<std::string> cmd = {"CF.RESERVE", key, std::to_string(cap)};
      if (iters != 20) cmd.insert(cmd.end(), {"MAXITERATIONS", std::to_string(iters)});
      if (exp != 1) cmd.insert(cmd.end(), {"EXPANSION", std::to_string(exp)});
      if (exists) {
        compare(cmd, error("ERR item exists"));
      } else {
        model.emplace(key, make_cf(cap, iters, exp));
        compare(cmd, ok());
      }
    } else if (what < 35) {  // CF.ADD / CF.ADDNX
      const bool nx = pick(3) == 0;
      const std::string x = item();
      const reply expected = cf_add(created(key), x, nx);
      note_add(key, x, expected);
      compare({nx ? "CF.ADDNX" : "CF.ADD", key, x}, expected);
    } else if (what < 45) {  // CF.INSERT / CF.INSERTNX key [NOCREATE] ITEMS ...
      const bool nx = pick(2) == 0, nocreate = pick(4) == 0;
      std::vector<std::string> cmd = {nx ? "CF.INSERTNX" : "CF.INSERT", key};
      if (nocreate) cmd.push_back("NOCREATE");
      cmd.push_back("ITEMS");
      const std::uint64_t count = 1 + pick(6);
      for (std::uint64_t j = 0; j < count; ++j) cmd.push_back(item());
      if (!exists && nocreate) {
        compare(cmd, error("ERR not found"));
        continue;
      }
      auto& f = created(key);
      std::vector<reply> expected;
      for (std::uint64_t j = cmd.size() - count; j < cmd.size(); ++j) {
        reply r = cf_add(f, cmd[j], nx);
        if (r.type == reply::error) r = integer(-1);  // a full chain: -1 in the array
        note_add(key, cmd[j], r);
        expected.push_back(std::move(r));
      }
      compare(cmd, array(std::move(expected)));
    } else if (what < 65) {  // CF.EXISTS / CF.MEXISTS / CF.COUNT
      const std::string x = item();
      auto it = model.find(key);
      const bool maybe = it != model.end() && it->second.may_contain(x);
      if (pick(3) == 0) {
        compare({"CF.COUNT", key, x},
                integer(it == model.end() ? 0 : static_cast<long long>(it->second.count(x))));
      } else if (pick(2) == 0) {
        compare({"CF.EXISTS", key, x}, integer(maybe));
      } else {
        const std::string y = item();
        const bool maybe_y = it != model.end() && it->second.may_contain(y);
        compare({"CF.MEXISTS", key, x, y}, array({integer(maybe), integer(maybe_y)}));
      }
    } else if (what < 85) {  // CF.DEL of an item added more often than deleted
      if (!exists) {
        compare({"CF.DEL", key, item()}, error("Not found"));
        continue;
      }
      std::vector<std::string> live;
      for (const auto& [x, n] : copies[key]) {
        if (n > 0) live.push_back(x);
      }
      if (live.empty()) continue;
      const std::string x = live[pick(live.size())];
      const bool removed = static_cast<bool>(model.at(key).remove(x));
      if (removed) --copies[key][x];
      compare({"CF.DEL", key, x}, integer(removed));
    } else if (what < 92) {  // the counts CF.INFO reports
      if (!exists) continue;
      const reply info = srv.run({"CF.INFO", key});
      ASSERT_EQ(info.type, reply::array) << describe(info);
      const auto& f = model.at(key);
      std::map<std::string, reply> fields;
      for (std::size_t j = 0; j + 1 < info.elements.size(); j += 2) {
        fields[info.elements[j].text] = info.elements[j + 1];
      }
      EXPECT_EQ(fields["Number of filters"], integer(static_cast<long long>(f.sub_filter_count())));
      EXPECT_EQ(fields["Number of items inserted"],
                integer(static_cast<long long>(f.approximate_count())));
      EXPECT_EQ(fields["Number of items deleted"], integer(static_cast<long long>(f.removed())));
    } else if (what < 96) {
      compare({"DEBUG", "RELOAD"}, ok());
    } else {  // CF.SCANDUMP into "cf:copy": the copy answers as the key
      if (!exists) continue;
      ASSERT_NO_FATAL_FAILURE(copy_by_scandump(srv, "CF", key, "cf:copy", compare));
      for (int j = 0; j < 40; ++j) {
        const std::string x = pick(2) ? item() : "absent" + std::to_string(pick(100000));
        compare({"CF.COUNT", "cf:copy", x},
                integer(static_cast<long long>(model.at(key).count(x))));
      }
    }
  }
  // No false negative: every item added more often than deleted still answers 1.
  for (const auto& [key, items] : copies) {
    for (const auto& [x, n] : items) {
      if (n > 0) compare({"CF.EXISTS", key, x}, integer(1));
    }
  }
}

TEST(RedisDifferential, BloomCommandsMatchTheLibrary) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    run_sequence(seed, 1500);
    if (HasFatalFailure()) return;
  }
}

TEST(RedisDifferential, CuckooCommandsMatchTheLibrary) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    run_cf_sequence(seed, 1500);
    if (HasFatalFailure()) return;
  }
}

}  // namespace
