// Header values that are lists (RFC 9110 5.6.1): their elements, trimmed.
#pragma once

#include <string_view>

namespace boxoffice::http {

// s without optional whitespace (spaces and tabs) at either end.
inline std::string_view TrimOws(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Calls f on each element of a comma-separated header list, trimmed, empty ones skipped.
template <class F>
void ForEachListItem(std::string_view list, F f) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = TrimOws(list.substr(0, comma));
    if (!item.empty()) f(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
}

}  // namespace boxoffice::http
