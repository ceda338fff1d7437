#include "http/router.h"

#include <strings.h>

#include <boost/container/small_vector.hpp>

#include "core/text.h"
#include "http/header_lists.h"

namespace boxoffice::http {
namespace {

const std::string kGet = "GET";

// A path's segments, as views into it; no allocation for up to 8 (every route has fewer).
using Segments = boost::container::small_vector<std::string_view, 8>;

Segments Split(std::string_view path) {
  Segments out;
  size_t pos = 1;  // paths start with '/'
  while (pos <= path.size()) {
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

bool MatchSegments(const Route& route, const Segments& parts,
                   std::map<std::string, std::string>* params) {
  if (route.segments.size() != parts.size()) return false;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& seg = route.segments[i];
    if (seg.size() > 2 && seg.front() == '{' && seg.back() == '}') {
      if (parts[i].empty()) return false;
      if (params) (*params)[seg.substr(1, seg.size() - 2)] = std::string(parts[i]);
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
    if (EqualsNoCase(k, name)) return &v;
  }
  return nullptr;
}

size_t Headers::Count(std::string_view name) const {
  size_t n = 0;
  for (const auto& [k, v] : items_) {
    n += EqualsNoCase(k, name);
  }
  return n;
}


std::string NonconformingHead(const Headers& headers, bool http_1_0) {
  const size_t hosts = headers.Count("Host");
  if (hosts > 1 || (hosts == 0 && !http_1_0)) return "a request needs exactly one Host header";
  if (hosts == 1 && !IsValidHost(*headers.Find("Host"))) {
    return "Host must be a host name or address with an optional port";
  }
  for (const char* single : {"Authorization", "Idempotency-Key", "X-Admission-Token"}) {
    if (headers.Count(single) > 1) return std::string("header ") + single + " was sent twice";
  }
  // RFC 9112 6.3: only "chunked", last, frames a request body; we implement no other coding,
  // and a request with both framings is how smuggling starts. Each of these is refused and
  // the connection closed, never the rest read as another request.
  bool any_coding = false;
  bool only_chunked = true;
  size_t codings = 0;
  for (const auto& [name, value] : headers.items()) {
    if (!EqualsNoCase(name, "Transfer-Encoding")) continue;
    any_coding = true;
    ForEachListItem(value, [&](std::string_view coding) {
      ++codings;
      only_chunked = only_chunked && EqualsNoCase(coding, "chunked");
    });
  }
  if (any_coding && (!only_chunked || codings != 1)) {
    return "Transfer-Encoding other than chunked alone is not supported";
  }
  if (any_coding && headers.Count("Content-Length") > 0) {
    return "a request may not carry both Transfer-Encoding and Content-Length";
  }
  return "";
}

bool IfNoneMatchHits(std::string_view if_none_match, std::string_view etag) {
  auto opaque = [](std::string_view tag) {
    if (tag.size() >= 2 && tag[0] == 'W' && tag[1] == '/') tag.remove_prefix(2);
    return tag;
  };
  bool hit = false;
  ForEachListItem(if_none_match, [&](std::string_view tag) {
    hit = hit || tag == "*" || opaque(tag) == opaque(etag);
  });
  return hit;
}

namespace {

bool IsUnreservedOrSubDelim(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         std::string_view("-._~!$&'()*+,;=").find(c) != std::string_view::npos;
}

// RFC 3986 reg-name: unreserved, pct-encoded and sub-delims (IPv4 addresses are of it too).
bool IsRegName(std::string_view name) {
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '%') {
      if (i + 2 >= name.size() || HexValue(name[i + 1]) < 0 || HexValue(name[i + 2]) < 0) {
        return false;
      }
      i += 2;
    } else if (!IsUnreservedOrSubDelim(name[i])) {
      return false;
    }
  }
  return true;
}

// "[" IPv6address or IPvFuture "]": hex digits, colons and dots (an embedded IPv4), or
// "v" HEXDIG "." and more; checked by its alphabet, which is all a Host header needs.
bool IsIpLiteral(std::string_view text) {
  if (text.size() < 3 || text.front() != '[' || text.back() != ']') return false;
  const std::string_view inner = text.substr(1, text.size() - 2);
  if (inner[0] == 'v' || inner[0] == 'V') {
    const size_t dot = inner.find('.');
    if (dot == std::string_view::npos || dot < 2 || dot + 1 == inner.size()) return false;
    for (char c : inner.substr(1, dot - 1)) {
      if (HexValue(c) < 0) return false;
    }
    for (char c : inner.substr(dot + 1)) {
      if (c != ':' && !IsUnreservedOrSubDelim(c)) return false;
    }
    return true;
  }
  bool colon = false;
  for (char c : inner) {
    if (c == ':') {
      colon = true;
    } else if (c != '.' && HexValue(c) < 0) {
      return false;
    }
  }
  return colon;
}

}  // namespace

bool IsValidHost(std::string_view text) {
  std::string_view host = text;
  std::string_view port;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) return false;
    host = text.substr(0, close + 1);
    if (close + 1 < text.size()) {
      if (text[close + 1] != ':') return false;
      port = text.substr(close + 2);
    }
    if (!IsIpLiteral(host)) return false;
  } else {
    const size_t colon = text.find(':');
    if (colon != std::string_view::npos) {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
    }
    if (host.empty() || !IsRegName(host)) return false;
  }
  if (port.size() > 5) return false;
  int value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  return value <= 65535;
}

bool Request::SetTarget(std::string_view target) {
  if (target.empty()) return false;
  if (target.front() != '/') {
    // Absolute form: the scheme (http or https, in any case), "//", the authority, then the
    // path, which may be empty ("/" then).
    const size_t scheme_end = target.find("://");
    if (scheme_end == std::string_view::npos) return false;
    const std::string_view scheme = target.substr(0, scheme_end);
    if (!EqualsNoCase(scheme, "http") && !EqualsNoCase(scheme, "https")) return false;
    std::string_view rest = target.substr(scheme_end + 3);
    const size_t path_start = rest.find_first_of("/?");
    const std::string_view authority = rest.substr(0, path_start);
    if (!IsValidHost(authority)) return false;
    rest = path_start == std::string_view::npos ? std::string_view() : rest.substr(path_start);
    std::string origin_form = rest.empty() || rest.front() == '?' ? "/" : "";
    origin_form.append(rest);
    return SetTarget(origin_form);
  }
  const size_t q = target.find('?');
  path = std::string(target.substr(0, q));
  query = q == std::string_view::npos ? "" : std::string(target.substr(q + 1));
  return true;
}

bool Request::QueryIsClean() const {
  size_t pos = 0;
  while (pos < query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    if (!IsCleanText(PercentDecode(std::string_view(query.data() + pos, end - pos)))) return false;
    pos = end + 1;
  }
  return true;
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
  const Segments segments = Split(pattern);
  Route r{std::move(method), pattern, blocking, std::move(handler),
          std::vector<std::string>(segments.begin(), segments.end()), nullptr,
          nullptr};
  routes_.push_back(std::move(r));
}

void Router::AddAsync(std::string method, std::string pattern, AsyncHandler handler) {
  Add(std::move(method), std::move(pattern), nullptr, /*blocking=*/false);
  routes_.back().async = std::move(handler);
}

void Router::AddAsyncWithFastPath(std::string method, std::string pattern, FastPath fast,
                                  AsyncHandler handler) {
  AddAsync(std::move(method), std::move(pattern), std::move(handler));
  routes_.back().fast = std::move(fast);
}

Match Router::Find(Request& request) const {
  const auto parts = Split(request.path);
  // HEAD is GET without the body (RFC 9110 9.3.2): every GET route answers it.
  const std::string& method = request.method == "HEAD" ? kGet : request.method;
  Match m;
  for (const auto& route : routes_) {
    if (!MatchSegments(route, parts, nullptr)) continue;
    if (route.method == method) {
      MatchSegments(route, parts, &request.params);
      m.route = &route;
      m.allow.clear();
      return m;
    }
    if (!m.allow.empty()) m.allow += ", ";
    m.allow += route.method;
    if (route.method == kGet) m.allow += ", HEAD";
  }
  return m;
}

Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view details_json) {
  // Written directly (no JSON tree): a premiere answers most holds with a refusal.
  // details_json is an object of ours; its members join the body's.
  BOX_ASSERT(details_json.empty() ||
             (details_json.size() >= 2 && details_json.front() == '{' && details_json.back() == '}'));
  Response r;
  r.status = status;
  r.body.reserve(32 + code.size() + message.size() + details_json.size());
  r.body.append("{\"code\":");
  AppendJsonString(&r.body, code);
  r.body.append(",\"error\":");
  AppendJsonString(&r.body, message);
  if (details_json.size() > 2) {
    r.body.push_back(',');
    r.body.append(details_json.substr(1, details_json.size() - 2));
  }
  r.body.push_back('}');
  return r;
}

}  // namespace boxoffice::http
