#include "http/async_client.h"

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <cctype>
#include <memory>
#include <optional>

namespace boxoffice::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

// One loop's connections to the service; touched by that loop's thread only.
struct HttpPool::Connections {
  explicit Connections(asio::io_context& c) : context(c) {}
  asio::io_context& context;
  std::vector<std::unique_ptr<beast::tcp_stream>> idle;
  size_t in_flight = 0;
  std::optional<tcp::resolver::results_type> endpoints;  // resolved once, on first use
};

HttpPool::HttpPool(std::string host, unsigned short port, size_t max_in_flight)
    : host_(std::move(host)), port_(port), max_in_flight_(max_in_flight) {}

HttpPool::~HttpPool() = default;

namespace {

// Counts a call in flight for as long as it lives.
struct InFlight {
  explicit InFlight(size_t* n) : n_(n) { ++*n_; }
  ~InFlight() { --*n_; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  size_t* n_;
};

}  // namespace

asio::awaitable<Result<ClientResponse>> HttpPool::Fetch(
    std::string method, std::string target, std::string body,
    std::vector<std::pair<std::string, std::string>> headers, Millis timeout) {
  Connections* c = loops_.Get(
      [](asio::io_context& context) { return std::make_unique<Connections>(context); });
  if (!c) co_return http::Fetch(host_, port_, method, target, body, headers, timeout);
  const std::string where = host_ + ":" + std::to_string(port_) + target;
  if (c->in_flight >= max_in_flight_) {
    co_return Status(Code::kUnavailable, "too many calls in flight to " + where);
  }
  InFlight counted(&c->in_flight);
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, host_);
  if (!body.empty()) req.set(bhttp::field::content_type, "application/json");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.keep_alive(true);
  req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  // A kept-alive connection the service closed meanwhile fails at once: then once more on
  // a fresh one. (Every call made here may be repeated: reads, or writes with a key.)
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<beast::tcp_stream> stream;
    const bool reused = !c->idle.empty();
    if (reused) {
      stream = std::move(c->idle.back());
      c->idle.pop_back();
    } else {
      if (!c->endpoints) {
        tcp::resolver resolver(c->context);
        auto found = co_await resolver.async_resolve(host_, std::to_string(port_),
                                                     asio::redirect_error(asio::use_awaitable, ec));
        if (ec) co_return Status(Code::kUnavailable, "http " + where + ": " + ec.message());
        c->endpoints = std::move(found);
      }
      stream = std::make_unique<beast::tcp_stream>(c->context);
      stream->expires_after(timeout);
      co_await stream->async_connect(*c->endpoints, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return Status(Code::kUnavailable, "http " + where + ": " + ec.message());
    }
    stream->expires_after(timeout);
    co_await bhttp::async_write(*stream, req, asio::redirect_error(asio::use_awaitable, ec));
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxClientResponseBytes);
    parser.skip(method == "HEAD");
    if (!ec) {
      co_await bhttp::async_read(*stream, buffer, parser,
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    if (ec) {
      if (reused && attempt == 0 && ec != beast::error::timeout) continue;
      co_return Status(Code::kUnavailable, "http " + method + " " + where + ": " + ec.message());
    }
    auto& res = parser.get();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    if (res.keep_alive() && c->idle.size() < kMaxIdle) {
      stream->expires_never();
      c->idle.push_back(std::move(stream));
    }
    co_return out;
  }
  co_return Status(Code::kUnavailable, "http " + method + " " + where + ": connection closed");
}

}  // namespace boxoffice::http
