// Fuzz target: whole HTTP requests through the real service. Each input is the bytes one
// client sends on one connection (a request, several pipelined, chunked bodies, trailers,
// anything), written to the service `boxoffice serve` runs (app::Service: Beast's parser,
// our checks, the router and every handler), on an embedded SQLite store seeded with two
// showtimes, in process, with nothing outside it. The connection's answer is read until
// the service closes it or goes quiet.
//
// A gateway's callback must be signed within 5 minutes of now, which no committed input can
// be: the marker "X-Gateway-Signature: auto" is replaced by a signature, made now with the
// service's gateway secret, of everything after the head's end, so the fuzzer reaches
// settlement too.
//
// What must hold: the process lives (a throw or an assertion anywhere is a crash), and
// every connection ends with answers that are HTTP/1.1 responses, never a 5xx other than
// 503 (a dependency that did not answer in time). The dictionary
// (fuzz/routes.dict) holds the routes, a customer's, an admin's and a forged token, the
// seeded ids and ids at the edges; the committed seeds include the requests that once
// stopped the process.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "app/fake_gateway.h"
#include "app/service.h"
#include "core/gateway_signature.h"
#include "core/jwt.h"
#include "core/log.h"
#include "fuzz/fuzz_support.h"

namespace {

using namespace boxoffice;

// The tokens of fuzz/routes.dict are signed with this secret and end in 2100.
constexpr char kJwtSecret[] = "fuzz-routes-secret-fuzz-routes-secret";
constexpr char kGatewaySecret[] = "fuzz-gateway-secret";
// How long an answer may keep the connection quiet before the input is done (an event
// stream never ends by itself).
constexpr int kQuietMs = 150;

app::Service* service = nullptr;

// The fake gateway, on its own server: checkouts open real sessions.
unsigned short StartGateway(const Clock* clock) {
  static http::Router router;
  static Metrics metrics;
  static app::FakeGateway gateway(app::FakeGatewayOptions{kGatewaySecret, ""}, clock);
  gateway.Register(&router);
  http::ServerOptions options;
  options.port = 0;
  options.io_threads = 1;
  options.worker_threads = 1;
  static http::Server server(options, &router, &metrics);
  fuzz::Require(server.Start());
  return server.port();
}

NewShowtime Hall(bool forbid_gaps) {
  NewShowtime s;
  s.title = forbid_gaps ? "Gaps Forbidden" : "Fuzzing";
  s.cinema = "Odeon";
  s.hall = "Screen 1";
  s.starts_at = FromEpochMs(4'102'444'800'000);  // 2100-01-01
  s.rows = {RowLayout{"A", 10, "standard", {5}, {1, 2}}, RowLayout{"B", 10, "standard", {}, {}},
            RowLayout{"C", 6, "premium", {3}, {}}};
  s.prices = {{"standard", Price{1250, "EUR"}}, {"premium", Price{1800, "EUR"}}};
  s.forbid_single_seat_gaps = forbid_gaps;
  return s;
}

void Start() {
  SetLogLevel(LogLevel::kError);  // refusals are the common case here
  const auto dir = std::filesystem::temp_directory_path() /
                   ("boxoffice-fuzz-routes-" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  app::ServeFlags f;
  f.common.store.urls = {"sqlite:" + (dir / "fuzz.db").string()};
  f.common.jwt_secret = kJwtSecret;
  f.gateway_secret = kGatewaySecret;
  f.listen = "127.0.0.1:0";
  f.events_file = (dir / "events.jsonl").string();
  f.io_threads = 1;
  f.workers = 2;
  f.holds_per_minute = 100'000;  // the fuzzer is one customer; the limit is tested elsewhere
  static SystemClock clock;
  f.gateway_url = "http://127.0.0.1:" + std::to_string(StartGateway(&clock));
  auto opened = app::Service::Open(f, &clock);
  fuzz::Require(opened.ok());
  service = opened.value().release();  // lives as long as the process
  fuzz::Require(service->store()->CreateShowtime(Hall(false)).ok());
  fuzz::Require(service->store()->CreateShowtime(Hall(true)).ok());
  fuzz::Require(service->Start());
}

// The input with its signature marker (if any) made a real signature.
std::string Signed(std::string bytes) {
  static constexpr std::string_view kMarker = "X-Gateway-Signature: auto\r\n";
  const size_t at = bytes.find(kMarker);
  if (at == std::string::npos) return bytes;
  const size_t head_end = bytes.find("\r\n\r\n", at);
  const std::string body = head_end == std::string::npos ? "" : bytes.substr(head_end + 4);
  bytes.replace(at, kMarker.size(),
                "X-Gateway-Signature: " +
                    SignGatewayPayload(kGatewaySecret, SystemClock().Now(), body) + "\r\n");
  return bytes;
}

// Whatever the service answers until it closes the connection or goes quiet.
std::string Exchange(const std::string& input) {
  const auto* data = reinterpret_cast<const uint8_t*>(input.data());
  const size_t size = input.size();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  fuzz::Require(fd >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(service->port());
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  fuzz::Require(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  std::string answer;
  char buf[16 * 1024];
  size_t sent = 0;
  bool write_open = true;
  for (;;) {
    pollfd p{fd, static_cast<short>(POLLIN | (write_open ? POLLOUT : 0)), 0};
    if (poll(&p, 1, kQuietMs) <= 0) break;
    if (p.revents & POLLOUT) {
      const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += static_cast<size_t>(n);
      if (n < 0 || sent == size) {
        shutdown(fd, SHUT_WR);  // the client is done: the service answers and closes
        write_open = false;
      }
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n <= 0) break;
      answer.append(buf, static_cast<size_t>(n));
    }
  }
  // Closed with a reset: tens of thousands of connections a minute would otherwise leave
  // as many ports in TIME_WAIT and run out of them.
  const linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  return answer;
}

// Every status line of the answer: HTTP/1.1 and a status the service may give. (A chunk of
// an event stream could hold such text; the stream's own lines start with "data:" or ":".)
void CheckAnswers(const std::string& answer) {
  for (size_t at = answer.find("HTTP/1.1 "); at != std::string::npos;
       at = answer.find("HTTP/1.1 ", at + 1)) {
    if (at + 12 > answer.size()) break;
    const int status = std::atoi(answer.substr(at + 9, 3).c_str());
    fuzz::Require(status >= 100 && status <= 599);
    fuzz::Require(status < 500 || status == 503);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  Start();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  CheckAnswers(Exchange(Signed(std::string(reinterpret_cast<const char*>(data), size))));
  return 0;
}
