#include "http/server.h"

// clang-format off
// Boost 1.74's awaitable.hpp uses std::exchange without including <utility>.
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <strings.h>

#include <chrono>
#include <set>
#include <thread>
#include <unordered_map>

#include "core/crypto.h"
#include "core/log.h"
#include "core/status.h"
#include "core/text.h"

namespace boxoffice::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

// What wakes a streaming session: the stream's wake function posts to the session's
// executor, which sets `pending` and cancels the wait (both on the session's own thread).
//
// While a stream runs, a reader waits on the socket, so a client that goes away is noticed
// at once (its slot and socket are freed then, not at the next heartbeat): it sets `closed`
// and cancels the wait. The stream cancels the reader when it ends, and waits for it
// (reader_done) before the socket goes away. All of it runs on the session's one thread.
struct StreamSignal : std::enable_shared_from_this<StreamSignal> {
  explicit StreamSignal(asio::any_io_executor executor)
      : timer(executor), reader_done(std::move(executor)) {}
  asio::steady_timer timer;
  asio::steady_timer reader_done;
  bool pending = false;
  bool closed = false;   // the client closed its side (or sent too much)
  bool reading = false;  // the reader is running
  bool done = false;     // the stream ended: the reader must not read again
  void Wake() {
    asio::post(timer.get_executor(), [self = shared_from_this()] {
      self->pending = true;
      self->timer.cancel();
    });
  }
};

struct Server::Impl {
  ServerOptions options;
  const Router* router;
  Metrics* metrics;
  std::vector<std::unique_ptr<asio::io_context>> contexts;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards;
  std::vector<std::unique_ptr<io::Loop>> loops;  // one per context
  std::vector<std::thread> threads;
  Counter& rejected_connections;
  Counter& overloaded;
  Counter& connection_errors;
  io::BlockingPool workers;
  std::unique_ptr<tcp::acceptor> acceptor;
  std::atomic<size_t> next_context{0};
  std::atomic<size_t> connections{0};
  std::atomic<size_t> active_requests{0};
  std::atomic<bool> stopping{false};
  bool stopped = false;
  std::mutex streams_mu;
  std::set<std::shared_ptr<StreamSignal>> streams;  // open body streams, woken by Stop()

  Impl(ServerOptions o, const Router* r, Metrics* m)
      : options(std::move(o)),
        router(r),
        metrics(m),
        rejected_connections(m->GetCounter("boxoffice_http_rejected_connections_total",
                                           "Connections closed at once: max_connections reached.")),
        overloaded(m->GetCounter("boxoffice_http_overloaded_total",
                                 "Requests answered 503: the worker queue was full.")),
        connection_errors(m->GetCounter(
            "boxoffice_http_connection_errors_total",
            "Connections ended by an exception inside the server (logged; the process lives).")),
        workers(options.worker_threads, options.max_pending_jobs, &overloaded) {
    const size_t n = std::min(io::Loop::kMaxLoops, std::max<size_t>(1, options.io_threads));
    for (size_t i = 0; i < n; ++i) {
      contexts.push_back(std::make_unique<asio::io_context>(1));
      guards.push_back(asio::make_work_guard(*contexts.back()));
      loops.push_back(std::make_unique<io::Loop>(i, contexts.back().get(), &workers));
    }
    BOX_ASSERT(router != nullptr);
    // 1..kMaxLoops loops, each with its context and work guard, whatever io_threads says.
    BOX_ASSERT(!contexts.empty() && contexts.size() <= io::Loop::kMaxLoops);
    BOX_ASSERT(loops.size() == contexts.size() && guards.size() == contexts.size());
  }

  // The loops' contexts go first: destroying them destroys the coroutines a stop left
  // suspended, whose places in the blocking pool (io::PoolPlace) are given back to it.
  ~Impl() {
    acceptor.reset();
    loops.clear();
    guards.clear();
    contexts.clear();
  }

  asio::io_context& NextContext() {
    return *contexts[next_context.fetch_add(1, std::memory_order_relaxed) % contexts.size()];
  }

  // The request's counter and latency series. The registry is asked (under its mutex) once
  // per route, method and status on each I/O thread; after that, a thread-local table.
  void Record(const std::string& route, const std::string& method, int status, double seconds) {
    struct Series {
      Counter* requests;
      Histogram* latency;
    };
    thread_local std::unordered_map<std::string, Series> cache;
    thread_local const Impl* cache_owner = nullptr;
    if (cache_owner != this) {  // a thread serves one server; tests make several
      cache.clear();
      cache_owner = this;
    }
    std::string key;
    key.reserve(route.size() + method.size() + 5);
    key.append(route).append(1, ' ').append(method).append(1, ' ').append(std::to_string(status));
    auto it = cache.find(key);
    if (it == cache.end()) {
      const std::string labels = "route=\"" + route + "\",method=\"" + method + "\",status=\"" +
                                 std::to_string(status) + "\"";
      Series series{
          &metrics->GetCounter("boxoffice_http_requests_total",
                               "HTTP requests by route, method and status.", labels),
          &metrics->GetLatency("boxoffice_http_request_duration_seconds",
                               "HTTP request latency by route, method and status.", labels)};
      it = cache.emplace(std::move(key), series).first;
    }
    it->second.requests->Inc();
    it->second.latency->Observe(seconds);
  }

  asio::awaitable<void> Accept();
  // One connection: Serve's requests, and whatever it throws caught, answered when no
  // answer has begun, logged and counted: a throw ends its connection, never the process.
  asio::awaitable<void> Session(beast::tcp_stream stream);
  // What the session has sent of the request in hand, for the answer to a throw.
  struct Progress {
    bool answering = false;  // bytes of a response (or a 100 Continue) may have gone out
    std::string request_id;
  };
  asio::awaitable<void> Serve(beast::tcp_stream& stream, Progress& progress);
  // Sends response's body stream until it ends; the connection closes after it.
  asio::awaitable<void> Stream(beast::tcp_stream& stream, Response& response,
                               const std::string& request_id);
  asio::awaitable<Response> Dispatch(Request& request, std::string* route_label);
  // The reader of a stream's socket (see StreamSignal).
  static asio::awaitable<void> WatchClose(tcp::socket& socket,
                                          std::shared_ptr<StreamSignal> signal);
};

namespace {

// A connection closed on a refused request is drained for at most this long and this much.
constexpr std::chrono::milliseconds kLingerTimeout{1'000};
constexpr size_t kLingerBytes = 256 * 1024;
// API.md: a request target longer than this is 414.
constexpr size_t kMaxTargetBytes = 8 * 1024;
// The read buffer holds at most the header limit and this much more. The parser consumes a
// body as it comes, so only a chunk's size line or a chunked trailer, which Beast parses
// whole, ever fills it: a trailer (which counts toward the header limit) cannot make the
// buffer grow past it, nor reach Beast's field size, which it enforces by throwing.
constexpr size_t kReadBufferSlack = 4 * 1024;

// Counts a request as in flight for as long as it lives (a throw included).
class RequestInFlight {
 public:
  explicit RequestInFlight(std::atomic<size_t>* count) : count_(count) { count_->fetch_add(1); }
  ~RequestInFlight() {
    const size_t before = count_->fetch_sub(1);
    BOX_ASSERT(before > 0);  // this object's own increment at least
  }
  RequestInFlight(const RequestInFlight&) = delete;
  RequestInFlight& operator=(const RequestInFlight&) = delete;

 private:
  std::atomic<size_t>* count_;
};

// An answer's head into *out (cleared; its capacity kept for the connection's next answer):
// the status line; Content-Type; the response's headers (a name given twice: its last
// value; the names written here are written here only), then its prebuilt lines (fields);
// X-Request-Id;
// X-Content-Type-Options; Connection: close when the connection ends after it;
// Content-Length. A 204 or 304 carries neither Content-Type nor Content-Length (RFC 9110
// 8.6, 15.3.5, 15.4.5). A CR or LF in a value (none of ours has one) is sent as a space,
// so no value can end the head early.
void WriteHead(const Response& r, std::string_view request_id, bool keep_alive,
               size_t body_bytes, std::string* out) {
  auto value = [out](std::string_view v) {
    for (char c : v) out->push_back(c == '\r' || c == '\n' ? ' ' : c);
  };
  auto field = [&](std::string_view name, std::string_view v) {
    out->append(name).append(": ");
    value(v);
    out->append("\r\n");
  };
  out->clear();
  const unsigned status = static_cast<unsigned>(r.status);
  BOX_ASSERT(status >= 100 && status <= 599);  // handlers answer with HTTP statuses
  out->append("HTTP/1.1 ").append(std::to_string(status)).push_back(' ');
  const beast::string_view reason = bhttp::obsolete_reason(bhttp::int_to_status(status));
  out->append(reason.data(), reason.size()).append("\r\n");
  const bool no_content = status == 204 || status == 304;
  if (!no_content) field("Content-Type", r.content_type);
  for (size_t i = 0; i < r.headers.size(); ++i) {
    const std::string& name = r.headers[i].first;
    bool later = false;  // the same name again further on: that value stands
    for (size_t j = i + 1; j < r.headers.size() && !later; ++j) {
      later = EqualsNoCase(r.headers[j].first, name);
    }
    const bool ours = EqualsNoCase(name, "Content-Type") || EqualsNoCase(name, "Content-Length") ||
                      EqualsNoCase(name, "Connection") || EqualsNoCase(name, "X-Request-Id") ||
                      EqualsNoCase(name, "X-Content-Type-Options");
    if (!later && !ours) field(name, r.headers[i].second);
  }
  if (r.fields) out->append(*r.fields);
  field("X-Request-Id", request_id);
  out->append("X-Content-Type-Options: nosniff\r\n");
  if (!keep_alive) out->append("Connection: close\r\n");
  // A stream (only HEAD writes its head here) has no length: it ends with the connection.
  if (!no_content && !r.stream) {
    out->append("Content-Length: ").append(std::to_string(body_bytes)).append("\r\n");
  }
  out->append("\r\n");
}

// Whether a head the parser refused as too large was too large in its request line: 414
// rather than 431 when its target alone passes kMaxTargetBytes. The parser takes the
// request line first: a head refused before it was taken is a line longer than the limit.
bool TargetTooLong(const bhttp::request_parser<bhttp::string_body>& parser) {
  const auto target = parser.get().target();
  return target.empty() || target.size() > kMaxTargetBytes;
}

// The bytes a request's trailer fields take (name, value, ": " and CRLF each): the fields
// after the header's first `header_fields`.
size_t TrailerBytes(const bhttp::request<bhttp::string_body>& req, size_t header_fields) {
  size_t n = 0;
  size_t i = 0;
  for (const auto& field : req) {
    if (i++ >= header_fields) n += field.name_string().size() + field.value().size() + 4;
  }
  return n;
}

asio::awaitable<Response> InvokeAsync(const Route& route, Request& request) {
  std::string error;
  try {
    co_return co_await route.async(request);
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception of unknown type";
  }
  LogError("handler threw",
           {{"route", route.pattern}, {"error", error}, {"requestId", request.request_id}});
  co_return ErrorResponse(500, "INTERNAL", "internal error");
}

Response Invoke(const Route& route, Request& request) {
  try {
    return route.handler(request);
  } catch (const std::exception& e) {
    LogError("handler threw",
             {{"route", route.pattern}, {"error", e.what()}, {"requestId", request.request_id}});
  } catch (...) {
    LogError("handler threw", {{"route", route.pattern},
                               {"error", "an exception of unknown type"},
                               {"requestId", request.request_id}});
  }
  return ErrorResponse(500, "INTERNAL", "internal error");
}

// Metric labels must come from a bounded set: any method outside it is "OTHER".
std::string MethodLabel(const std::string& method) {
  for (const char* known : {"GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"}) {
    if (method == known) return method;
  }
  return method.empty() ? "-" : "OTHER";
}

// A client's X-Request-Id is echoed when it is short and printable; otherwise we make one.
std::string RequestIdFor(const Headers& headers) {
  if (const std::string* given = headers.Find("X-Request-Id")) {
    bool ok = !given->empty() && given->size() <= 128;
    for (char c : *given) ok = ok && c > 32 && c < 127;
    if (ok) return *given;
  }
  return NewFastUuid();
}

}  // namespace

asio::awaitable<Response> Server::Impl::Dispatch(Request& request, std::string* route_label) {
  Match match = router->Find(request);
  if (!match.route) {
    if (!match.allow.empty()) {
      *route_label = "method_not_allowed";
      co_return ErrorResponse(405, "METHOD_NOT_ALLOWED", "method not allowed")
          .Header("Allow", match.allow);
    }
    *route_label = "not_found";
    co_return ErrorResponse(404, "NOT_FOUND", "no such route");
  }
  const Route& route = *match.route;
  BOX_ASSERT(route.async || route.handler);  // routes are registered by code, each with one
  *route_label = route.pattern;
  if (route.fast) {
    try {
      if (auto answer = route.fast(request)) co_return std::move(*answer);
    } catch (const std::exception& e) {
      LogError("fast path threw", {{"route", route.pattern}, {"error", e.what()}});
    } catch (...) {
      LogError("fast path threw", {{"route", route.pattern}});
    }
  }
  if (route.async) co_return co_await InvokeAsync(route, request);
  if (!route.blocking) co_return Invoke(route, request);
  io::BlockingPool& pool = workers;
  if (!pool.TryEnter()) {
    co_return ErrorResponse(503, "UNAVAILABLE", "server busy, retry shortly")
        .Header("Retry-After", "1");
  }
  co_return co_await asio::co_spawn(
      pool.executor(),
      [&route, &request, &pool]() -> asio::awaitable<Response> {
        pool.Leave();
        co_return Invoke(route, request);
      },
      asio::use_awaitable);
}

asio::awaitable<void> Server::Impl::Session(beast::tcp_stream stream) {
  Progress progress;
  std::string error;
  try {
    co_await Serve(stream, progress);
  } catch (const std::exception& e) {
    error = e.what();
  } catch (...) {
    error = "an exception of unknown type";
  }
  if (!error.empty()) {
    connection_errors.Inc();
    LogError("connection ended by an exception",
             {{"error", error}, {"requestId", progress.request_id}});
    beast::error_code ec;
    if (!progress.answering && stream.socket().is_open()) {
      // Nothing of an answer went out: the client learns the request failed.
      std::string body = ErrorResponse(500, "INTERNAL", "internal error").body;
      std::string answer =
          "HTTP/1.1 500 Internal Server Error\r\nContent-Type: application/json\r\n"
          "X-Content-Type-Options: nosniff\r\nConnection: close\r\nContent-Length: " +
          std::to_string(body.size()) + "\r\n\r\n" + body;
      stream.expires_after(options.read_timeout);
      co_await asio::async_write(stream, asio::buffer(answer),
                                 asio::redirect_error(asio::use_awaitable, ec));
    }
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream.socket().close(ec);
  }
  const size_t before = connections.fetch_sub(1);
  BOX_ASSERT(before > 0);  // Accept counted this connection before starting its session
}

asio::awaitable<void> Server::Impl::Serve(beast::tcp_stream& stream, Progress& progress) {
  beast::flat_buffer buffer(options.header_limit_bytes + kReadBufferSlack);
  std::string head_text;  // each answer's head, written here (WriteHead)
  beast::error_code ec;
  bool first = true;
  bool linger = false;  // closing on a request whose body may be unread
  while (!stopping.load()) {
    progress = Progress{};
    // Wait for the next request's first bytes (idle), then for its header (header timeout).
    if (buffer.size() == 0) {
      stream.expires_after(first ? options.header_timeout : options.idle_timeout);
      const size_t n = co_await stream.async_read_some(
          buffer.prepare(4096), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
      buffer.commit(n);
    }
    first = false;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(static_cast<uint32_t>(options.header_limit_bytes));
    parser.body_limit(options.body_limit_bytes);
    stream.expires_after(options.header_timeout);
    const size_t header_bytes = co_await bhttp::async_read_header(
        stream, buffer, parser, asio::redirect_error(asio::use_awaitable, ec));
    const auto started = std::chrono::steady_clock::now();
    Response response;
    std::string route_label;
    Request request;
    bool refused = false;  // answered from the head alone; the connection closes after
    size_t header_fields = 0;
    if (!ec) {
      // The head as plain values, checked before any body byte is read.
      auto& req = parser.get();
      request.method = std::string(req.method_string());
      request.headers.Reserve(static_cast<size_t>(std::distance(req.begin(), req.end())));
      for (const auto& field : req) {
        request.headers.Add(std::string(field.name_string()), std::string(field.value()));
        ++header_fields;
      }
      request.request_id = RequestIdFor(request.headers);
      progress.request_id = request.request_id;
      const std::string_view target(req.target().data(), req.target().size());
      auto refuse = [&](int status, std::string_view why, const char* label) {
        BOX_ASSERT(status >= 400 && status < 500);  // a request refused by its head: 4xx
        response = ErrorResponse(status, "VALIDATION_FAILED", why);
        route_label = label;
        refused = true;
      };
      if (target.size() > kMaxTargetBytes) {
        refuse(414, "request target longer than " + std::to_string(kMaxTargetBytes) + " bytes",
               "uri_too_long");
      } else if (std::string why = NonconformingHead(request.headers, req.version() == 10);
                 !why.empty()) {
        refuse(400, why, "bad_request");
      } else if (target == "*") {
        // RFC 9110 9.3.7: the asterisk form asks about the server, and only OPTIONS may.
        if (request.method == "OPTIONS") {
          response = Response{};
          response.status = 204;
          response.Header("Allow", "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS");
          route_label = "options";
          refused = true;
        } else {
          refuse(400, "the target * is only for OPTIONS", "bad_request");
        }
      } else if (!request.SetTarget(target)) {
        refuse(400, "request target must be a path or an http(s) URL", "bad_request");
      } else if (!request.QueryIsClean()) {
        refuse(400, "query parameters must be valid UTF-8 without U+0000", "bad_request");
      } else if (const std::string* expect = request.headers.Find("Expect")) {
        if (!EqualsNoCase(*expect, "100-continue")) {
          response = ErrorResponse(417, "VALIDATION_FAILED", "only Expect: 100-continue is known");
          route_label = "bad_request";
          refused = true;
        } else if (!parser.is_done()) {
          // The client waits for this before sending the body (RFC 9110 10.1.1).
          static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
          stream.expires_after(options.read_timeout);
          progress.answering = true;
          co_await asio::async_write(stream, asio::buffer(kContinue.data(), kContinue.size()),
                                     asio::redirect_error(asio::use_awaitable, ec));
          if (ec) break;
        }
      }
      if (!refused && !parser.is_done()) {
        stream.expires_after(options.read_timeout);
        co_await bhttp::async_read(stream, buffer, parser,
                                   asio::redirect_error(asio::use_awaitable, ec));
      }
      // Chunked trailers count toward the header limit.
      if (!refused && !ec && parser.chunked() &&
          header_bytes + TrailerBytes(parser.get(), header_fields) > options.header_limit_bytes) {
        ec = bhttp::error::header_limit;
      }
    }
    bool keep_alive = false;
    std::optional<RequestInFlight> in_flight;  // while this request is handled and answered
    if (refused) {
      linger = true;  // response is set; the connection closes (keep_alive stays false)
    } else if (ec == bhttp::error::body_limit) {
      linger = true;
      response = ErrorResponse(
          413, "PAYLOAD_TOO_LARGE",
          "request body exceeds " + std::to_string(options.body_limit_bytes) + " bytes");
      route_label = "payload_too_large";
    } else if (ec == bhttp::error::header_limit && request.method.empty() &&
               TargetTooLong(parser)) {
      linger = true;
      response =
          ErrorResponse(414, "VALIDATION_FAILED",
                        "request target longer than " + std::to_string(kMaxTargetBytes) + " bytes");
      route_label = "uri_too_long";
    } else if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      linger = true;
      response = ErrorResponse(431, "VALIDATION_FAILED", "request header or trailer too large");
      route_label = "header_too_large";
    } else if (ec == beast::error::timeout || ec == bhttp::error::end_of_stream ||
               ec == asio::error::eof || ec == asio::error::connection_reset ||
               ec == asio::error::operation_aborted) {
      break;
    } else if (ec) {
      response = ErrorResponse(400, "VALIDATION_FAILED", "malformed HTTP request");
      route_label = "bad_request";
      linger = true;
    } else {
      auto& req = parser.get();
      request.body = std::move(req.body());
      keep_alive = req.keep_alive();
      in_flight.emplace(&active_requests);
      response = co_await Dispatch(request, &route_label);
    }
    if (request.request_id.empty()) request.request_id = NewFastUuid();
    progress.request_id = request.request_id;
    const bool head = request.method == "HEAD";
    if (response.stream && !head) {
      Record(route_label, MethodLabel(request.method), response.status,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      progress.answering = true;
      co_await Stream(stream, response, request.request_id);
      break;
    }

    // The body is sent from where it lies (the response's string or shared bytes): no copy;
    // the head is written into the connection's own buffer, reused from one answer to the
    // next.
    const std::string& body = response.shared_body ? *response.shared_body : response.body;
    const bool keep = keep_alive && !stopping.load() && !response.stream;
    WriteHead(response, request.request_id, keep, body.size(), &head_text);
    // Counted before the answer leaves: a client that reads it and then asks /metrics sees
    // its request counted.
    Record(route_label, MethodLabel(request.method), response.status,
           std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    stream.expires_after(options.read_timeout);
    progress.answering = true;
    // HEAD: the head a GET would send, Content-Length included (but a stream's, which has
    // none), and no body; a 204 or 304 has none either.
    const bool no_body = head || response.status == 204 || response.status == 304;
    const std::array<asio::const_buffer, 2> answer{
        asio::buffer(head_text), no_body ? asio::const_buffer() : asio::buffer(body)};
    co_await asio::async_write(stream, answer, asio::redirect_error(asio::use_awaitable, ec));
    in_flight.reset();
    if (response.status >= 500) {
      LogWarn(
          "request failed",
          {{"requestId", request.request_id}, {"route", route_label}, {"status", response.status}});
    }
    if (ec || !keep) break;
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  if (linger) {
    // Closing with unread bytes makes the kernel send RST, which can destroy the answer
    // before the client reads it: read (and drop) what the client still sends, briefly.
    stream.expires_after(kLingerTimeout);
    size_t drained = 0;
    while (drained < kLingerBytes) {
      buffer.consume(buffer.size());
      drained += co_await stream.async_read_some(buffer.prepare(4096),
                                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) break;
    }
  }
}

asio::awaitable<void> Server::Impl::Stream(beast::tcp_stream& stream, Response& response,
                                           const std::string& request_id) {
  BOX_ASSERT(response.stream != nullptr);  // Serve streams only a response with a stream
  beast::error_code ec;
  bhttp::response<bhttp::empty_body> res;
  res.version(11);
  res.result(static_cast<unsigned>(response.status));
  res.set(bhttp::field::content_type, response.content_type);
  for (auto& [name, value] : response.headers) res.set(name, value);
  res.set("X-Request-Id", request_id);
  res.set("X-Content-Type-Options", "nosniff");
  res.keep_alive(false);
  res.chunked(true);
  bhttp::response_serializer<bhttp::empty_body> header(res);
  stream.expires_after(options.read_timeout);
  co_await bhttp::async_write_header(stream, header, asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  auto signal = std::make_shared<StreamSignal>(stream.get_executor());
  {
    std::lock_guard lock(streams_mu);
    streams.insert(signal);
  }
  signal->reading = true;
  asio::co_spawn(stream.get_executor(), WatchClose(stream.socket(), signal), asio::detached);
  std::weak_ptr<StreamSignal> weak = signal;
  response.stream->Attach([weak] {
    if (auto s = weak.lock()) s->Wake();
  });
  auto write_chunk = [&](const std::string& data) -> asio::awaitable<void> {
    stream.expires_after(options.read_timeout);  // a client that stops reading is dropped
    co_await asio::async_write(stream, bhttp::make_chunk(asio::buffer(data)),
                               asio::redirect_error(asio::use_awaitable, ec));
  };
  while (!ec && !signal->closed) {
    std::string out;
    const bool more = response.stream->Pull(&out);
    if (!out.empty()) co_await write_chunk(out);
    if (ec || !more || stopping.load() || signal->closed) break;
    if (!signal->pending && !stopping.load()) {
      signal->timer.expires_after(options.stream_heartbeat);
      beast::error_code waited;
      co_await signal->timer.async_wait(asio::redirect_error(asio::use_awaitable, waited));
      if (!waited && !signal->pending && !stopping.load() && !signal->closed) {
        co_await write_chunk(response.stream->Heartbeat());
      }
    }
    signal->pending = false;
  }
  // Stop the reader before the socket may go: a read that already completed cannot be
  // cancelled, so the reader also checks `done`, and each pass cancels again.
  signal->done = true;
  while (signal->reading) {
    beast::error_code ignored;
    stream.socket().cancel(ignored);
    signal->reader_done.expires_after(std::chrono::milliseconds(100));
    co_await signal->reader_done.async_wait(asio::redirect_error(asio::use_awaitable, ignored));
  }
  if (!ec && !signal->closed) {
    stream.expires_after(options.read_timeout);
    co_await asio::async_write(stream, bhttp::make_chunk_last(),
                               asio::redirect_error(asio::use_awaitable, ec));
  }
  std::lock_guard lock(streams_mu);
  streams.erase(signal);
}

asio::awaitable<void> Server::Impl::WatchClose(tcp::socket& socket,
                                               std::shared_ptr<StreamSignal> signal) {
  // An event stream's client has nothing to say: whatever it sends is read and dropped,
  // up to a bound, and its close (or too much talk) ends the stream.
  constexpr size_t kMaxIgnoredBytes = 64 * 1024;
  char buf[1024];
  size_t total = 0;
  beast::error_code ec;
  while (total < kMaxIgnoredBytes && !signal->done) {
    total += co_await socket.async_read_some(asio::buffer(buf),
                                             asio::redirect_error(asio::use_awaitable, ec));
    if (ec) break;
  }
  if (!signal->done && ec != asio::error::operation_aborted) signal->closed = true;
  signal->reading = false;
  signal->timer.cancel();
  signal->reader_done.cancel();
}

asio::awaitable<void> Server::Impl::Accept() {
  for (;;) {
    beast::error_code ec;
    asio::io_context& target = NextContext();
    tcp::socket socket =
        co_await acceptor->async_accept(target, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      if (stopping.load() || ec == asio::error::operation_aborted) co_return;
      LogWarn("accept failed", {{"error", ec.message()}});
      // Out of file descriptors and the like: back off briefly instead of spinning.
      asio::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(50));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (connections.load() >= options.max_connections) {
      rejected_connections.Inc();
      socket.close(ec);
      continue;
    }
    // Only this coroutine adds (sessions only take away): the bound holds once counted.
    const size_t now_open = connections.fetch_add(1) + 1;
    BOX_ASSERT(now_open <= options.max_connections);
    socket.set_option(tcp::no_delay(true), ec);
    asio::co_spawn(target, Session(beast::tcp_stream(std::move(socket))), asio::detached);
  }
}

Server::Server(ServerOptions options, const Router* router, Metrics* metrics)
    : impl_(std::make_unique<Impl>(std::move(options), router, metrics)) {
  metrics->AddGauge("boxoffice_http_open_connections", "Open HTTP connections.",
                    [impl = impl_.get()] { return static_cast<double>(impl->connections.load()); });
  metrics->AddGauge(
      "boxoffice_http_requests_in_flight", "Requests read and not yet answered.",
      [impl = impl_.get()] { return static_cast<double>(impl->active_requests.load()); });
}

Server::~Server() { Stop(); }

bool Server::Start() {
  beast::error_code ec;
  const auto address = asio::ip::make_address(impl_->options.host, ec);
  if (ec) {
    LogError("bad listen address", {{"host", impl_->options.host}});
    return false;
  }
  impl_->acceptor = std::make_unique<tcp::acceptor>(*impl_->contexts[0]);
  const tcp::endpoint endpoint(address, impl_->options.port);
  impl_->acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl_->acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl_->acceptor->bind(endpoint, ec);
  if (!ec) impl_->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    LogError(
        "cannot listen",
        {{"host", impl_->options.host}, {"port", impl_->options.port}, {"error", ec.message()}});
    return false;
  }
  asio::co_spawn(*impl_->contexts[0], impl_->Accept(), asio::detached);
  for (auto& loop : impl_->loops) {
    impl_->threads.emplace_back([l = loop.get()] { l->Run(); });
  }
  return true;
}

unsigned short Server::port() const {
  return impl_->acceptor ? impl_->acceptor->local_endpoint().port() : 0;
}

void Server::Stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->stopping = true;
  if (impl_->acceptor) {
    asio::post(*impl_->contexts[0], [a = impl_->acceptor.get()] {
      beast::error_code ec;
      a->close(ec);
    });
  }
  // Open body streams end now, with their last chunk.
  {
    std::lock_guard lock(impl_->streams_mu);
    for (const auto& signal : impl_->streams) signal->Wake();
  }
  // Let requests already being handled finish and answer.
  const auto deadline = std::chrono::steady_clock::now() + impl_->options.drain_timeout;
  while (impl_->active_requests.load() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  for (auto& ctx : impl_->contexts) ctx->stop();
  for (auto& t : impl_->threads) t.join();
  impl_->workers.Join();
}

}  // namespace boxoffice::http
