// boxoffice-bench: an HTTP/1.1 load generator on Asio, keep-alive over many connections.
//
//   boxoffice-bench get --port 8080 --path /showtimes/1/seats --connections 64 --seconds 10
//                       [--host 127.0.0.1] [--threads 2] [--name seatmap] [--header 'K: V']...
//
// Closed loop: each connection sends a request, reads the whole response (the head parsed,
// the body skipped), and sends the next, so the same client at the same concurrency can be pointed
// at boxoffice and at a reference server (nginx) and the two rates compared. Latency goes into a
// log-linear histogram (about 1.5% precision) per thread, merged at the end. Prints one
// machine-readable line:
//   result NAME requests=… rps=… p50_ms=… p90_ms=… p99_ms=… p999_ms=… max_ms=… errors=…
//          status_200=… …
// A connection that fails is counted as an error and opened again.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

// Log-linear histogram of microseconds: 64 sub-buckets per power of two.
class Histogram {
 public:
  static constexpr int kSub = 64;
  void Record(uint64_t us) {
    ++counts_[Index(us)];
    ++total_;
    max_ = std::max(max_, us);
  }
  void Merge(const Histogram& o) {
    for (size_t i = 0; i < counts_.size(); ++i) counts_[i] += o.counts_[i];
    total_ += o.total_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t total() const { return total_; }
  uint64_t max() const { return max_; }
  // The value at quantile q (upper edge of its bucket).
  uint64_t Quantile(double q) const {
    if (total_ == 0) return 0;
    const uint64_t want = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_)));
    uint64_t seen = 0;
    for (size_t i = 0; i < counts_.size(); ++i) {
      seen += counts_[i];
      if (seen >= want) return std::min(UpperEdge(i), max_);
    }
    return max_;
  }

 private:
  static size_t Index(uint64_t v) {
    if (v < kSub) return static_cast<size_t>(v);
    const int exp = 63 - __builtin_clzll(v) - 5;  // v >> exp is in [32, 64)
    return static_cast<size_t>(exp * 32 + static_cast<int>(v >> exp));
  }
  static uint64_t UpperEdge(size_t i) {
    if (i < kSub) return i;
    const int exp = static_cast<int>(i / 32) - 1;
    const uint64_t mant = i % 32 + 32;
    return ((mant + 1) << exp) - 1;
  }
  std::array<uint64_t, 64 * 32> counts_{};
  uint64_t total_ = 0;
  uint64_t max_ = 0;
};

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  std::string path = "/";
  std::vector<std::string> headers;
  int connections = 64;
  int threads = 2;
  double seconds = 10;
  std::string name = "get";
};

struct Worker {
  asio::io_context io{1};
  Histogram latency;
  uint64_t errors = 0;
  std::map<int, uint64_t> statuses;
};

// A response's head: status, body length and whether the server keeps the connection.
struct Head {
  int status = 0;
  size_t header_bytes = 0;
  size_t content_length = 0;
  bool close = false;
};

// Parses the head once "\r\n\r\n" is in [data, data + n); nullopt while incomplete, and
// status 0 for something that is not an HTTP/1.1 response with a Content-Length.
std::optional<Head> ParseHead(const char* data, size_t n) {
  const std::string_view text(data, n);
  const size_t end = text.find("\r\n\r\n");
  if (end == std::string_view::npos) return std::nullopt;
  Head h;
  h.header_bytes = end + 4;
  if (text.size() < 12 || text.substr(0, 5) != "HTTP/") return h;
  h.status = std::atoi(std::string(text.substr(9, 3)).c_str());
  bool has_length = false;
  size_t pos = text.find("\r\n") + 2;
  while (pos < end) {
    const size_t eol = text.find("\r\n", pos);
    std::string line(text.substr(pos, eol - pos));
    for (auto& c : line) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (line.rfind("content-length:", 0) == 0) {
      h.content_length = std::strtoull(line.c_str() + 15, nullptr, 10);
      has_length = true;
    } else if (line.rfind("connection:", 0) == 0 && line.find("close") != std::string::npos) {
      h.close = true;
    }
    pos = eol + 2;
  }
  if (!has_length && h.status != 204 && h.status != 304) h.status = 0;
  return h;
}

// One keep-alive connection, request after request, until `end`. The client reads the
// head and skips the body without copying it, so it stays cheaper than the servers it
// measures (a Beast parser that kept each body cost as much as serving it).
asio::awaitable<void> Connection(Worker& w, const Options& o, const std::string& request,
                                 Clock::time_point start, Clock::time_point end) {
  auto executor = co_await asio::this_coro::executor;
  const tcp::endpoint endpoint(asio::ip::make_address(o.host), o.port);
  std::vector<char> buffer(256 * 1024);
  while (Clock::now() < end) {
    tcp::socket socket(executor);
    beast::error_code ec;
    co_await socket.async_connect(endpoint, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) {
      ++w.errors;
      asio::steady_timer pause(executor, std::chrono::milliseconds(10));
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    socket.set_option(tcp::no_delay(true));
    size_t have = 0;  // bytes in buffer not yet consumed
    bool failed = false;
    while (Clock::now() < end && !failed) {
      const auto t0 = Clock::now();
      co_await asio::async_write(socket, asio::buffer(request),
                                 asio::redirect_error(asio::use_awaitable, ec));
      if (ec) {
        failed = true;
        break;
      }
      std::optional<Head> head;
      while (!(head = ParseHead(buffer.data(), have))) {
        if (have == buffer.size()) break;
        const size_t n = co_await socket.async_read_some(
            asio::buffer(buffer.data() + have, buffer.size() - have),
            asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
        have += n;
      }
      if (!head || head->status == 0) {
        failed = true;
        break;
      }
      // Skip the body: what is buffered, then whatever is still to come.
      size_t body_left = head->content_length;
      const size_t buffered = std::min(body_left, have - head->header_bytes);
      body_left -= buffered;
      const size_t consumed = head->header_bytes + buffered;
      std::memmove(buffer.data(), buffer.data() + consumed, have - consumed);
      have -= consumed;
      while (body_left > 0) {
        const size_t n = co_await socket.async_read_some(
            asio::buffer(buffer.data(), std::min(buffer.size(), body_left)),
            asio::redirect_error(asio::use_awaitable, ec));
        if (ec) break;
        body_left -= n;
      }
      if (ec) {
        failed = true;
        break;
      }
      const auto t1 = Clock::now();
      if (t0 >= start) {
        w.latency.Record(static_cast<uint64_t>(
            std::chrono::duration_cast<std::chrono::microseconds>(t1 - t0).count()));
        ++w.statuses[head->status];
      }
      if (head->close) break;
    }
    if (failed && Clock::now() < end) ++w.errors;
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }
}

int Usage() {
  std::fprintf(stderr,
               "usage: boxoffice-bench get --port PORT --path PATH [--host H] [--connections N]\n"
               "                           [--threads N] [--seconds S] [--name NAME]\n"
               "                           [--header 'Name: value']...\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "get") != 0) return Usage();
  Options o;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--host") {
      o.host = value;
    } else if (flag == "--port") {
      o.port = static_cast<unsigned short>(std::atoi(value.c_str()));
    } else if (flag == "--path") {
      o.path = value;
    } else if (flag == "--header") {
      o.headers.push_back(value);
    } else if (flag == "--connections") {
      o.connections = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--threads") {
      o.threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--seconds") {
      o.seconds = std::atof(value.c_str());
    } else if (flag == "--name") {
      o.name = value;
    } else {
      return Usage();
    }
  }
  std::string request = "GET " + o.path + " HTTP/1.1\r\nHost: " + o.host + "\r\n";
  for (const auto& h : o.headers) request += h + "\r\n";
  request += "\r\n";

  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < o.threads; ++t) workers.push_back(std::make_unique<Worker>());
  // A short warm-up (not recorded), then the measured window.
  const auto start = Clock::now() + std::chrono::milliseconds(500);
  const auto end = start + std::chrono::microseconds(static_cast<int64_t>(o.seconds * 1e6));
  for (int c = 0; c < o.connections; ++c) {
    Worker& w = *workers[static_cast<size_t>(c % o.threads)];
    asio::co_spawn(w.io, Connection(w, o, request, start, end), asio::detached);
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->io.run(); });
  for (auto& t : threads) t.join();

  Histogram all;
  uint64_t errors = 0;
  std::map<int, uint64_t> statuses;
  for (auto& w : workers) {
    all.Merge(w->latency);
    errors += w->errors;
    for (auto [status, n] : w->statuses) statuses[status] += n;
  }
  auto ms = [](uint64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf(
      "result %s requests=%llu rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f p999_ms=%.2f "
      "max_ms=%.2f errors=%llu",
      o.name.c_str(), static_cast<unsigned long long>(all.total()),
      static_cast<double>(all.total()) / o.seconds, ms(all.Quantile(0.5)), ms(all.Quantile(0.9)),
      ms(all.Quantile(0.99)), ms(all.Quantile(0.999)), ms(all.max()),
      static_cast<unsigned long long>(errors));
  for (auto [status, n] : statuses)
    std::printf(" status_%d=%llu", status, static_cast<unsigned long long>(n));
  std::printf(" connections=%d\n", o.connections);
  return errors > 0 && all.total() == 0 ? 1 : 0;
}
