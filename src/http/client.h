// A small blocking HTTP/1.1 client (Beast) for calls to other services off the I/O loops:
// the gateway's callbacks, the tests, the tools. One connection per call, every call
// bounded by a timeout covering connect, write and read (it runs on a private io_context:
// never call it on an I/O loop, which http/async_client.h serves).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice::http {

// Responses larger than this are refused (the gateway's answers are tiny).
inline constexpr size_t kMaxClientResponseBytes = 16 * 1024 * 1024;

struct ClientResponse {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

struct HttpUrl {
  std::string host;
  unsigned short port = 80;
  std::string target = "/";  // path and query
};

// "http://host:port/path?query" (only plain http: services on a private network).
std::optional<HttpUrl> ParseHttpUrl(const std::string& url);

// kUnavailable when the peer cannot be reached or does not answer within timeout.
Result<ClientResponse> Fetch(const std::string& host, unsigned short port,
                             const std::string& method, const std::string& target,
                             const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             Millis timeout);

}  // namespace boxoffice::http
