// HTTP requests and responses as plain values, so handlers never see a socket or Beast.
#pragma once

#include <map>
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
  // The first value of the header, or nullptr.
  const std::string* Find(std::string_view name) const;
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
};

struct Response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;

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
