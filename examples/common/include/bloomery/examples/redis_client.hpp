// A small synchronous Redis client over hiredis (Debian: libhiredis-dev) for the examples whose
// real setting has a server: a shared visited-set (BF.ADD), an authoritative list (SISMEMBER).
// Available when the target bloomery_example_redis exists (hiredis found).
#pragma once

#include <hiredis/hiredis.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace bloomery::examples {

// A reply, copied out of hiredis's so it outlives the next command.
struct redis_reply {
  enum class type { string, integer, array, nil, status } kind = type::nil;
  long long integer = 0;
  std::string str;  // a bulk string or a status
  std::vector<redis_reply> elements;
};

class redis_client {
 public:
  // "HOST:PORT"; a missing or bad port, or a failed connection, throws with the address in the
  // message.
  explicit redis_client(std::string_view address, double timeout_seconds = 5.0) {
    const auto colon = address.rfind(':');
    const std::string host(address.substr(0, colon == std::string_view::npos ? 0 : colon));
    int port = 0;
    if (colon != std::string_view::npos) {
      try {
        std::size_t used = 0;
        const std::string p(address.substr(colon + 1));
        port = std::stoi(p, &used);
        if (used != p.size()) port = 0;
      } catch (const std::exception&) {
        port = 0;
      }
    }
    if (host.empty() || port <= 0 || port > 65535) {
      throw std::invalid_argument("redis address '" + std::string(address) +
                                  "' is invalid; expected HOST:PORT with a port in 1..65535");
    }
    const timeval tv{
        static_cast<time_t>(timeout_seconds),
        static_cast<suseconds_t>((timeout_seconds - static_cast<long>(timeout_seconds)) * 1e6)};
    ctx_.reset(redisConnectWithTimeout(host.c_str(), port, tv));
    if (!ctx_ || ctx_->err) {
      throw std::runtime_error("cannot connect to redis at " + std::string(address) + ": " +
                               (ctx_ ? ctx_->errstr : "out of memory"));
    }
    if (redisSetTimeout(ctx_.get(), tv) != REDIS_OK) fail("setting the timeout");
    address_ = address;
  }

  // One command; an error reply throws with the server's text.
  redis_reply command(const std::vector<std::string_view>& args) {
    append(args);
    return read();
  }

  // Several commands in one round trip; their replies in order (error replies throw).
  std::vector<redis_reply> pipeline(const std::vector<std::vector<std::string_view>>& commands) {
    for (const auto& c : commands) append(c);
    std::vector<redis_reply> replies;
    replies.reserve(commands.size());
    for (std::size_t i = 0; i < commands.size(); ++i) replies.push_back(read());
    return replies;
  }

 private:
  struct context_free {
    void operator()(redisContext* c) const { redisFree(c); }
  };
  struct reply_free {
    void operator()(redisReply* r) const { freeReplyObject(r); }
  };

  [[noreturn]] void fail(const char* what) const {
    throw std::runtime_error("redis at " + address_ + ": " + what + ": " + ctx_->errstr);
  }

  void append(const std::vector<std::string_view>& args) {
    std::vector<const char*> argv;
    std::vector<std::size_t> lens;
    for (const auto a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    if (redisAppendCommandArgv(ctx_.get(), static_cast<int>(argv.size()), argv.data(),
                               lens.data()) != REDIS_OK) {
      fail("sending a command");
    }
  }

  redis_reply read() {
    void* raw = nullptr;
    if (redisGetReply(ctx_.get(), &raw) != REDIS_OK || raw == nullptr) fail("reading a reply");
    const std::unique_ptr<redisReply, reply_free> r(static_cast<redisReply*>(raw));
    return convert(*r);
  }

  redis_reply convert(const redisReply& r) const {
    redis_reply out;
    switch (r.type) {
      case REDIS_REPLY_ERROR:
        throw std::runtime_error("redis at " + address_ + " replied: " + std::string(r.str, r.len));
      case REDIS_REPLY_INTEGER:
        out.kind = redis_reply::type::integer;
        out.integer = r.integer;
        break;
      case REDIS_REPLY_STRING:
      case REDIS_REPLY_STATUS:
        out.kind =
            r.type == REDIS_REPLY_STRING ? redis_reply::type::string : redis_reply::type::status;
        out.str.assign(r.str, r.len);
        break;
      case REDIS_REPLY_ARRAY:
        out.kind = redis_reply::type::array;
        for (std::size_t i = 0; i < r.elements; ++i) out.elements.push_back(convert(*r.element[i]));
        break;
      default:
        out.kind = redis_reply::type::nil;
    }
    return out;
  }

  std::unique_ptr<redisContext, context_free> ctx_;
  std::string address_;
};

}  // namespace bloomery::examples
