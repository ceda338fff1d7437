#include "core/crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <iterator>
#include <random>

#include "core/status.h"

namespace boxoffice {

std::string HmacSha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  const unsigned char* ok =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len);
  BOX_ASSERT(ok != nullptr && len == 32);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

namespace {
constexpr char kB64Url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int B64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '-') return 62;
  if (c == '_') return 63;
  return -1;
}
}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += kB64Url[v >> 18];
    out += kB64Url[(v >> 12) & 63];
    out += kB64Url[(v >> 6) & 63];
    out += kB64Url[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const uint32_t v = uint8_t(bytes[i]) << 16;
    out += kB64Url[v >> 18];
    out += kB64Url[(v >> 12) & 63];
  } else if (i + 2 == bytes.size()) {
    const uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += kB64Url[v >> 18];
    out += kB64Url[(v >> 12) & 63];
    out += kB64Url[(v >> 6) & 63];
  }
  BOX_ASSERT(out.size() == (bytes.size() * 4 + 2) / 3);  // unpadded: ceil(4n / 3)
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    const int v = B64Value(c);
    if (v < 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  // Leftover bits must be zero, so every byte string has exactly one encoding.
  if ((acc & ((1u << bits) - 1)) != 0) return std::nullopt;
  return out;
}

namespace {

std::string FormatUuid(unsigned char* b) {  // 16 bytes
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const std::string hex = HexEncode(std::string_view(reinterpret_cast<char*>(b), 16));
  std::string uuid = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
                     hex.substr(16, 4) + "-" + hex.substr(20);
  BOX_ASSERT(IsUuid(uuid));  // the one spelling IsUuid accepts: ids go through it
  return uuid;
}

}  // namespace

std::string NewUuid() {
  unsigned char b[16];
  BOX_ASSERT(RAND_bytes(b, sizeof b) == 1);
  return FormatUuid(b);
}

std::string NewFastUuid() {
  thread_local std::mt19937_64 rng = [] {
    std::seed_seq::result_type seed[8];
    BOX_ASSERT(RAND_bytes(reinterpret_cast<unsigned char*>(seed), sizeof seed) == 1);
    std::seed_seq seq(std::begin(seed), std::end(seed));
    return std::mt19937_64(seq);
  }();
  unsigned char b[16];
  const uint64_t hi = rng(), lo = rng();
  std::memcpy(b, &hi, 8);
  std::memcpy(b + 8, &lo, 8);
  return FormatUuid(b);
}

bool IsUuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  return true;
}

}  // namespace boxoffice
