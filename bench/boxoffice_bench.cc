// boxoffice-bench: an HTTP/1.1 load generator on Asio, keep-alive over many connections.
//
//   boxoffice-bench get --port 8080 --path /showtimes/1/seats --connections 64 --seconds 10
//                       [--rate N] [--host 127.0.0.1] [--threads 2] [--name seatmap]
//                       [--header 'K: V']... [--accept-encoding 'gzip, br'|none]
//   boxoffice-bench holdstorm --port 8080 --showtime 1 --secret JWT_SECRET --connections 64
//                       [--showtimes 1] [--seconds 60] [--max-seats 8] [--min-seats 1]
//                       [--best N] [--take-alternatives 1] [--threads 2]
//                       [--rate ATTEMPTS_PER_S] [--name holdstorm]
//
// `get` is closed loop by default: each connection sends a request, reads the whole
// response (the head parsed, the body skipped), and sends the next, so the same client at
// the same concurrency can be pointed at boxoffice and at a reference server (nginx) and
// the rates compared. With --rate it is open loop: requests are due at a fixed total rate
// spread over the connections, and each latency is measured from when its request was due,
// so a server that falls behind is not hidden by the client waiting for it (coordinated
// omission).
//
// `holdstorm` is the premiere's hold storm on one showtime: each connection reads the seat
// map, picks 1..max-seats adjacent AVAILABLE seats in a random row, and POSTs a hold, until
// the map shows no AVAILABLE seat, then goes on to the next of --showtimes consecutive ids,
// until all are sold out or --seconds pass. Every attempt is made by a new
// customer (a token signed with --secret), so the per-customer limits (rate limit,
// HOLD_LIMIT) stay out of the measurement; winners keep their seats, so the hall sells out.
// With --best N every attempt asks the service for the best N seats instead (API.md's best
// available), and its first 409 ends the showtime (no block of N left).
// With --rate, attempts are due at that total rate (open loop), and NAME_attempt reports
// each attempt's latency from when it was due to the hold's answer.
//
// `premiere` sells --showtimes whole: each connection is a customer who reads the map,
// holds, checks out, pays at the gateway and polls the booking until CONFIRMED, then the
// next customer. With --rate, customers are due at that total rate (open loop).
//
// Every GET says `Accept-Encoding: gzip, br` as browsers do (--accept-encoding: another
// list, or none), and a coded body that is read (a map a hold is picked from) is decoded;
// each route's result line says its bytes per response (head and body as received).
//
// Latency goes into a log-linear histogram (about 1.5% precision) per thread and route,
// merged at the end. Output is machine-readable lines:
//   result NAME requests=… rps=… p50_ms=… p90_ms=… p99_ms=… p999_ms=… max_ms=… errors=…
//          status_200=… …
//   latency NAME 0=… 20.57=… … 99.99=… 100=…   (milliseconds at percentiles, for plots)
// A connection that fails is counted as an error and opened again.
// clang-format off
#include <utility>
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <strings.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "bench/histogram.h"
#include "bench/report.h"
#include "core/clock.h"
#include "core/jwt.h"
#include "http/encoding.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

using boxoffice::bench::Histogram;

struct Options {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;
  std::string path = "/";
  std::vector<std::string> headers;
  std::string accept_encoding = "gzip, br";  // sent with every GET; empty: not sent
  int connections = 64;
  int threads = 2;
  double seconds = 10;
  double rate = 0;  // get: requests per second in all (0: closed loop)
  std::string name;
  int64_t showtime = 0;  // holdstorm: the first showtime
  int showtimes = 1;     // holdstorm: sold out one after another: showtime .. showtime+N-1
  // --showtime-ids A,B,…: these showtimes instead of consecutive ids (shards interleave).
  std::vector<int64_t> showtime_ids;
  std::string secret;  // holdstorm: signs the customers' tokens
  int max_seats = 8;   // holdstorm, premiere
  int min_seats = 1;   // holdstorm: a hold by hand asks min_seats … max_seats adjacent seats
  // holdstorm --best N: every attempt asks "best N" of category standard instead of picking
  // by hand; a 409 then means no block is left (the storm takes nothing back), so the
  // showtime counts as sold out for it, whatever single seats stay.
  int best = 0;
  // holdstorm --take-alternatives: a hold by hand refused with 409 takes the first block the
  // service offered (`alternatives`) at once, as the seat picker's one click does; a 409
  // offering none means no block of that size is left, and the showtime counts as sold out.
  bool take_alternatives = false;
  // premiere
  unsigned short gateway_port = 0;
  int map_reads = 30;  // seat-map reads per hold attempt
  // --until-booked 1: a showtime is sold out only when every seat is BOOKED. Held seats may
  // still come back (a purchase cut short by a fault: its hold expires), so they are
  // waited for rather than counted as sold.
  bool until_booked = false;
  // premiere --live 1: each customer reads the map once and follows the showtime's seat
  // changes on its stream (as the seat picker does), holding from that view; a lost hold
  // is tried again from the view (its seats' change arrives), not after reading the map.
  bool live = false;
};

// The index-th showtime on sale.
std::string ShowtimeAt(const Options& o, int index) {
  if (!o.showtime_ids.empty()) return std::to_string(o.showtime_ids.at(static_cast<size_t>(index)));
  return std::to_string(o.showtime + index);
}

// What one thread measured: latency and statuses per route.
struct Worker {
  asio::io_context io{1};
  std::map<std::string, Histogram> latency;
  std::map<std::string, std::map<int, uint64_t>> statuses;
  std::map<std::string, uint64_t> bytes;  // per route, head and body as received
  uint64_t errors = 0;
  // holdstorm
  uint64_t seats_won = 0;
  uint64_t alternatives_taken = 0;  // --take-alternatives: second attempts on an offer
  // premiere: customers whose purchase started, and those whose booking was confirmed
  uint64_t customers = 0;
  uint64_t purchases = 0;
  std::mt19937_64 rng{std::random_device{}()};
};

// A response's head: status, body length and whether the server keeps the connection.
struct Head {
  int status = 0;
  size_t header_bytes = 0;
  size_t content_length = 0;
  bool close = false;
  boxoffice::http::Encoding coding = boxoffice::http::Encoding::kIdentity;
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
  auto starts = [](std::string_view line, std::string_view name) {
    return line.size() >= name.size() && strncasecmp(line.data(), name.data(), name.size()) == 0;
  };
  while (pos < end) {
    const size_t eol = text.find("\r\n", pos);
    const std::string_view line = text.substr(pos, eol - pos);
    if (starts(line, "content-length:")) {
      h.content_length = std::strtoull(line.data() + 15, nullptr, 10);
      has_length = true;
    } else if (starts(line, "connection:") && line.find("close") != std::string_view::npos) {
      h.close = true;
    } else if (starts(line, "content-encoding:")) {
      const std::string_view value = line.substr(17);
      if (value.find("br") != std::string_view::npos) {
        h.coding = boxoffice::http::Encoding::kBrotli;
      } else if (value.find("gzip") != std::string_view::npos) {
        h.coding = boxoffice::http::Encoding::kGzip;
      }
    }
    pos = eol + 2;
  }
  if (!has_length && h.status != 204 && h.status != 304) h.status = 0;
  return h;
}

// One keep-alive connection to the server, opened again after any failure.
class Conn {
 public:
  Conn(asio::any_io_executor executor, tcp::endpoint endpoint)
      : socket_(executor), endpoint_(endpoint), buffer_(256 * 1024) {}

  // Sends `request` and reads the response; its status, or 0 on failure (the connection is
  // then closed, and the next call opens a new one). The body is kept in *body when given
  // (decoded if it came coded; one that does not decode is a failure), else skipped without
  // a copy.
  asio::awaitable<int> Exchange(const std::string& request, std::string* body) {
    beast::error_code ec;
    if (!socket_.is_open()) {
      co_await socket_.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return Fail();
      socket_.set_option(tcp::no_delay(true));
      have_ = 0;
    }
    co_await asio::async_write(socket_, asio::buffer(request),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return Fail();
    std::optional<Head> head;
    while (!(head = ParseHead(buffer_.data(), have_))) {
      if (have_ == buffer_.size()) co_return Fail();
      const size_t n = co_await socket_.async_read_some(
          asio::buffer(buffer_.data() + have_, buffer_.size() - have_),
          asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return Fail();
      have_ += n;
    }
    if (head->status == 0) co_return Fail();
    size_t body_left = head->content_length;
    const size_t buffered = std::min(body_left, have_ - head->header_bytes);
    if (body) body->assign(buffer_.data() + head->header_bytes, buffered);
    body_left -= buffered;
    const size_t consumed = head->header_bytes + buffered;
    std::memmove(buffer_.data(), buffer_.data() + consumed, have_ - consumed);
    have_ -= consumed;
    while (body_left > 0) {
      const size_t n = co_await socket_.async_read_some(
          asio::buffer(buffer_.data(), std::min(buffer_.size(), body_left)),
          asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return Fail();
      if (body) body->append(buffer_.data(), n);
      body_left -= n;
    }
    if (head->close) Close();
    last_bytes_ = head->header_bytes + head->content_length;
    if (body && head->coding != boxoffice::http::Encoding::kIdentity) {
      auto decoded = boxoffice::http::Decompress(head->coding, *body);
      if (!decoded) co_return Fail();
      *body = std::move(*decoded);
    }
    co_return head->status;
  }

  // The bytes of the last response (head and body, as received).
  size_t last_bytes() const { return last_bytes_; }

  void Close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  int Fail() {
    Close();
    return 0;
  }
  tcp::socket socket_;
  tcp::endpoint endpoint_;
  std::vector<char> buffer_;
  size_t have_ = 0;
  size_t last_bytes_ = 0;
};

uint64_t Micros(Clock::duration d) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// `get`: closed loop, or open loop at interval (connections / rate) per connection.
asio::awaitable<void> GetLoop(Worker& w, const Options& o, const std::string& request,
                              Clock::time_point start, Clock::time_point end,
                              Clock::duration interval, Clock::time_point first_due) {
  auto executor = co_await asio::this_coro::executor;
  Conn conn(executor, tcp::endpoint(asio::ip::make_address(o.host), o.port));
  asio::steady_timer timer(executor);
  Clock::time_point due = first_due;
  Histogram& latency = w.latency[o.name];
  auto& statuses = w.statuses[o.name];
  uint64_t& bytes = w.bytes[o.name];
  while (Clock::now() < end) {
    if (interval.count() > 0) {
      if (due > Clock::now()) {
        timer.expires_at(due);
        beast::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      if (due >= end) break;
    }
    const auto t0 = interval.count() > 0 ? due : Clock::now();
    const int status = co_await conn.Exchange(request, nullptr);
    due += interval;
    if (t0 < start) continue;
    if (status == 0) {
      ++w.errors;
      continue;
    }
    latency.Record(Micros(Clock::now() - t0));
    ++statuses[status];
    bytes += conn.last_bytes();
  }
  conn.Close();
}

// The AVAILABLE seats of a seat map body, by row: {"category":…,"code":"F5",…,"status":…}.
// One pass with Boyer-Moore-Horspool over the 23 KB body, no allocation per seat: read
// before every hold, it is the load generator's hottest code.
std::map<std::string, std::vector<int>> FreeSeats(const std::string& body) {
  static constexpr std::string_view kCode = "\"code\":\"", kStatus = "\"status\":\"";
  static const std::boyer_moore_horspool_searcher find_code(kCode.begin(), kCode.end());
  static const std::boyer_moore_horspool_searcher find_status(kStatus.begin(), kStatus.end());
  std::map<std::string, std::vector<int>> free;
  const char* p = body.data();
  const char* const end = body.data() + body.size();
  std::string_view last_row;
  std::vector<int>* numbers = nullptr;
  for (;;) {
    const char* code = find_code(p, end).second;
    if (code == end) break;
    const char* code_end = std::find(code, end, '"');
    p = find_status(code_end, end).second;
    if (p == end) break;
    if (end - p < 9 || std::memcmp(p, "AVAILABLE", 9) != 0) continue;
    const char* digit = code;
    while (digit < code_end && !std::isdigit(static_cast<unsigned char>(*digit))) ++digit;
    if (digit == code || digit == code_end) continue;
    const std::string_view row(code, static_cast<size_t>(digit - code));
    if (!numbers || row != last_row) {
      numbers = &free[std::string(row)];
      last_row = row;
    }
    numbers->push_back(std::atoi(digit));
  }
  for (auto& [row, seats] : free) std::sort(seats.begin(), seats.end());
  return free;
}

// Up to `want` adjacent free seats in a random row with a run of at least `at_least` free
// seats (fewer than `want` if the run is shorter); none when no row has such a run.
std::vector<std::string> PickSeats(const std::map<std::string, std::vector<int>>& free, int want,
                                   std::mt19937_64& rng, size_t at_least = 1) {
  // Runs of consecutive numbers, of every row: (row, [first, last] indexes into numbers).
  struct Run {
    const std::string* row;
    const std::vector<int>* numbers;
    size_t first, last;
  };
  std::vector<Run> runs;
  for (const auto& [row, numbers] : free) {
    for (size_t i = 0; i < numbers.size();) {
      size_t j = i;
      while (j + 1 < numbers.size() && numbers[j + 1] == numbers[j] + 1) ++j;
      if (j - i + 1 >= at_least) runs.push_back(Run{&row, &numbers, i, j});
      i = j + 1;
    }
  }
  if (runs.empty()) return {};
  // A random row (of those with such a run), then a random run of it.
  std::vector<const std::string*> rows;
  for (const auto& r : runs) {
    if (rows.empty() || rows.back() != r.row) rows.push_back(r.row);
  }
  const std::string* pick_row =
      rows[std::uniform_int_distribution<size_t>(0, rows.size() - 1)(rng)];
  std::vector<const Run*> in_row;
  for (const auto& r : runs) {
    if (r.row == pick_row) in_row.push_back(&r);
  }
  const Run& run = *in_row[std::uniform_int_distribution<size_t>(0, in_row.size() - 1)(rng)];
  const std::string& row = *run.row;
  const std::vector<int>& numbers = *run.numbers;
  const size_t first = run.first, last = run.last;
  const size_t length = std::min(last - first + 1, static_cast<size_t>(want));
  const size_t offset =
      first + std::uniform_int_distribution<size_t>(0, last - first + 1 - length)(rng);
  std::vector<std::string> seats;
  for (size_t k = 0; k < length; ++k) seats.push_back(row + std::to_string(numbers[offset + k]));
  return seats;
}

// A GET as a browser sends it: with Accept-Encoding (Options::accept_encoding), and the
// customer's token if any.
std::string Get(const Options& o, const std::string& path, const std::string& token) {
  return "GET " + path + " HTTP/1.1\r\nHost: " + o.host + "\r\n" +
         (o.accept_encoding.empty() ? "" : "Accept-Encoding: " + o.accept_encoding + "\r\n") +
         (token.empty() ? "" : "Authorization: Bearer " + token + "\r\n") + "\r\n";
}

std::string Post(const Options& o, const std::string& path, const std::string& token,
                 const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: " + o.host + "\r\nAuthorization: Bearer " + token +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// The showtime the storm is on (an index from Options::showtime), moved on by the first
// connection that finds it sold out; when it reaches Options::showtimes, all are.
std::atomic<int> g_current{0};
Clock::time_point g_sold_out_at[1024];

// A shedding server (503, Retry-After: 1) is asked again a second later, as clients do.
asio::awaitable<void> RetryAfter(asio::any_io_executor executor) {
  asio::steady_timer pause(executor, std::chrono::seconds(1));
  beast::error_code ec;
  co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
}

// With an interval (open loop, --rate), each attempt (map read, then hold) is due at a
// fixed time, and "attempt" latency runs from when it was due to the hold's answer.
asio::awaitable<void> HoldLoop(Worker& w, const Options& o, int connection, Clock::time_point end,
                               Clock::duration interval, Clock::time_point first_due) {
  auto executor = co_await asio::this_coro::executor;
  Conn conn(executor, tcp::endpoint(asio::ip::make_address(o.host), o.port));
  asio::steady_timer timer(executor);
  Clock::time_point due = first_due;
  // Customer ids: connection-major, so every attempt is a customer of its own.
  int64_t customer = (static_cast<int64_t>(connection) + 1) << 32;
  std::string body;
  int index;
  while (Clock::now() < end && (index = g_current.load()) < o.showtimes) {
    if (interval.count() > 0) {
      if (due > Clock::now()) {
        timer.expires_at(due);
        beast::error_code ec;
        co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      }
      due += interval;
    }
    const auto attempt_due = due - interval;
    const std::string showtime = ShowtimeAt(o, index);
    const std::string map_request = Get(o, "/showtimes/" + showtime + "/seats", "");
    const std::string hold_path = "/showtimes/" + showtime + "/holds";
    auto t0 = Clock::now();
    const int map_status = co_await conn.Exchange(map_request, &body);
    if (map_status == 0) {
      ++w.errors;
      continue;
    }
    w.latency["seatmap"].Record(Micros(Clock::now() - t0));
    ++w.statuses["seatmap"][map_status];
    w.bytes["seatmap"] += conn.last_bytes();
    if (map_status == 503) co_await RetryAfter(executor);
    if (map_status != 200) continue;
    const auto free = FreeSeats(body);
    if (free.empty()) {
      if (g_current.compare_exchange_strong(index, index + 1)) g_sold_out_at[index] = Clock::now();
      continue;
    }
    const int want =
        std::uniform_int_distribution<int>(std::min(o.min_seats, o.max_seats), o.max_seats)(w.rng);
    auto seats = o.best ? std::vector<std::string>{}
                        : PickSeats(free, want, w.rng, static_cast<size_t>(o.min_seats));
    if (!o.best && seats.empty()) {  // no run of min_seats free seats is left
      if (g_current.compare_exchange_strong(index, index + 1)) g_sold_out_at[index] = Clock::now();
      continue;
    }
    std::string json = "{\"seats\": [";
    for (size_t i = 0; i < seats.size(); ++i) json += (i ? ", \"" : "\"") + seats[i] + "\"";
    json += "]}";
    if (o.best) {
      json = "{\"best\": {\"count\": " + std::to_string(o.best) + ", \"category\": \"standard\"}}";
    }
    const std::string token =
        boxoffice::SignJwt(boxoffice::Principal{++customer, false},
                           boxoffice::SystemClock().Now() + std::chrono::hours(1), o.secret);
    t0 = Clock::now();
    int status = co_await conn.Exchange(Post(o, hold_path, token, json),
                                        o.take_alternatives ? &body : nullptr);
    if (status == 0) {
      ++w.errors;
      continue;
    }
    w.latency["hold"].Record(Micros(Clock::now() - t0));
    ++w.statuses["hold"][status];
    if (status == 409 && o.take_alternatives && !o.best) {
      const auto refused = nlohmann::json::parse(body, nullptr, false);
      const auto* offered = refused.is_object() && refused.contains("alternatives")
                                ? &refused["alternatives"]
                                : nullptr;
      if (offered && offered->is_array() && offered->empty()) {  // no block of this size left
        if (g_current.compare_exchange_strong(index, index + 1))
          g_sold_out_at[index] = Clock::now();
        continue;
      }
      if (offered && offered->is_array() && offered->front().contains("seats")) {
        seats.clear();
        for (const auto& s : offered->front()["seats"]) seats.push_back(s.get<std::string>());
        json = "{\"seats\": " + offered->front()["seats"].dump() + "}";
        t0 = Clock::now();
        status = co_await conn.Exchange(Post(o, hold_path, token, json), nullptr);
        if (status == 0) {
          ++w.errors;
          continue;
        }
        w.latency["hold"].Record(Micros(Clock::now() - t0));
        ++w.statuses["hold"][status];
        ++w.alternatives_taken;
      }
    }
    if (interval.count() > 0) w.latency["attempt"].Record(Micros(Clock::now() - attempt_due));
    if (status == 201) w.seats_won += o.best ? static_cast<size_t>(o.best) : seats.size();
    if (status == 409 && o.best) {  // no block of N left: done with this showtime
      if (g_current.compare_exchange_strong(index, index + 1)) g_sold_out_at[index] = Clock::now();
    }
    if (status == 503) co_await RetryAfter(executor);
  }
  conn.Close();
}

// The premiere: each connection is a customer who reads the map `map_reads` times, holds
// 1..max_seats adjacent free seats of a random showtime still on sale, checks out, pays at
// the gateway, and waits for the booking to be CONFIRMED; then the connection is the next
// customer. A lost hold (409) means reading the map again. Until every showtime is sold
// out (no seat AVAILABLE, every hold paid) or --seconds pass.
// premiere --live 1: one customer's view of a showtime, kept by its seat-change stream
// (GET /showtimes/{id}/seats/stream, chunked Server-Sent Events): the map read once, then
// each SeatsHeld / SeatsBooked / SeatsReleased applied as it comes. The changes heard while
// the map was being read are applied again on top of it, in order (each sets a seat's
// state, so a change the map already shows changes nothing).
class LiveView : public std::enable_shared_from_this<LiveView> {
 public:
  static constexpr size_t kMaxBuffered = 1 << 20;  // a stream's unparsed bytes, then it ends

  LiveView(asio::any_io_executor executor, tcp::endpoint endpoint)
      : socket_(executor), endpoint_(endpoint) {}

  // Opens the stream and reads its head; false if it is not a 200 stream.
  asio::awaitable<bool> Open(const Options& o, const std::string& showtime) {
    beast::error_code ec;
    co_await socket_.async_connect(endpoint_, asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return false;
    socket_.set_option(tcp::no_delay(true));
    const std::string request = "GET /showtimes/" + showtime + "/seats/stream HTTP/1.1\r\nHost: " +
                                o.host + "\r\nAccept: text/event-stream\r\n\r\n";
    co_await asio::async_write(socket_, asio::buffer(request),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return false;
    char chunk[4096];
    size_t head_end;
    while ((head_end = raw_.find("\r\n\r\n")) == std::string::npos) {
      const size_t n = co_await socket_.async_read_some(
          asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
      if (ec || raw_.size() > kMaxBuffered) co_return false;
      raw_.append(chunk, n);
    }
    if (raw_.compare(0, 12, "HTTP/1.1 200") != 0) co_return false;
    raw_.erase(0, head_end + 4);
    if (!Parse()) co_return false;
    asio::co_spawn(socket_.get_executor(), Read(shared_from_this()), asio::detached);
    co_return true;
  }

  // The map's request is going out: the changes from now on are kept for SetMap.
  void BeginMapRead() {
    logging_ = true;
    log_.clear();
  }
  // The map's free seats (FreeSeats), with the changes heard since BeginMapRead.
  void SetMap(const std::map<std::string, std::vector<int>>& free) {
    free_.clear();
    for (const auto& [row, numbers] : free) free_[row].insert(numbers.begin(), numbers.end());
    for (const auto& [available, seats] : log_) Apply(available, seats);
    logging_ = false;
    log_.clear();
  }
  // The free seats as this view has them now, as FreeSeats gives them.
  std::map<std::string, std::vector<int>> Free() const {
    std::map<std::string, std::vector<int>> out;
    for (const auto& [row, numbers] : free_) {
      if (!numbers.empty()) out[row].assign(numbers.begin(), numbers.end());
    }
    return out;
  }
  uint64_t changes() const { return changes_; }
  void Close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  static asio::awaitable<void> Read(std::shared_ptr<LiveView> self) {
    char chunk[8192];
    for (;;) {
      beast::error_code ec;
      const size_t n = co_await self->socket_.async_read_some(
          asio::buffer(chunk), asio::redirect_error(asio::use_awaitable, ec));
      if (ec) co_return;
      self->raw_.append(chunk, n);
      if (!self->Parse() || self->raw_.size() + self->events_.size() > kMaxBuffered) {
        self->Close();
        co_return;
      }
    }
  }

  // The chunks in raw_ into events_, and each whole event applied; false once the stream
  // has ended (its last chunk) or is not chunked as it should be.
  bool Parse() {
    size_t at = 0;
    for (;;) {
      if (chunk_crlf_) {  // the CRLF after a chunk's data
        if (raw_.size() - at < 2) break;
        if (raw_.compare(at, 2, "\r\n") != 0) return false;
        at += 2;
        chunk_crlf_ = false;
      }
      if (chunk_left_ == 0) {
        const size_t eol = raw_.find("\r\n", at);
        if (eol == std::string::npos) break;
        char* end = nullptr;
        chunk_left_ = std::strtoul(raw_.c_str() + at, &end, 16);
        if (end == raw_.c_str() + at) return false;
        at = eol + 2;
        if (chunk_left_ == 0) return false;  // the last chunk: the stream is over
      }
      const size_t take = std::min(chunk_left_, raw_.size() - at);
      if (take == 0) break;
      events_.append(raw_, at, take);
      at += take;
      chunk_left_ -= take;
      if (chunk_left_ == 0) chunk_crlf_ = true;
    }
    raw_.erase(0, at);
    for (size_t end; (end = events_.find("\n\n")) != std::string::npos;) {
      const std::string_view event(events_.data(), end);
      if (event.substr(0, 6) == "data: ") Heard(event.substr(6));
      events_.erase(0, end + 2);
    }
    return true;
  }

  void Heard(std::string_view data) {
    const auto change = nlohmann::json::parse(data, nullptr, false);
    if (!change.is_object() || !change.contains("seats") || !change["seats"].is_array()) return;
    const std::string type = change.value("type", "");
    if (type != "SeatsHeld" && type != "SeatsBooked" && type != "SeatsReleased") return;
    std::vector<std::string> seats;
    for (const auto& s : change["seats"]) {
      if (s.is_string()) seats.push_back(s.get<std::string>());
    }
    ++changes_;
    const bool available = type == "SeatsReleased";
    if (logging_) log_.emplace_back(available, seats);
    Apply(available, seats);
  }

  void Apply(bool available, const std::vector<std::string>& seats) {
    for (const std::string& code : seats) {
      size_t digit = 0;
      while (digit < code.size() && !std::isdigit(static_cast<unsigned char>(code[digit]))) ++digit;
      if (digit == 0 || digit == code.size()) continue;
      const int number = std::atoi(code.c_str() + digit);
      auto& row = free_[code.substr(0, digit)];
      if (available) {
        row.insert(number);
      } else {
        row.erase(number);
      }
    }
  }

  tcp::socket socket_;
  tcp::endpoint endpoint_;
  std::string raw_;     // received, not yet taken out of its chunks
  std::string events_;  // the event stream's text, not yet a whole event
  size_t chunk_left_ = 0;
  bool chunk_crlf_ = false;
  std::map<std::string, std::set<int>> free_;
  bool logging_ = false;
  std::vector<std::pair<bool, std::vector<std::string>>> log_;  // (available, seats)
  uint64_t changes_ = 0;
};

std::atomic<int> g_on_sale{0};  // showtimes not yet seen sold out
std::vector<std::atomic<bool>>* g_sold_out = nullptr;
std::vector<std::atomic<int>>* g_seats = nullptr;  // seats per showtime, from its map
Clock::time_point g_all_sold_out{};

constexpr int kLiveAttempts = 8;  // --live: holds a customer tries from the view

// With an interval (open loop, --rate customers per second in all), each customer on this
// connection is due at a fixed time: the purchase starts then, or at once if the previous
// one ran late.
asio::awaitable<void> PremiereLoop(Worker& w, const Options& o, int connection,
                                   Clock::time_point end, Clock::duration interval,
                                   Clock::time_point first_due) {
  auto executor = co_await asio::this_coro::executor;
  const tcp::endpoint service(asio::ip::make_address(o.host), o.port);
  Conn conn(executor, service);
  Conn gateway(executor, tcp::endpoint(asio::ip::make_address(o.host), o.gateway_port));
  int64_t customer = (static_cast<int64_t>(connection) + 1) << 32;
  std::string body;
  // One request, timed; a 503 (the service shedding load, or a busy gateway) is sent
  // again a second later, as a customer's app would, until the run ends.
  auto timed = [&](const char* route, Conn& c, const std::string& request,
                   std::string* out) -> asio::awaitable<int> {
    for (;;) {
      const auto t0 = Clock::now();
      const int status = co_await c.Exchange(request, out);
      if (status == 0) {
        ++w.errors;
        co_return 0;
      }
      w.latency[route].Record(Micros(Clock::now() - t0));
      ++w.statuses[route][status];
      w.bytes[route] += c.last_bytes();
      if (status != 503 || Clock::now() >= end) co_return status;
      co_await RetryAfter(executor);
    }
  };
  auto get = [&](const std::string& path, const std::string& token) { return Get(o, path, token); };
  std::string token =
      boxoffice::SignJwt(boxoffice::Principal{++customer, false},
                         boxoffice::SystemClock().Now() + std::chrono::hours(1), o.secret);
  Clock::time_point due = first_due;
  asio::steady_timer pacing(executor);
  while (Clock::now() < end && g_on_sale.load() > 0) {
    if (interval.count() > 0) {
      if (due > Clock::now()) {
        pacing.expires_at(due);
        beast::error_code ec;
        co_await pacing.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        if (Clock::now() >= end || g_on_sale.load() == 0) break;
      }
      due += interval;
    }
    ++w.customers;
    // A showtime still on sale, at random.
    int index = std::uniform_int_distribution<int>(0, o.showtimes - 1)(w.rng);
    for (int k = 0; k < o.showtimes && (*g_sold_out)[static_cast<size_t>(index)]; ++k)
      index = (index + 1) % o.showtimes;
    const std::string showtime = ShowtimeAt(o, index);
    const std::string map_request = get("/showtimes/" + showtime + "/seats", "");
    int map_status = 0;
    // --live: the stream first, then one map read; the stream ends with this customer.
    std::shared_ptr<LiveView> live;
    struct Leave {
      std::shared_ptr<LiveView>* live;
      ~Leave() {
        if (*live) (*live)->Close();
      }
    } leave{&live};
    if (o.live) {
      live = std::make_shared<LiveView>(executor, service);
      const auto t0 = Clock::now();
      if (!co_await live->Open(o, showtime)) {
        ++w.errors;
        continue;
      }
      w.latency["stream"].Record(Micros(Clock::now() - t0));
      ++w.statuses["stream"][200];
      live->BeginMapRead();
      map_status = co_await timed("seatmap", conn, map_request, &body);
      if (map_status != 200) continue;
      live->SetMap(FreeSeats(body));
    } else {
      for (int r = 0; r < o.map_reads; ++r) {
        map_status =
            co_await timed("seatmap", conn, map_request, r + 1 == o.map_reads ? &body : nullptr);
        if (map_status != 200) break;
      }
      if (map_status != 200) continue;
    }
    auto free = live ? live->Free() : FreeSeats(body);
    if ((*g_seats)[static_cast<size_t>(index)].load() == 0) {
      int seats = 0;
      for (size_t at = 0; (at = body.find("\"code\":\"", at)) != std::string::npos; ++at) ++seats;
      (*g_seats)[static_cast<size_t>(index)] = seats;
    }
    if (free.empty() && o.until_booked && body.find("\"HELD\"") != std::string::npos) {
      asio::steady_timer later(executor);  // a held seat may come back: look again soon
      later.expires_after(std::chrono::milliseconds(200));
      beast::error_code ec;
      co_await later.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      continue;
    }
    if (free.empty()) {
      // No seat AVAILABLE: held ones may still come back if unpaid, but every customer
      // here pays, so the showtime is sold out.
      bool expected = false;
      if ((*g_sold_out)[static_cast<size_t>(index)].compare_exchange_strong(expected, true) &&
          g_on_sale.fetch_sub(1) == 1) {
        g_all_sold_out = Clock::now();
      }
      continue;
    }
    const int want = std::uniform_int_distribution<int>(1, o.max_seats)(w.rng);
    std::vector<std::string> seats;
    int held = 0;
    // Polling: a lost hold sends the customer back to reading the map. Live: the view
    // learns of the seats taken within moments, and the customer picks again from it.
    for (int attempt = 0; attempt < (live ? kLiveAttempts : 1); ++attempt) {
      if (attempt > 0) {
        asio::steady_timer pause(executor, std::chrono::milliseconds(20));
        beast::error_code ec;
        co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
        free = live->Free();
        if (free.empty()) break;
      }
      seats = PickSeats(free, want, w.rng);
      std::string json = "{\"seats\": [";
      for (size_t i = 0; i < seats.size(); ++i) json += (i ? ", \"" : "\"") + seats[i] + "\"";
      json += "]}";
      held = co_await timed("hold", conn, Post(o, "/showtimes/" + showtime + "/holds", token, json),
                            &body);
      if (held != 409) break;
    }
    if (held != 201) continue;  // lost: read the map again (live: a new customer)
    const auto hold = nlohmann::json::parse(body, nullptr, false);
    const std::string hold_id = hold.is_object() ? hold.value("holdId", "") : "";
    std::string checkout = Post(o, "/holds/" + hold_id + "/checkout", token, "");
    checkout.insert(checkout.find("\r\n") + 2, "Idempotency-Key: premiere-" + hold_id + "\r\n");
    if (co_await timed("checkout", conn, checkout, &body) != 201) continue;
    const auto started = nlohmann::json::parse(body, nullptr, false);
    if (!started.is_object()) continue;
    const int64_t booking = started.value("bookingId", int64_t{0});
    const std::string session = started["payment"].value("sessionId", "");
    const std::string pay_body = R"({"outcome": "SUCCEEDED"})";
    const std::string pay =
        "POST /v1/sessions/" + session + "/pay HTTP/1.1\r\nHost: " + o.host +
        "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(pay_body.size()) +
        "\r\n\r\n" + pay_body;
    // A failed payment ends the purchase: the hold comes back when it expires.
    if (co_await timed("pay", gateway, pay, nullptr) != 200) continue;
    asio::steady_timer pause(executor);
    // The gateway calls back; the customer watches the booking until it is confirmed.
    const std::string booking_request = get("/bookings/" + std::to_string(booking), token);
    for (int poll = 0; poll < 1000 && Clock::now() < end; ++poll) {
      if (co_await timed("booking", conn, booking_request, &body) != 200) break;
      if (body.find("\"CONFIRMED\"") != std::string::npos) {
        w.seats_won += seats.size();
        ++w.purchases;
        break;
      }
      pause.expires_after(std::chrono::milliseconds(20));
      beast::error_code ec;
      co_await pause.async_wait(asio::redirect_error(asio::use_awaitable, ec));
    }
    // The next customer on this connection.
    token = boxoffice::SignJwt(boxoffice::Principal{++customer, false},
                               boxoffice::SystemClock().Now() + std::chrono::hours(1), o.secret);
  }
  conn.Close();
  gateway.Close();
}

void PrintResult(const std::string& name, const Histogram& h, double seconds,
                 const std::map<int, uint64_t>& statuses, uint64_t errors,
                 const std::string& extra) {
  auto ms = [](uint64_t us) { return static_cast<double>(us) / 1000.0; };
  std::printf(
      "result %s requests=%llu rps=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f p999_ms=%.2f "
      "max_ms=%.2f errors=%llu",
      name.c_str(), static_cast<unsigned long long>(h.total()),
      static_cast<double>(h.total()) / seconds, ms(h.Quantile(0.5)), ms(h.Quantile(0.9)),
      ms(h.Quantile(0.99)), ms(h.Quantile(0.999)), ms(h.max()),
      static_cast<unsigned long long>(errors));
  for (auto [status, n] : statuses)
    std::printf(" status_%d=%llu", status, static_cast<unsigned long long>(n));
  std::printf("%s\n", extra.c_str());
  // The percentile spectrum, for the report's latency plots.
  std::printf("latency %s", name.c_str());
  for (auto [percentile, us] : h.Spectrum()) std::printf(" %.6g=%.3f", percentile, ms(us));
  std::printf("\n");
}

// " bytes_per_response=N" (head and body as received), or nothing when none were counted.
std::string BytesPer(uint64_t bytes, uint64_t responses) {
  if (responses == 0) return "";
  return " bytes_per_response=" + std::to_string(bytes / responses);
}

int Usage() {
  std::fprintf(
      stderr,
      "usage: boxoffice-bench get --port PORT --path PATH [--host H] [--connections N]\n"
      "                           [--threads N] [--seconds S] [--rate RPS]\n"
      "                           [--name NAME] [--header 'Name: value']...\n"
      "                           [--accept-encoding 'gzip, br'|none]\n"
      "       boxoffice-bench holdstorm --port PORT --showtime ID --secret JWT_SECRET\n"
      "                           [--connections N] [--threads N] [--seconds S]\n"
      "                           [--showtimes N] [--max-seats N] [--min-seats N]\n"
      "                           [--best N] [--take-alternatives 1] [--rate N]\n"
      "                           [--name NAME]\n"
      "       boxoffice-bench premiere --port PORT --gateway-port PORT\n"
      "                           --showtime ID | --showtime-ids ID,ID,...\n"
      "                           --secret JWT_SECRET [--showtimes N] [--connections N]\n"
      "                           [--map-reads N] [--max-seats N] [--seconds S]\n"
      "                           [--rate CUSTOMERS_PER_S] [--name NAME] [--until-booked 1]\n"
      "                           [--live 1]\n"
      "       boxoffice-bench report --in RUN.txt --out REPORT.md --plots DIR\n");
  return 2;
}

}  // namespace

// `report --in RUN.txt --out docs/benchmarks.md --plots docs/bench`: the report of a run
// (bench/report.h), with one latency plot per scenario.
int Report(int argc, char** argv) {
  std::string in, out, plots;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--in")
      in = argv[i + 1];
    else if (flag == "--out")
      out = argv[i + 1];
    else if (flag == "--plots")
      plots = argv[i + 1];
    else
      return Usage();
  }
  if (in.empty() || out.empty() || plots.empty()) return Usage();
  std::ifstream file(in);
  if (!file) {
    std::fprintf(stderr, "boxoffice-bench report: cannot read %s\n", in.c_str());
    return 1;
  }
  const auto run = boxoffice::bench::ParseRun(file);
  namespace fs = std::filesystem;
  fs::create_directories(plots);
  for (const auto& scenario : run.scenarios) {
    if (scenario.latency.empty()) continue;
    std::ofstream(fs::path(plots) / (scenario.name + ".svg")) << boxoffice::bench::LatencyPlotSvg(
        scenario.name + ": latency by percentile", scenario.latency);
  }
  const auto link = fs::relative(fs::absolute(plots), fs::absolute(out).parent_path());
  std::ofstream(out) << boxoffice::bench::ReportMarkdown(run, in, link.string());
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) return Usage();
  const std::string mode = argv[1];
  if (mode == "report") return Report(argc, argv);
  if (mode != "get" && mode != "holdstorm" && mode != "premiere") return Usage();
  Options o;
  o.name = mode;
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
    } else if (flag == "--accept-encoding") {
      o.accept_encoding = value == "none" ? "" : value;
    } else if (flag == "--connections") {
      o.connections = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--threads") {
      o.threads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--seconds") {
      o.seconds = std::atof(value.c_str());
    } else if (flag == "--rate") {
      o.rate = std::atof(value.c_str());
    } else if (flag == "--name") {
      o.name = value;
    } else if (flag == "--showtime") {
      o.showtime = std::atoll(value.c_str());
    } else if (flag == "--secret") {
      o.secret = value;
    } else if (flag == "--showtimes") {
      o.showtimes = std::clamp(std::atoi(value.c_str()), 1, 1024);
    } else if (flag == "--until-booked") {
      o.until_booked = value == "1";
    } else if (flag == "--live") {
      o.live = value == "1";
    } else if (flag == "--showtime-ids") {
      for (size_t at = 0; at < value.size();) {
        size_t comma = value.find(',', at);
        if (comma == std::string::npos) comma = value.size();
        const int64_t id = std::atoll(value.substr(at, comma - at).c_str());
        if (id <= 0 || o.showtime_ids.size() >= 1024) return Usage();
        o.showtime_ids.push_back(id);
        at = comma + 1;
      }
      if (o.showtime_ids.empty()) return Usage();
    } else if (flag == "--gateway-port") {
      o.gateway_port = static_cast<unsigned short>(std::atoi(value.c_str()));
    } else if (flag == "--map-reads") {
      o.map_reads = std::max(1, std::atoi(value.c_str()));
    } else if (flag == "--max-seats") {
      o.max_seats = std::clamp(std::atoi(value.c_str()), 1, 8);
    } else if (flag == "--min-seats") {
      o.min_seats = std::clamp(std::atoi(value.c_str()), 1, 8);
    } else if (flag == "--take-alternatives") {
      o.take_alternatives = value == "1" || value == "yes" || value == "true";
    } else if (flag == "--best") {
      o.best = std::clamp(std::atoi(value.c_str()), 0, 8);
    } else {
      return Usage();
    }
  }
  if (!o.showtime_ids.empty()) {  // (after --showtimes, whatever the order of the flags)
    o.showtime = o.showtime_ids.front();
    o.showtimes = static_cast<int>(o.showtime_ids.size());
  }
  if (mode != "get" && (o.showtime <= 0 || o.secret.empty())) return Usage();
  if (mode == "premiere" && o.gateway_port == 0) return Usage();
  if (o.live && (mode != "premiere" || o.until_booked)) return Usage();
  std::vector<std::atomic<bool>> sold_out_flags(static_cast<size_t>(o.showtimes));
  g_sold_out = &sold_out_flags;
  std::vector<std::atomic<int>> seats_per_showtime(static_cast<size_t>(o.showtimes));
  g_seats = &seats_per_showtime;
  g_on_sale = o.showtimes;

  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < o.threads; ++t) workers.push_back(std::make_unique<Worker>());
  // `get` warms up for 0.5 s (not recorded); a hold storm starts at once, as a premiere does.
  const auto launched = Clock::now();
  const auto start = mode == "get" ? launched + std::chrono::milliseconds(500) : launched;
  const auto end = start + std::chrono::microseconds(static_cast<int64_t>(o.seconds * 1e6));
  std::string request = Get(o, o.path, "");
  request.resize(request.size() - 2);  // the head's end, after the headers asked for
  for (const auto& h : o.headers) request += h + "\r\n";
  request += "\r\n";
  const auto interval = o.rate > 0 ? std::chrono::duration_cast<Clock::duration>(
                                         std::chrono::duration<double>(o.connections / o.rate))
                                   : Clock::duration::zero();
  for (int c = 0; c < o.connections; ++c) {
    Worker& w = *workers[static_cast<size_t>(c % o.threads)];
    if (mode == "get") {
      // Open loop: the connections' due times are spread evenly over one interval.
      const auto first_due = start + interval * c / o.connections;
      asio::co_spawn(w.io, GetLoop(w, o, request, start, end, interval, first_due), asio::detached);
    } else if (mode == "holdstorm") {
      asio::co_spawn(w.io, HoldLoop(w, o, c, end, interval, start + interval * c / o.connections),
                     asio::detached);
    } else {
      asio::co_spawn(w.io,
                     PremiereLoop(w, o, c, end, interval, start + interval * c / o.connections),
                     asio::detached);
    }
  }
  std::vector<std::thread> threads;
  for (auto& w : workers) threads.emplace_back([&w] { w->io.run(); });
  for (auto& t : threads) t.join();
  const auto finished = Clock::now();

  std::map<std::string, Histogram> latency;
  std::map<std::string, std::map<int, uint64_t>> statuses;
  std::map<std::string, uint64_t> bytes;
  uint64_t errors = 0, seats_won = 0, customers = 0, purchases = 0, alternatives_taken = 0;
  for (auto& w : workers) {
    alternatives_taken += w->alternatives_taken;
    customers += w->customers;
    purchases += w->purchases;
    for (auto& [route, h] : w->latency) latency[route].Merge(h);
    for (auto& [route, n] : w->bytes) bytes[route] += n;
    for (auto& [route, by] : w->statuses)
      for (auto [status, n] : by) statuses[route][status] += n;
    errors += w->errors;
    seats_won += w->seats_won;
  }
  const int sold_out = std::min(g_current.load(), o.showtimes);
  if (mode == "get") {
    const std::string extra = " connections=" + std::to_string(o.connections) +
                              (o.rate > 0 ? " target_rps=" + std::to_string(int64_t(o.rate)) : "") +
                              BytesPer(bytes[o.name], latency[o.name].total());
    PrintResult(o.name, latency[o.name], o.seconds, statuses[o.name], errors, extra);
    return errors > 0 && latency[o.name].total() == 0 ? 1 : 0;
  }
  const double seconds = std::chrono::duration<double>(finished - launched).count();
  if (mode == "premiere") {
    uint64_t requests = 0;
    for (auto& [route, h] : latency) requests += h.total();
    // Sold out: no seat left to hold, and every seat paid for and confirmed. With
    // --until-booked, every map showed every seat BOOKED: a customer cut off by a fault
    // may not have seen its CONFIRMED (seats_confirmed counts those who did).
    uint64_t seats = 0;
    for (const auto& n : seats_per_showtime) seats += static_cast<uint64_t>(n.load());
    const bool done = g_on_sale.load() == 0 && (o.until_booked || seats_won == seats);
    const double sell_out =
        done ? std::chrono::duration<double>(g_all_sold_out - launched).count() : 0.0;
    std::printf(
        "result %s requests=%llu rps=%.0f seconds=%.2f sold_out=%s sell_out_s=%.2f "
        "seats_confirmed=%llu seats=%llu errors=%llu connections=%d customers=%llu "
        "customers_per_s=%.1f purchases=%llu purchases_per_s=%.1f%s\n",
        o.name.c_str(), static_cast<unsigned long long>(requests),
        static_cast<double>(requests) / seconds, seconds, done ? "yes" : "no", sell_out,
        static_cast<unsigned long long>(seats_won), static_cast<unsigned long long>(seats),
        static_cast<unsigned long long>(errors), o.connections,
        static_cast<unsigned long long>(customers), static_cast<double>(customers) / seconds,
        static_cast<unsigned long long>(purchases), static_cast<double>(purchases) / seconds,
        o.rate > 0 ? (" target_customers_per_s=" + std::to_string(int64_t(o.rate))).c_str() : "");
    for (auto& [route, h] : latency)
      PrintResult(o.name + "_" + route, h, seconds, statuses[route], 0,
                  BytesPer(bytes[route], h.total()));
    return done ? 0 : 1;
  }
  const auto& holds = statuses["hold"];
  auto count = [&](int status) {
    auto it = holds.find(status);
    return it == holds.end() ? uint64_t{0} : it->second;
  };
  // Time to sell out: from the start, or from the previous showtime's sell-out.
  double slowest = 0, total = 0;
  for (int i = 0; i < sold_out; ++i) {
    const auto from = i == 0 ? launched : g_sold_out_at[i - 1];
    const double s = std::chrono::duration<double>(g_sold_out_at[i] - from).count();
    slowest = std::max(slowest, s);
    total += s;
  }
  // Attempts are the holds the service decided (not the 503s it shed under load).
  char extra[512];
  std::snprintf(
      extra, sizeof extra,
      " seconds=%.2f attempts_per_s=%.0f won=%llu seats_won=%llu taken=%llu shed=%llu "
      "showtimes_sold_out=%d/%d sell_out_mean_s=%.3f sell_out_max_s=%.3f connections=%d "
      "seats_per_s=%.0f conflicts_per_seat=%.3f alternatives_taken=%llu",
      seconds, static_cast<double>(latency["hold"].total() - count(503)) / seconds,
      static_cast<unsigned long long>(count(201)), static_cast<unsigned long long>(seats_won),
      static_cast<unsigned long long>(count(409)), static_cast<unsigned long long>(count(503)),
      sold_out, o.showtimes, sold_out ? total / sold_out : 0.0, slowest, o.connections,
      static_cast<double>(seats_won) / seconds,
      seats_won ? static_cast<double>(count(409)) / static_cast<double>(seats_won) : 0.0,
      static_cast<unsigned long long>(alternatives_taken));
  PrintResult(o.name, latency["hold"], seconds, holds, errors, extra);
  PrintResult(o.name + "_seatmap", latency["seatmap"], seconds, statuses["seatmap"], 0,
              BytesPer(bytes["seatmap"], latency["seatmap"].total()));
  if (o.rate > 0) {
    PrintResult(o.name + "_attempt", latency["attempt"], seconds, {}, 0,
                " target_attempts_per_s=" + std::to_string(int64_t(o.rate)));
  }
  return sold_out == o.showtimes ? 0 : 1;
}
