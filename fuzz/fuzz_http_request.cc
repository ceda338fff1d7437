// Fuzz target: a raw HTTP/1.1 request head as the server reads it (Beast's parser with the
// server's limits), then our checks on it: the conformance rules of API.md
// (NonconformingHead), query text and parameters, If-None-Match, Accept-Encoding's choice,
// and routing over the service's route patterns. Nothing may crash, and the checks must agree with each other.
// clang-format off
#include <utility>
#include <boost/beast/http.hpp>
// clang-format on
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/text.h"
#include "http/encoding.h"
#include "http/router.h"

namespace {

using namespace boxoffice;
namespace bhttp = boost::beast::http;

const http::Router& Routes() {
  static const http::Router* router = [] {
    auto* r = new http::Router();
    auto none = [](http::Request&) { return http::Response{}; };
    for (const char* get : {"/healthz", "/readyz", "/metrics", "/openapi.yaml", "/showtimes",
                            "/showtimes/{showtimeId}", "/showtimes/{showtimeId}/seats",
                            "/showtimes/{showtimeId}/seats/stream", "/holds/{holdId}",
                            "/bookings/{bookingId}", "/showtimes/{showtimeId}/queue/{queueToken}"}) {
      r->Add("GET", get, none);
    }
    for (const char* post : {"/showtimes/{showtimeId}/holds", "/holds/{holdId}/extend",
                             "/admin/showtimes", "/showtimes/{showtimeId}/queue",
                             "/payments/callback"}) {
      r->Add("POST", post, none);
    }
    r->Add("DELETE", "/holds/{holdId}", none);
    r->Add("PUT", "/admin/showtimes/{showtimeId}/waiting-room", none);
    r->Add("POST", "/holds/{holdId}/checkout", none);
    return r;
  }();
  return *router;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  bhttp::request_parser<bhttp::string_body> parser;
  parser.header_limit(16 * 1024);
  parser.body_limit(64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& req = parser.get();
  http::Request request;
  request.method = std::string(req.method_string());
  request.SetTarget(std::string_view(req.target().data(), req.target().size()));
  for (const auto& field : req)
    request.headers.Add(std::string(field.name_string()), std::string(field.value()));
  const std::string why = http::NonconformingHead(request.headers, req.version() == 10);
  // A request the checks pass has exactly one Host (HTTP/1.1) and no framing but chunked.
  if (why.empty() && req.version() == 11 && request.headers.Count("Host") != 1) std::abort();
  if (request.QueryIsClean()) {
    for (const char* name : {"from", "to", "cinema", "limit", "cursor"}) {
      if (auto value = request.QueryParam(name); value && !IsCleanText(*value)) std::abort();
    }
  }
  if (const std::string* inm = request.headers.Find("If-None-Match")) {
    // A hit needs the tag itself or *.
    if (http::IfNoneMatchHits(*inm, "\"0123456789abcdef\"") &&
        inm->find("\"0123456789abcdef\"") == std::string::npos &&
        inm->find('*') == std::string::npos) {
      std::abort();
    }
  }
  {
    // A coding is chosen only if the header names it (any case) or names *.
    const std::string* accept = request.headers.Find("Accept-Encoding");
    const http::Encoding coding = http::PreferredEncoding(accept);
    if (coding != http::Encoding::kIdentity) {
      std::string lower = *accept;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower.find(http::EncodingName(coding)) == std::string::npos &&
          lower.find('*') == std::string::npos) {
        std::abort();
      }
    }
  }
  http::Match match = Routes().Find(request);
  if (match.route && !match.allow.empty()) std::abort();
  if (match.route) {
    for (const auto& [name, value] : request.params) {
      if (value.empty() || value.find('/') != std::string::npos) std::abort();
    }
  }
  return 0;
}
