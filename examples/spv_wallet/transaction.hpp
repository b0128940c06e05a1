// Bitcoin transactions, as far as BIP37 matching needs them: the inputs' outpoints and scriptSigs,
// the outputs' scripts, and the txid. Legacy and segwit serializations (BIP 144: marker 0x00,
// flag 0x01, a witness per input before the lock time); the witness is checked for form and
// skipped, since the txid and the BIP's matching ignore it. SHA-256 comes from OpenSSL's libcrypto.
#pragma once

#include <openssl/evp.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace spv {

using bytes_view = std::span<const std::uint8_t>;

struct tx_input {
  bytes_view outpoint;  // 36 bytes: the spent transaction's txid (as hashed) and output index LE
  bytes_view script_sig;
};

struct tx_output {
  std::uint64_t value = 0;  // satoshis
  bytes_view script;        // scriptPubKey
};

// The views point into the bytes the transaction was parsed from.
struct transaction {
  std::array<std::uint8_t, 32> txid{};  // double SHA-256 in hash order; shown byte-reversed
  bool segwit = false;
  std::vector<tx_input> inputs;
  std::vector<tx_output> outputs;
};

inline std::string to_hex(bytes_view bytes, bool reversed = false) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const std::uint8_t b = bytes[reversed ? bytes.size() - 1 - i : i];
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

// The bytes of a hex string (either case); std::invalid_argument if it is not hex of whole bytes.
inline std::vector<std::uint8_t> from_hex(const std::string& s) {
  if (s.size() % 2 != 0) {
    throw std::invalid_argument("odd number of hex digits (" + std::to_string(s.size()) + ")");
  }
  const auto digit = [&](std::size_t i) {
    const char c = s[i];
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f') return (c | 0x20) - 'a' + 10;
    throw std::invalid_argument("character " + std::to_string(i + 1) + " is not a hex digit");
  };
  std::vector<std::uint8_t> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = static_cast<std::uint8_t>(digit(2 * i) << 4 | digit(2 * i + 1));
  }
  return out;
}

// "1 byte", "2 bytes".
inline std::string count_of(std::uint64_t n, const char* noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

// SHA-256 of SHA-256 of the concatenated parts.
inline std::array<std::uint8_t, 32> double_sha256(std::initializer_list<bytes_view> parts) {
  std::array<std::uint8_t, 32> first{}, second{};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  bool ok = ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1;
  for (const bytes_view p : parts) ok = ok && EVP_DigestUpdate(ctx, p.data(), p.size()) == 1;
  ok = ok && EVP_DigestFinal_ex(ctx, first.data(), nullptr) == 1;
  EVP_MD_CTX_free(ctx);
  if (!ok ||
      EVP_Digest(first.data(), first.size(), second.data(), nullptr, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("OpenSSL's SHA-256 failed");
  }
  return second;
}

// Reads the serialization front to back; running past its end names what was being read.
class reader {
 public:
  explicit reader(bytes_view b) : b_(b) {}
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return b_.size() - pos_; }
  std::uint8_t peek(const char* what) const { return take_at(pos_, 1, what)[0]; }
  bytes_view take(std::uint64_t n, const char* what) {
    const bytes_view v = take_at(pos_, n, what);
    pos_ += v.size();
    return v;
  }
  std::uint64_t little_endian(std::size_t width, const char* what) {
    std::uint64_t v = 0;
    const bytes_view b = take(width, what);
    for (std::size_t i = width; i > 0; --i) v = v << 8 | b[i - 1];
    return v;
  }
  // A compact size; canonical (shortest) form only, as Bitcoin Core requires.
  std::uint64_t compact_size(const char* what) {
    const std::uint8_t first = take(1, what)[0];
    if (first < 0xfd) return first;
    const std::size_t width = first == 0xfd ? 2 : first == 0xfe ? 4 : 8;
    const std::uint64_t v = little_endian(width, what);
    if (v < (width == 2 ? 0xfdu : width == 4 ? 0x10000u : 0x100000000u)) {
      throw std::runtime_error(std::string("non-canonical compact size for the ") + what);
    }
    return v;
  }
  // A count of items of at least `min_bytes` each: more than the bytes left can hold is an error
  // before anything is allocated for them.
  std::uint64_t count(const char* what, std::size_t min_bytes) {
    const std::uint64_t n = compact_size(what);
    if (n > left() / min_bytes) {
      throw std::runtime_error(std::string("the ") + what + " says " + std::to_string(n) +
                               ", more than the " + std::to_string(left()) + " bytes left hold");
    }
    return n;
  }

 private:
  bytes_view take_at(std::size_t at, std::uint64_t n, const char* what) const {
    if (n > b_.size() - at) {
      throw std::runtime_error(std::string("truncated: the ") + what + " at byte " +
                               std::to_string(at) + " needs " + count_of(n, "byte") + ", " +
                               std::to_string(b_.size() - at) + " left");
    }
    return b_.subspan(at, static_cast<std::size_t>(n));
  }
  bytes_view b_;
  std::size_t pos_ = 0;
};

// Parses one serialized transaction; std::runtime_error says what is malformed and where.
inline transaction parse_transaction(bytes_view bytes) {
  reader r(bytes);
  transaction tx;
  const bytes_view version = r.take(4, "version");
  if (r.peek("input count") == 0) {  // the segwit marker (a legacy transaction has inputs)
    r.take(1, "segwit marker");
    const std::uint8_t flag = r.take(1, "segwit flag")[0];
    if (flag != 1) {
      throw std::runtime_error("segwit marker 0x00 followed by flag " + std::to_string(flag) +
                               "; only flag 1 is defined");
    }
    tx.segwit = true;
  }
  const std::size_t body = r.pos();
  const std::uint64_t inputs = r.count("input count", 41);
  for (std::uint64_t i = 0; i < inputs; ++i) {
    const bytes_view outpoint = r.take(36, "outpoint");
    tx.inputs.push_back({outpoint, r.take(r.compact_size("scriptSig length"), "scriptSig")});
    r.take(4, "sequence");
  }
  const std::uint64_t outputs = r.count("output count", 9);
  for (std::uint64_t i = 0; i < outputs; ++i) {
    const std::uint64_t value = r.little_endian(8, "output value");
    tx.outputs.push_back({value, r.take(r.compact_size("scriptPubKey length"), "scriptPubKey")});
  }
  const bytes_view without_witness = bytes.subspan(body, r.pos() - body);
  if (tx.segwit) {
    bool any = false;
    for (std::uint64_t i = 0; i < inputs; ++i) {
      const std::uint64_t items = r.count("witness item count", 1);
      for (std::uint64_t j = 0; j < items; ++j) r.take(r.compact_size("witness item"), "witness");
      any = any || items != 0;
    }
    if (!any) throw std::runtime_error("segwit serialization without any witness data");
  }
  const bytes_view lock_time = r.take(4, "lock time");
  if (r.left() != 0) {
    throw std::runtime_error(count_of(r.left(), "byte") + " after the transaction's end");
  }
  tx.txid = double_sha256({version, without_witness, lock_time});
  return tx;
}

}  // namespace spv
