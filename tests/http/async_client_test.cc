// The HTTP pool the I/O loops call the payment gateway through: one kept-alive connection
// carries call after call; a service that answers too slowly fails the call within its
// timeout; a dead one fails it at once; past max_in_flight calls a call is refused at once
// instead of queueing; off the loops the same call blocks, within the same timeout.
#include "http/async_client.h"

#include <gtest/gtest.h>

// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <atomic>
#include <future>
#include <thread>

#include "support/loop_thread.h"
#include "support/test_env.h"

namespace boxoffice::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using testing::LoopThread;

// A service on a loopback port that answers every request with 200 after `delay`, keeping
// connections alive, and counts the connections it accepted.
class TinyService {
 public:
  explicit TinyService(std::chrono::milliseconds delay) : delay_(delay) {
    acceptor_.bind(tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    acceptor_.listen();
    port_ = acceptor_.local_endpoint().port();
    thread_ = std::thread([this] { Accept(); });
  }
  ~TinyService() {
    stopping_ = true;
    {
      // A blocking accept is not woken by closing its socket: a connection wakes it.
      asio::io_context io;
      tcp::socket wake(io);
      beast::error_code ignored;
      wake.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ignored);
    }
    thread_.join();
    beast::error_code ec;
    acceptor_.close(ec);
    for (auto& t : connections_) t.join();
  }
  unsigned short port() const { return port_; }
  int accepted() const { return accepted_.load(); }

 private:
  void Accept() {
    while (!stopping_) {
      beast::error_code ec;
      tcp::socket socket(io_);
      acceptor_.accept(socket, ec);
      if (ec || stopping_) return;
      ++accepted_;
      connections_.emplace_back([this, s = std::move(socket)]() mutable { Serve(std::move(s)); });
    }
  }
  void Serve(tcp::socket socket) {
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request<bhttp::string_body> req;
      beast::error_code ec;
      bhttp::read(socket, buffer, req, ec);
      if (ec) return;
      std::this_thread::sleep_for(delay_);
      bhttp::response<bhttp::string_body> res{bhttp::status::ok, 11};
      res.body() = R"({"ok":true})";
      res.keep_alive(true);
      res.prepare_payload();
      bhttp::write(socket, res, ec);
      if (ec) return;
    }
  }

  std::chrono::milliseconds delay_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_, tcp::v4()};
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> accepted_{0};
  std::thread thread_;
  std::vector<std::thread> connections_;
};

io::asio::awaitable<Result<ClientResponse>> Get(HttpPool* pool, Millis timeout) {
  std::string method = "GET", target = "/v1/ping", body;
  std::vector<std::pair<std::string, std::string>> headers;
  co_return co_await pool->Fetch(std::move(method), std::move(target), std::move(body),
                                 std::move(headers), timeout);
}

io::asio::awaitable<std::vector<Result<ClientResponse>>> Several(HttpPool* pool, int n,
                                                                  Millis timeout) {
  std::vector<Result<ClientResponse>> out;
  for (int i = 0; i < n; ++i) out.push_back(co_await Get(pool, timeout));
  co_return out;
}

TEST(HttpPool, OneKeptAliveConnectionCarriesCallAfterCall) {
  TinyService service(std::chrono::milliseconds(0));
  HttpPool pool("127.0.0.1", service.port(), 8);  // before the loop: outlives it
  {
    LoopThread loop;
    auto answers = loop.Run(Several(&pool, 20, Millis(2'000)));
    for (const auto& a : answers) {
      ASSERT_TRUE(a.ok()) << a.status().message();
      EXPECT_EQ(a->status, 200);
      EXPECT_EQ(a->body, R"({"ok":true})");
    }
  }
  EXPECT_EQ(service.accepted(), 1);
}

TEST(HttpPool, ASlowServiceFailsTheCallWithinItsTimeout) {
  TinyService service(std::chrono::milliseconds(1'500));
  HttpPool pool("127.0.0.1", service.port(), 8);
  LoopThread loop;
  const auto started = std::chrono::steady_clock::now();
  auto r = loop.Run(Get(&pool, Millis(200)));
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1'400));
}

TEST(HttpPool, ADeadServiceFailsTheCallAtOnce) {
  const unsigned short port = testing::FreePort();  // nothing listens there
  HttpPool pool("127.0.0.1", port, 8);
  LoopThread loop;
  auto r = loop.Run(Get(&pool, Millis(2'000)));
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
}

TEST(HttpPool, PastMaxInFlightACallIsRefusedAtOnce) {
  TinyService service(std::chrono::milliseconds(800));
  HttpPool pool("127.0.0.1", service.port(), 2);
  LoopThread loop;
  std::promise<Result<ClientResponse>> p1, p2;
  auto deliver = [](io::asio::awaitable<Result<ClientResponse>> work,
                    std::promise<Result<ClientResponse>>* out) -> io::asio::awaitable<void> {
    auto r = co_await std::move(work);
    out->set_value(std::move(r));
  };
  auto f1 = p1.get_future();
  auto f2 = p2.get_future();
  io::asio::co_spawn(loop.context(), deliver(Get(&pool, Millis(5'000)), &p1), io::asio::detached);
  io::asio::co_spawn(loop.context(), deliver(Get(&pool, Millis(5'000)), &p2), io::asio::detached);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // both are in flight
  const auto started = std::chrono::steady_clock::now();
  auto third = loop.Run(Get(&pool, Millis(5'000)));
  EXPECT_EQ(third.status().code(), Code::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(500))
      << "refused at once, not queued";
  EXPECT_TRUE(f1.get().ok());
  EXPECT_TRUE(f2.get().ok());
}

// The blocking client of jobs and tools (the refund worker, the reconciler, the fake
// gateway's callbacks) is bounded too: a service that accepts and never answers used to
// hold its caller for good.
TEST(HttpFetch, ABlockingCallEndsAtItsTimeout) {
  TinyService service(std::chrono::milliseconds(1'500));
  const auto started = std::chrono::steady_clock::now();
  auto r = Fetch("127.0.0.1", service.port(), "GET", "/", "", {}, Millis(200));
  EXPECT_EQ(r.status().code(), Code::kUnavailable);
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::milliseconds(1'400));
}

TEST(HttpPool, OffTheLoopsTheCallBlocks) {
  TinyService service(std::chrono::milliseconds(0));
  HttpPool pool("127.0.0.1", service.port(), 8);
  auto r = io::RunSync(Get(&pool, Millis(2'000)));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->status, 200);
}

}  // namespace
}  // namespace boxoffice::http
