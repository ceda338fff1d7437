// The HTTP server in process, spoken to with raw bytes over loopback: what RFC 9110/9112 and
// API.md's Conventions ask of a server that may sit behind any proxy. Request smuggling
// (a Transfer-Encoding other than chunked, both framings) is refused and the connection
// closed before anything is read as a second request; Host must be single; headers that
// must be single are; HEAD works on every GET route; If-None-Match understands lists, weak
// tags and *; Expect: 100-continue is answered before the body; query text is clean UTF-8;
// and an event stream's slot is freed the moment its client goes away.
#include "http/server.h"

#include <gtest/gtest.h>

// clang-format off
#include <utility>
#include <boost/asio.hpp>
// clang-format on
#include <atomic>
#include <chrono>
#include <thread>

#include "support/http_client.h"

namespace boxoffice::http {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

// A stream that says nothing and counts how many of its kind are alive.
class SilentStream final : public BodyStream {
 public:
  explicit SilentStream(std::atomic<int>* alive) : alive_(alive) { alive_->fetch_add(1); }
  ~SilentStream() override { alive_->fetch_sub(1); }
  void Attach(std::function<void()>) override {}
  bool Pull(std::string* out) override {
    *out += first_ ? "retry: 2000\n\n" : "";
    first_ = false;
    return true;
  }
  std::string Heartbeat() const override { return ": heartbeat\n\n"; }

 private:
  std::atomic<int>* alive_;
  bool first_ = true;
};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    router_.Add("GET", "/thing", [](Request& r) {
      Response res;
      res.body = R"({"thing":true})";
      res.Header("ETag", "\"abc\"");
      if (auto q = r.QueryParam("q")) res.body = "{\"q\":\"" + *q + "\"}";
      return res;
    });
    router_.Add("POST", "/echo", [this](Request& r) {
      posts_.fetch_add(1);
      Response res;
      res.body = r.body;
      return res;
    });
    router_.Add("GET", "/throws", [](Request&) -> Response { throw 42; },
                /*blocking=*/false);
    router_.Add("GET", "/stream", [this](Request&) {
      Response res;
      res.content_type = "text/event-stream";
      res.stream = std::make_shared<SilentStream>(&streams_alive_);
      return res;
    });
    ServerOptions o;
    o.port = 0;
    o.io_threads = 1;
    o.worker_threads = 2;
    o.stream_heartbeat = Millis(60'000);  // far longer than any wait below
    server_ = std::make_unique<Server>(o, &router_, &metrics_);
    ASSERT_TRUE(server_->Start());
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }
  std::string Raw(const std::string& bytes) { return testing::RawExchange(server_->port(), bytes); }
  static int Responses(const std::string& text) {
    int n = 0;
    for (size_t pos = text.find("HTTP/1.1 "); pos != std::string::npos;
         pos = text.find("HTTP/1.1 ", pos + 1)) {
      ++n;
    }
    return n;
  }

  Router router_;
  Metrics metrics_;
  std::unique_ptr<Server> server_;
  std::atomic<int> posts_{0};
  std::atomic<int> streams_alive_{0};
};

const std::string kSmuggled = "GET /thing HTTP/1.1\r\nHost: x\r\n\r\n";

TEST_F(ServerTest, TransferEncodingsOtherThanChunkedAloneAreRefusedAndTheConnectionClosed) {
  for (const char* coding : {"identity", "gzip", "xchunked", "chunked, gzip", "gzip, chunked",
                             "chunked, chunked", "chunked;x=1", ""}) {
    SCOPED_TRACE(coding);
    const std::string answer = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: " +
                                   std::string(coding) + "\r\n\r\n" + kSmuggled);
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
    EXPECT_EQ(Responses(answer), 1) << "the rest was read as another request:\n" << answer;
  }
  // Both framings at once, however they agree.
  const std::string both = Raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n"
      "0\r\n\r\n" + kSmuggled);
  EXPECT_EQ(both.rfind("HTTP/1.1 400", 0), 0u) << both;
  EXPECT_EQ(Responses(both), 1) << both;
  // Two different lengths.
  const std::string lengths = Raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 4\r\n\r\n{}{}" +
      kSmuggled);
  EXPECT_EQ(lengths.rfind("HTTP/1.1 400", 0), 0u) << lengths;
  EXPECT_EQ(Responses(lengths), 1) << lengths;
  EXPECT_EQ(posts_.load(), 0) << "no refused request reached a handler";
  // Chunked alone is fine, and keep-alive goes on after it.
  const std::string chunked = Raw(
      "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
      "GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(Responses(chunked), 2) << chunked;
  EXPECT_EQ(posts_.load(), 1);
}

TEST_F(ServerTest, HostMustBeThereExactlyOnce) {
  EXPECT_EQ(Raw("GET /thing HTTP/1.1\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 400", 0), 0u);
  EXPECT_EQ(Raw("GET /thing HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n")
                .rfind("HTTP/1.1 400", 0),
            0u);
  EXPECT_EQ(Raw("GET /thing HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 200", 0),
            0u);
  // HTTP/1.0 may leave it out.
  EXPECT_EQ(Raw("GET /thing HTTP/1.0\r\n\r\n").rfind("HTTP/1.1 200", 0), 0u);
}

TEST_F(ServerTest, HeadersThatMustBeSingleAreRefusedTwice) {
  for (const char* name : {"Authorization", "Idempotency-Key", "X-Admission-Token"}) {
    SCOPED_TRACE(name);
    const std::string answer = Raw("POST /echo HTTP/1.1\r\nHost: x\r\n" + std::string(name) +
                                   ": a\r\n" + name + ": a\r\nContent-Length: 2\r\n\r\n{}");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << answer;
  }
  EXPECT_EQ(posts_.load(), 0);
}

TEST_F(ServerTest, HeadWorksOnEveryGetRoute) {
  const std::string head = Raw("HEAD /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(head.rfind("HTTP/1.1 200", 0), 0u) << head;
  EXPECT_NE(head.find("Content-Length: 14\r\n"), std::string::npos) << head;
  EXPECT_NE(head.find("ETag: \"abc\""), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "") << "HEAD has no body";
  // Keep-alive goes on after a HEAD: the next answer is not mistaken for a body.
  const std::string two = Raw(
      "HEAD /thing HTTP/1.1\r\nHost: x\r\n\r\nGET /thing HTTP/1.1\r\nHost: x\r\nConnection: "
      "close\r\n\r\n");
  EXPECT_EQ(Responses(two), 2) << two;
  // A stream route answers HEAD with its head only.
  const std::string stream = Raw("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(stream.rfind("HTTP/1.1 200", 0), 0u) << stream;
  EXPECT_NE(stream.find("text/event-stream"), std::string::npos) << stream;
  const std::string post_only = Raw("HEAD /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(post_only.rfind("HTTP/1.1 405", 0), 0u) << post_only;
  const std::string wrong = Raw("PUT /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(wrong.find("Allow: GET, HEAD\r\n"), std::string::npos) << wrong;
}

TEST(IfNoneMatch, ListsWeakTagsAndStar) {
  struct Case {
    const char* header;
    bool hit;
  } cases[] = {
      {"\"abc\"", true},       {"W/\"abc\"", true},          {"\"x\", \"abc\"", true},
      {"\"x\",W/\"abc\"", true}, {"*", true},                 {"\"abcd\"", false},
      {"\"x\", \"y\"", false}, {"", false},                   {"abc", false},
      {" \"abc\" ", true},     {"W/\"ab\", W/\"abc\"", true},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(IfNoneMatchHits(c.header, "\"abc\""), c.hit) << c.header;
  }
  EXPECT_TRUE(IfNoneMatchHits("\"abc\"", "W/\"abc\"")) << "weak comparison both ways";
}

// Sends the head, reads what comes before the body is sent, then sends the body.
std::pair<std::string, std::string> ExpectExchange(unsigned short port, const std::string& head,
                                                   const std::string& body) {
  asio::io_context ioc;
  tcp::socket socket(ioc);
  socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
  asio::write(socket, asio::buffer(head));
  std::string interim(256, '\0');
  boost::system::error_code ec;
  interim.resize(socket.read_some(asio::buffer(interim), ec));
  std::string final_answer;
  if (!ec && interim.rfind("HTTP/1.1 100", 0) == 0) {
    asio::write(socket, asio::buffer(body), ec);
    char buf[4096];
    for (;;) {
      const size_t n = socket.read_some(asio::buffer(buf), ec);
      final_answer.append(buf, n);
      if (ec) break;
    }
  }
  return {interim, final_answer};
}

TEST_F(ServerTest, ExpectContinueIsAnsweredBeforeTheBody) {
  auto [interim, answer] = ExpectExchange(
      server_->port(),
      "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 7\r\n"
      "Connection: close\r\n\r\n",
      R"({"a":1})");
  EXPECT_EQ(interim, "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 200", 0), 0u) << answer;
  EXPECT_NE(answer.find(R"({"a":1})"), std::string::npos) << answer;
  // A body too large gets its final answer instead, with no 100 first.
  auto [refused, none] = ExpectExchange(
      server_->port(),
      "POST /echo HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 999999\r\n\r\n",
      "");
  EXPECT_EQ(refused.rfind("HTTP/1.1 413", 0), 0u) << refused;
  const std::string odd =
      Raw("POST /echo HTTP/1.1\r\nHost: x\r\nExpect: something\r\nContent-Length: 2\r\n\r\n{}");
  EXPECT_EQ(odd.rfind("HTTP/1.1 417", 0), 0u) << odd;
  EXPECT_EQ(posts_.load(), 1);
}

TEST_F(ServerTest, QueryTextMustBeCleanUtf8) {
  for (const char* q : {"%ff", "%00", "a%C0%AF", "%ED%A0%80", "%F4%90%80%80"}) {
    const std::string answer =
        Raw("GET /thing?q=" + std::string(q) + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 400", 0), 0u) << q << "\n" << answer;
  }
  const std::string ok =
      Raw("GET /thing?q=%C3%A9t%C3%A9 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200", 0), 0u) << ok;
}

TEST_F(ServerTest, AStreamIsFreedTheMomentItsClientGoesAway) {
  for (int round = 0; round < 20; ++round) {
    {
      asio::io_context ioc;
      tcp::socket socket(ioc);
      socket.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
      asio::write(socket, asio::buffer(std::string("GET /stream HTTP/1.1\r\nHost: x\r\n\r\n")));
      char buf[512];
      socket.read_some(asio::buffer(buf));  // the head: the stream is open
      EXPECT_EQ(streams_alive_.load(), 1);
    }  // closed here
    const auto deadline = std::chrono::steady_clock::now() + 3s;
    while (streams_alive_.load() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    ASSERT_EQ(streams_alive_.load(), 0) << "round " << round << ": the slot outlived its client";
  }
}

// A trailer field larger than Beast's field size (65,535 bytes) made its parser throw
// std::length_error, which nothing caught: the whole process ended. Trailers count toward
// the header limit (431), and the server still answers the next connection.
TEST_F(ServerTest, AHugeChunkedTrailerIsRefusedAndTheServerLivesOn) {
  for (const bool in_name : {false, true}) {
    SCOPED_TRACE(in_name ? "name" : "value");
    const std::string big(65'540, 'a');
    const std::string trailer = in_name ? big + ": x" : "X-T: " + big;
    const std::string answer = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                   "2\r\n{}\r\n0\r\n" + trailer + "\r\n\r\n");
    EXPECT_EQ(answer.rfind("HTTP/1.1 431", 0), 0u) << answer.substr(0, 200);
    EXPECT_EQ(Raw("GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 200", 0),
              0u);
  }
  // A trailer that fits alone but not with the header is refused too.
  const std::string header_pad(9'000, 'h');
  const std::string trailer_pad(9'000, 't');
  const std::string both = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nX-Pad: " + header_pad +
                               "\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\nX-T: " +
                               trailer_pad + "\r\n\r\n");
  EXPECT_EQ(both.rfind("HTTP/1.1 431", 0), 0u) << both.substr(0, 200);
  // A small trailer is fine.
  const std::string small = Raw("POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                                "Connection: close\r\n\r\n"
                                "2\r\n{}\r\n0\r\nX-T: 1\r\n\r\n");
  EXPECT_EQ(small.rfind("HTTP/1.1 200", 0), 0u) << small;
}

// A throw that escapes a handler or Beast ends that connection (answered 500 when it can be),
// never the process, and is counted.
TEST_F(ServerTest, AThrowInOneConnectionNeverEndsTheProcess) {
  const std::string answer = Raw("GET /throws HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(answer.rfind("HTTP/1.1 500", 0), 0u) << answer;
  EXPECT_EQ(Raw("GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").rfind("HTTP/1.1 200", 0),
            0u);
}

// RFC 9112 3.2: origin-form and absolute-form targets are served; "*" only with OPTIONS; a
// target over 8 KiB is 414, however long (a 100 KB one too, beyond the header limit).
TEST_F(ServerTest, RequestTargetsByTheLetter) {
  auto status_of = [](const std::string& answer) { return answer.substr(0, 12); };
  EXPECT_EQ(status_of(Raw("GET http://x/thing?q=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 200");
  EXPECT_NE(Raw("GET HTTP://X:80/thing?q=abc HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                .find("{\"q\":\"abc\"}"),
            std::string::npos);
  EXPECT_EQ(status_of(Raw("GET * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")), "HTTP/1.1 400");
  EXPECT_EQ(status_of(Raw("OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 204");
  EXPECT_EQ(status_of(Raw("GET thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 400");
  EXPECT_EQ(status_of(Raw("GET ftp://x/thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 400");
  const std::string long_query(9'000, 'q');
  EXPECT_EQ(status_of(Raw("GET /thing?" + long_query + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 414");
  const std::string huge(100'000, 'q');
  EXPECT_EQ(status_of(Raw("GET /thing?" + huge + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")),
            "HTTP/1.1 414");
  // A long header (not the target) is still 431.
  const std::string pad(20'000, 'h');
  EXPECT_EQ(status_of(Raw("GET /thing HTTP/1.1\r\nHost: x\r\nX-Pad: " + pad + "\r\n\r\n")),
            "HTTP/1.1 431");
}

// Host is uri-host [":" port] (RFC 9110 7.2, RFC 3986 3.2.2); empty or anything else is 400.
TEST_F(ServerTest, HostMustBeAValidHostAndPort) {
  auto status_of = [this](const std::string& host) {
    return Raw("GET /thing HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n").substr(0, 12);
  };
  for (const char* good : {"x", "example.com", "example.com:8080", "127.0.0.1:80", "[::1]:8080",
                           "[::1]", "a-b.c_d~e", "xn--bcher-kva.example"}) {
    EXPECT_EQ(status_of(good), "HTTP/1.1 200") << good;
  }
  for (const char* bad : {"", " ", "a b", "exa/mple", "host:port", "host:99999", "[::1", "a@b",
                          "host:80:80", "ex%zzample", "[zz::1]"}) {
    EXPECT_EQ(status_of(bad), "HTTP/1.1 400") << "'" << bad << "'";
  }
}

TEST_F(ServerTest, EveryResponseSaysNoSniff) {
  for (const std::string& request :
       {std::string("GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        std::string("GET /nothing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
        std::string("GET /thing HTTP/1.1\r\nConnection: close\r\n\r\n"),
        std::string("HEAD /stream HTTP/1.1\r\nHost: x\r\n\r\n")}) {
    const std::string answer = Raw(request);
    EXPECT_NE(answer.find("X-Content-Type-Options: nosniff\r\n"), std::string::npos) << answer;
  }
}

}  // namespace
}  // namespace boxoffice::http
