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

// One loop's connections to the service; touched by that loop's thread only. The count of
// calls in flight is shared with the calls' frames, which may outlive this (a loop that
// stops destroys its suspended coroutines after its exit hooks freed this).
struct HttpPool::Connections {
  struct Idle {
    std::unique_ptr<beast::tcp_stream> stream;
    std::chrono::steady_clock::time_point since;
  };
  explicit Connections(asio::any_io_executor e) : executor(std::move(e)) {}
  asio::any_io_executor executor;
  std::vector<Idle> idle;
  std::shared_ptr<size_t> in_flight = std::make_shared<size_t>(0);
  std::optional<tcp::resolver::results_type> endpoints;  // resolved once, on first use
};

HttpPool::HttpPool(std::string host, unsigned short port, size_t max_in_flight)
    : host_(std::move(host)), port_(port), max_in_flight_(max_in_flight) {}

HttpPool::~HttpPool() = default;

namespace {

// Counts a call in flight for as long as it lives.
struct InFlight {
  explicit InFlight(std::shared_ptr<size_t> n) : n_(std::move(n)) { ++*n_; }
  ~InFlight() { --*n_; }
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  std::shared_ptr<size_t> n_;
};

// A kept-alive connection idle this long is closed rather than reused: services close
// theirs after a while (often a minute), and a stale one costs a failed attempt.
constexpr std::chrono::seconds kMaxIdleTime{15};

}  // namespace

asio::awaitable<Result<ClientResponse>> HttpPool::Fetch(
    std::string method, std::string target, std::string body,
    std::vector<std::pair<std::string, std::string>> headers, Millis timeout) {
  Connections* c = loops_.Get([](asio::io_context& context) {
    return std::make_unique<Connections>(context.get_executor());
  });
  // Off the loops: a connection of this call's own, on the caller's executor (RunSync's),
  // so the timeout holds there too, and nothing is kept.
  std::optional<Connections> own;
  if (!c) c = &own.emplace(co_await asio::this_coro::executor);
  const bool pooled = !own;
  const std::string where = host_ + ":" + std::to_string(port_) + target;
  if (pooled && *c->in_flight >= max_in_flight_) {
    co_return Status(Code::kUnavailable, "too many calls in flight to " + where);
  }
  InFlight counted(c->in_flight);
  // One deadline for the whole call: resolving, connecting, writing and reading.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
  req.set(bhttp::field::host, host_);
  if (!body.empty()) req.set(bhttp::field::content_type, "application/json");
  for (const auto& [k, v] : headers) req.set(k, v);
  req.keep_alive(pooled);
  req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  const std::string port = std::to_string(port_);
  // A kept-alive connection the service closed meanwhile fails at once: then once more on
  // a fresh one. (Every call made here may be repeated: reads, or writes with a key.)
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::unique_ptr<beast::tcp_stream> stream;
    const auto now = std::chrono::steady_clock::now();
    while (attempt == 0 && !c->idle.empty() && !stream) {
      Connections::Idle last = std::move(c->idle.back());
      c->idle.pop_back();
      if (now - last.since < kMaxIdleTime) stream = std::move(last.stream);
    }
    const bool reused = stream != nullptr;
    if (!reused) {
      if (!c->endpoints) {
        beast::error_code bad;
        const auto address = asio::ip::make_address(host_, bad);
        if (!bad) {
          c->endpoints = tcp::resolver::results_type::create(tcp::endpoint(address, port_), host_,
                                                             port);
        } else {
          // A name: resolved once per loop (a numeric address needs no resolver).
          tcp::resolver resolver(c->executor);
          auto found = co_await resolver.async_resolve(host_, port,
                                                       asio::redirect_error(asio::use_awaitable, ec));
          if (ec) co_return Status(Code::kUnavailable, "http " + where + ": " + ec.message());
          c->endpoints = std::move(found);
        }
      }
      stream = std::make_unique<beast::tcp_stream>(c->executor);
      stream->expires_at(deadline);
      co_await stream->async_connect(*c->endpoints, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return Status(Code::kUnavailable, "http " + where + ": " + ec.message());
    }
    stream->expires_at(deadline);
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
      if (reused && ec != beast::error::timeout) continue;
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
    if (pooled && res.keep_alive() && c->idle.size() < kMaxIdle) {
      stream->expires_never();
      c->idle.push_back(Connections::Idle{std::move(stream), std::chrono::steady_clock::now()});
    }
    co_return out;
  }
  co_return Status(Code::kUnavailable, "http " + method + " " + where + ": connection closed");
}

}  // namespace boxoffice::http
