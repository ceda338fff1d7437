#include "core/text.h"

#include <strings.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/status.h"

namespace boxoffice {
namespace {

// The length of the well-formed UTF-8 character (never NUL) that text starts with, or 0.
size_t CharLength(std::string_view text) {
  BOX_ASSERT(!text.empty());  // its callers loop while text is not empty
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char c = p[0];
  if (c == 0) return 0;
  if (c < 0x80) return 1;
  size_t n = 0;
  unsigned min = 0;
  unsigned cp = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 1, min = 0x80, cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 2, min = 0x800, cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 3, min = 0x10000, cp = c & 0x07;
  } else {
    return 0;  // a continuation byte first, C0/C1 (overlong), or F5..FF
  }
  if (text.size() <= n) return 0;
  for (size_t i = 1; i <= n; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (p[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n + 1;
}

}  // namespace

bool IsCleanText(std::string_view text) {
  while (!text.empty()) {
    const size_t n = CharLength(text);
    if (n == 0) return false;
    text.remove_prefix(n);
  }
  return true;
}

std::string CleanTextPrefix(std::string_view text, size_t max_bytes) {
  std::string out;
  while (!text.empty()) {
    const size_t n = CharLength(text);
    if (out.size() + std::max<size_t>(n, 1) > max_bytes) break;
    if (n == 0) {
      out += '?';
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
    }
  }
  BOX_ASSERT(out.size() <= max_bytes);  // the bound a stored refusal's text relies on
  return out;
}

void AppendJsonString(std::string* out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  bool ascii = true;
  for (unsigned char c : text) ascii = ascii && c < 0x80;
  if (!ascii && !IsCleanText(text)) {
    // Rare (our messages are ASCII): the library's replacement of invalid sequences.
    out->append(nlohmann::json(std::string(text))
                    .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    return;
  }
  out->push_back('"');
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(static_cast<char>(c));
    } else if (c < 0x20) {
      out->append("\\u00");
      out->push_back(kHex[c >> 4]);
      out->push_back(kHex[c & 15]);
    } else {
      out->push_back(static_cast<char>(c));
    }
  }
  out->push_back('"');
}

bool EqualsNoCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

std::optional<int64_t> ParseDecimalId(std::string_view text) {
  constexpr size_t kMaxDigits = 19;  // 2^63 - 1 has 19
  if (text.empty() || text.size() > kMaxDigits || text[0] < '1' || text[0] > '9') {
    return std::nullopt;
  }
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const int digit = c - '0';
    if (value > (INT64_MAX - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  BOX_ASSERT(value >= 1);  // no sign, no leading zero: every id spelled so is positive
  return value;
}

bool IsValidEmail(std::string_view address) {
  if (address.size() < 3 || address.size() > kMaxEmailLength) return false;
  const size_t at = address.find('@');
  if (at == std::string_view::npos || at == 0 || at > 64 ||
      address.find('@', at + 1) != std::string_view::npos) {
    return false;
  }
  constexpr std::string_view kSpecials = "<>()[],;:\\\"";
  for (char c : address.substr(0, at)) {
    if (c <= ' ' || c >= 0x7f || kSpecials.find(c) != std::string_view::npos) return false;
  }
  const std::string_view domain = address.substr(at + 1);
  size_t label = 0;  // the current label's length
  for (size_t i = 0; i < domain.size(); ++i) {
    const char c = domain[i];
    if (c == '.') {
      if (label == 0 || domain[i - 1] == '-') return false;
      label = 0;
      continue;
    }
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && label > 0)) return false;
    if (++label > 63) return false;
  }
  return label > 0 && domain.back() != '-';
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace boxoffice
