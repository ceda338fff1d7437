#include "http/router.h"

#include <strings.h>

namespace boxoffice::http {
namespace {

std::vector<std::string> Split(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 1;  // paths start with '/'
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool MatchSegments(const Route& route, const std::vector<std::string>& parts,
                   std::map<std::string, std::string>* params) {
  if (route.segments.size() != parts.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& seg = route.segments[i];
    if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
      if (parts[i].empty()) return false;
      if (params) (*params)[seg.substr(1, seg.size() - 2)] = parts[i];
    } else if (seg != parts[i]) {
      return false;
    }
  }
  return true;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string PercentDecode(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() + 0 && HexValue(s[i + 1]) >= 0 &&
               HexValue(s[i + 2]) >= 0) {
      out += static_cast<char>(HexValue(s[i + 1]) * 16 + HexValue(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

}  // namespace

const std::string* Headers::Find(std::string_view name) const {
  for (const auto& [k, v] : items_) {
    if (k.size() == name.size() && strncasecmp(k.data(), name.data(), k.size()) == 0) return &v;
  }
  return nullptr;
}

std::optional<std::string> Request::QueryParam(std::string_view name) const {
  size_t pos = 0;
  while (pos < query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    const std::string_view pair(query.data() + pos, end - pos);
    const size_t eq = pair.find('=');
    const std::string key = PercentDecode(pair.substr(0, eq));
    if (key == name) return eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1));
    pos = end + 1;
  }
  return std::nullopt;
}

void Router::Add(std::string method, std::string pattern, Handler handler, bool blocking) {
  Route r{std::move(method), pattern, blocking, std::move(handler), Split(pattern), nullptr};
  routes_.push_back(std::move(r));
}

void Router::AddWithFastPath(std::string method, std::string pattern, FastPath fast,
                             Handler handler) {
  Add(std::move(method), std::move(pattern), std::move(handler), /*blocking=*/true);
  routes_.back().fast = std::move(fast);
}

Match Router::Find(Request& request) const {
  const auto parts = Split(request.path);
  Match m;
  for (const auto& route : routes_) {
    if (!MatchSegments(route, parts, nullptr)) continue;
    if (route.method == request.method) {
      MatchSegments(route, parts, &request.params);
      m.route = &route;
      m.allow.clear();
      return m;
    }
    if (!m.allow.empty()) m.allow += ", ";
    m.allow += route.method;
  }
  return m;
}

}  // namespace boxoffice::http

#include <nlohmann/json.hpp>

namespace boxoffice::http {

Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view details_json) {
  nlohmann::json body = {{"error", message}, {"code", code}};
  if (!details_json.empty()) {
    auto details = nlohmann::json::parse(details_json, nullptr, false);
    if (details.is_object()) body.update(details);
  }
  Response r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return r;
}

}  // namespace boxoffice::http
