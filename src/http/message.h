// HTTP requests and responses as plain values, so handlers never see a socket or Beast.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace boxoffice::http {

// Case-insensitive header lookup over the few headers a request carries.
class Headers {
 public:
  void Add(std::string name, std::string value) {
    items_.emplace_back(std::move(name), std::move(value));
  }
  void Reserve(size_t n) { items_.reserve(n); }
  // The first value of the header, or nullptr.
  const std::string* Find(std::string_view name) const;
  // How many times the header was sent.
  size_t Count(std::string_view name) const;
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

struct Request {
  std::string method;  // "GET", "POST", …
  std::string path;    // decoded of nothing: ids and seat codes need no escaping
  std::string query;   // the raw text after '?', without it
  Headers headers;
  std::string body;
  std::string request_id;                     // the X-Request-Id this request answers with
  std::map<std::string, std::string> params;  // path parameters matched by the router

  // The decoded value of a query parameter, if present.
  std::optional<std::string> QueryParam(std::string_view name) const;
  // Whether every query parameter's name and value decode to valid UTF-8 without U+0000.
  bool QueryIsClean() const;
  // Sets path and query from a request target in origin form ("/showtimes?cinema=Odeon")
  // or absolute form ("http://host:8080/showtimes?cinema=Odeon", RFC 9112 3.2.2, whose
  // authority then stands for Host). False, and nothing set, for any other form.
  bool SetTarget(std::string_view target);
};

// Whether text is a Host header's value: uri-host [":" port] (RFC 9110 7.2, RFC 3986
// 3.2.2): a registered name, an IPv4 address, or an IPv6 literal in brackets, and a port
// of at most 65535. An empty value is not.
bool IsValidHost(std::string_view text);

// Why a request's head breaks RFC 9110/9112 in a way API.md refuses with 400 (no or two
// Host headers, a Transfer-Encoding other than chunked alone, both Transfer-Encoding and
// Content-Length, two values of a header that must be single), or empty if it does not.
// `http_1_0`: the request said HTTP/1.0, which may omit Host.
std::string NonconformingHead(const Headers& headers, bool http_1_0);

// Whether If-None-Match (a list of entity tags, weak ones with W/, or *) matches `etag`
// (weak comparison, RFC 9110 13.1.2).
bool IfNoneMatchHits(std::string_view if_none_match, std::string_view etag);

// A response body produced over time (Server-Sent Events). The server sends the status and
// headers at once, then, chunk by chunk, whatever Pull yields each time the stream wakes it,
// and Heartbeat() after each heartbeat interval of silence. The body ends when Pull returns
// false, the client goes away, or the server stops.
class BodyStream {
 public:
  virtual ~BodyStream() = default;
  // Called once, before the first Pull, with a function that any thread may call (even
  // after the connection is gone) whenever Pull has something new.
  virtual void Attach(std::function<void()> wake) = 0;
  // Appends what is ready to *out; false when the stream is over.
  virtual bool Pull(std::string* out) = 0;
  virtual std::string Heartbeat() const = 0;
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::shared_ptr<BodyStream> stream;  // set: the body is this stream, not `body`
  // set: the body is these bytes, not `body` (shared, e.g. a cached seat map, so no copy)
  std::shared_ptr<const std::string> shared_body;
  // set: header lines written beforehand ("Name: value\r\n" each, names the server does not
  // write itself), sent after `headers` (e.g. a cached seat map's, per version)
  std::shared_ptr<const std::string> fields;

  Response& Header(std::string name, std::string value) {
    headers.emplace_back(std::move(name), std::move(value));
    return *this;
  }
};

}  // namespace boxoffice::http

namespace boxoffice::http {

// The one error body of API.md: {"error": message, "code": code, ...details}.
// details must be a JSON object (serialised), or empty.
Response ErrorResponse(int status, std::string_view code, std::string_view message,
                       std::string_view details_json = "");

}  // namespace boxoffice::http
