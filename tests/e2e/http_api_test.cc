// End to end: starts the real `boxoffice serve` binary on SQLite and on PostgreSQL and
// speaks HTTP to it. Proves every endpoint of API.md's Conventions, Authentication,
// Showtimes, Holds, Admin and Operations sections, every error code they list, that no
// bad request changes any state, and that SIGTERM stops the service cleanly.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/crypto.h"
#include "core/gateway_signature.h"
#include "core/jwt.h"
#include "core/metrics.h"
#include "core/time_format.h"
#include "http/server.h"
#include "store/pg_store.h"
#include "store/sqlite_store.h"
#include "support/http_client.h"
#include "support/test_env.h"

extern char** environ;

namespace boxoffice {
namespace {

using nlohmann::json;
using testing::HttpCall;
using testing::HttpResult;

const std::string kSecret = "e2e-secret-e2e-secret-e2e-secret-0123";
const std::string kGatewaySecret = "e2e-gateway-secret-0123";

enum class Engine { kSqlite, kPostgres };

std::string Token(int64_t customer, bool admin = false, Millis ttl = Millis(3'600'000)) {
  return SignJwt(Principal{customer, admin}, SystemClock().Now() + ttl, kSecret);
}

std::pair<std::string, std::string> Bearer(const std::string& token) {
  return {"Authorization", "Bearer " + token};
}

class Service {
 public:
  // Starts `serve` on a port the kernel picks (127.0.0.1:0) and learns it from the
  // "listening" log line, so parallel tests never race for a port.
  Service(const std::string& db, std::vector<std::string> extra = {})
      : Service(ServeArgs(db, std::move(extra))) {}

  // Runs BOXOFFICE_BINARY with args (its subcommand first), e.g. fake-gateway.
  explicit Service(std::vector<std::string> args) {
    log_ = testing::TempDir() + "/process.log";
    args.insert(args.begin(), BOXOFFICE_BINARY);
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--events-file") events_ = args[i + 1];
    }
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 500 && pid_ > 0 && port_ == 0; ++i) {
      std::istringstream lines(Log());
      for (std::string line; std::getline(lines, line);) {
        auto j = json::parse(line, nullptr, false);
        if (j.is_object() && j.value("msg", "") == "listening") port_ = j.value("port", 0);
      }
      if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (port_ != 0 && HttpCall(port_, "GET", "/healthz").status == 200) return;
    ADD_FAILURE() << "service did not start; log:\n" << Log();
  }
  static std::vector<std::string> ServeArgs(const std::string& db, std::vector<std::string> extra) {
    std::vector<std::string> args = {"serve",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--db",
                                     db,
                                     "--jwt-secret",
                                     kSecret,
                                     "--gateway-secret",
                                     kGatewaySecret,
                                     "--events-file",
                                     testing::TempDir() + "/events.jsonl"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  ~Service() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // SIGTERM, then the exit status (or -1 if it did not stop within 15 s).
  int Terminate() {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1500; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  unsigned short port() const { return port_; }
  // The lines the outbox relay wrote so far.
  std::vector<json> Events() const {
    std::ifstream in(events_);
    std::vector<json> out;
    for (std::string line; std::getline(in, line);) out.push_back(json::parse(line));
    return out;
  }

 private:
  pid_t pid_ = 0;
  unsigned short port_ = 0;
  std::string log_;
  std::string events_;  // the --events-file of a `serve`
};

const std::string kLayout = R"({"title": "Dune: Part Three", "cinema": "Odeon Leicester Square",
  "hall": "Screen 1", "startsAt": "2026-12-18T19:30:00.000Z",
  "rows": [{"row": "E", "seats": 10, "category": "standard"}, {"row": "F", "seats": 10, "category": "premium"}],
  "prices": {"standard": {"amount": 1250, "currency": "EUR"}, "premium": {"amount": 1650, "currency": "EUR"}}})";

class HttpApi : public ::testing::TestWithParam<Engine> {
 protected:
  void SetUp() override {
    std::string db;
    if (GetParam() == Engine::kSqlite) {
      db = "sqlite:" + testing::TempDir() + "/e2e.db";
    } else {
      if (testing::PostgresUrl().empty()) {
        if (testing::PostgresRequired()) FAIL() << "BOXOFFICE_TEST_PG_URL is not set";
        GTEST_SKIP() << "no PostgreSQL (run through scripts/with-postgres.sh)";
      }
      db = testing::FreshPostgresSchemaUrl();
    }
    db_ = db;
    Start(db, {});
  }

  void Start(const std::string& db, std::vector<std::string> flags) {
    service_.reset();
    service_ = std::make_unique<Service>(db, std::move(flags));
    auto created = Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
    ASSERT_EQ(created.status, 201) << created.body;
    showtime_ = json::parse(created.body)["showtimeId"].get<int64_t>();
  }

  HttpResult Call(const std::string& method, const std::string& target,
                  const std::string& body = "",
                  const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return HttpCall(service_->port(), method, target, body, headers);
  }
  std::string Seats() { return "/showtimes/" + std::to_string(showtime_) + "/seats"; }
  std::string Holds() { return "/showtimes/" + std::to_string(showtime_) + "/holds"; }
  HttpResult Hold(int64_t customer, const std::string& seats_json) {
    return Call("POST", Holds(), R"({"seats": )" + seats_json + "}", {Bearer(Token(customer))});
  }
  // The seat map's ETag: equal tags, equal seat states.
  std::string SeatState() { return Call("GET", Seats()).Header("etag"); }

  static void ExpectError(const HttpResult& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.body;
    auto body = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << r.body;
    EXPECT_EQ(body.value("code", ""), code) << r.body;
    EXPECT_TRUE(body.contains("error")) << r.body;
  }

  std::unique_ptr<Service> service_;
  std::string db_;
  int64_t showtime_ = 0;
};

TEST_P(HttpApi, OperationsEndpoints) {
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  Call("GET", Seats());
  auto metrics = Call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.Header("content-type").find("text/plain"), std::string::npos);
  EXPECT_NE(metrics.body.find("boxoffice_http_requests_total{route=\"/showtimes/{showtimeId}/"
                              "seats\",method=\"GET\",status=\"200\"}"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("boxoffice_http_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(metrics.body.find("boxoffice_holds_total"), std::string::npos);
  EXPECT_NE(metrics.body.find("boxoffice_sweeper_released_seats_total"), std::string::npos);
  auto openapi = Call("GET", "/openapi.yaml");
  EXPECT_EQ(openapi.status, 200);
  EXPECT_EQ(openapi.body.rfind("openapi: 3.1.0", 0), 0u);
}

TEST_P(HttpApi, RequestIdIsEchoedOrMade) {
  EXPECT_EQ(Call("GET", "/healthz", "", {{"X-Request-Id", "abc-123"}}).Header("x-request-id"),
            "abc-123");
  EXPECT_TRUE(IsUuid(Call("GET", "/healthz").Header("x-request-id")));
  EXPECT_TRUE(IsUuid(Call("GET", "/nowhere").Header("x-request-id")));
}

TEST_P(HttpApi, KeepAlivePipeliningAndMalformedRequests) {
  const std::string two =
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: one\r\n\r\n"
      "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: two\r\nConnection: close\r\n\r\n";
  const std::string answers = testing::RawExchange(service_->port(), two);
  EXPECT_NE(answers.find("X-Request-Id: one"), std::string::npos) << answers;
  EXPECT_NE(answers.find("X-Request-Id: two"), std::string::npos) << answers;
  const std::string garbage = testing::RawExchange(service_->port(), "NONSENSE\r\n\r\n");
  EXPECT_EQ(garbage.rfind("HTTP/1.1 400", 0), 0u) << garbage;
  // Methods outside the known set are one bounded metrics label, whatever the client sends.
  const std::string odd = testing::RawExchange(
      service_->port(), "BREW7 /healthz HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(odd.rfind("HTTP/1.1 405", 0), 0u) << odd;
  const std::string metrics = Call("GET", "/metrics").body;
  EXPECT_NE(metrics.find("method=\"OTHER\""), std::string::npos);
  EXPECT_EQ(metrics.find("BREW7"), std::string::npos);
  auto huge = Call("GET", "/healthz", "", {{"X-Padding", std::string(20 * 1024, 'x')}});
  EXPECT_EQ(huge.status, 431);
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

TEST_P(HttpApi, UnknownRoutesAndWrongMethods) {
  ExpectError(Call("GET", "/nowhere"), 404, "NOT_FOUND");
  auto r = Call("PUT", Seats());
  ExpectError(r, 405, "METHOD_NOT_ALLOWED");
  EXPECT_EQ(r.Header("allow"), "GET");
  auto h = Call("GET", Holds());
  EXPECT_EQ(h.status, 405);
  EXPECT_EQ(h.Header("allow"), "POST");
  auto hold = Call("PATCH", "/holds/" + NewUuid());
  EXPECT_EQ(hold.status, 405);
  EXPECT_EQ(hold.Header("allow"), "GET, DELETE");
}

TEST_P(HttpApi, ShowtimesAndTheSeatMap) {
  auto st = Call("GET", "/showtimes/" + std::to_string(showtime_));
  ASSERT_EQ(st.status, 200);
  auto body = json::parse(st.body);
  EXPECT_EQ(body["title"], "Dune: Part Three");
  EXPECT_EQ(body["cinema"], "Odeon Leicester Square");
  EXPECT_EQ(body["hall"], "Screen 1");
  EXPECT_EQ(body["startsAt"], "2026-12-18T19:30:00.000Z");
  EXPECT_EQ(body["seatCount"], 20);
  EXPECT_EQ(body["prices"]["premium"]["amount"], 1650);
  EXPECT_EQ(body["prices"]["standard"]["currency"], "EUR");
  ExpectError(Call("GET", "/showtimes/999999"), 404, "NOT_FOUND");
  ExpectError(Call("GET", "/showtimes/abc"), 404, "NOT_FOUND");

  auto map = Call("GET", Seats());
  ASSERT_EQ(map.status, 200);
  EXPECT_EQ(map.Header("cache-control"), "public, max-age=1");
  const std::string etag = map.Header("etag");
  EXPECT_FALSE(etag.empty());
  auto seats = json::parse(map.body);
  EXPECT_EQ(seats["showtimeId"], showtime_);
  EXPECT_TRUE(seats["asOf"].is_string());
  ASSERT_EQ(seats["seats"].size(), 20u);
  EXPECT_EQ(seats["seats"][10], (json{{"code", "F1"},
                                      {"row", "F"},
                                      {"number", 1},
                                      {"category", "premium"},
                                      {"status", "AVAILABLE"}}));
  auto not_modified = Call("GET", Seats(), "", {{"If-None-Match", etag}});
  EXPECT_EQ(not_modified.status, 304);
  EXPECT_TRUE(not_modified.body.empty());
  ExpectError(Call("GET", "/showtimes/999999/seats"), 404, "NOT_FOUND");

  // Read your own writes: a hold shows at once, and changes the tag. No hold ids leak.
  ASSERT_EQ(Hold(5, R"(["E1"])").status, 201);
  auto after = Call("GET", Seats(), "", {{"If-None-Match", etag}});
  ASSERT_EQ(after.status, 200);
  EXPECT_NE(after.Header("etag"), etag);
  auto held = json::parse(after.body)["seats"][0];
  EXPECT_EQ(held["status"], "HELD");
  EXPECT_EQ(held.size(), 5u);
}

TEST_P(HttpApi, ListingShowtimesPagesWithACursor) {
  for (int i = 0; i < 3; ++i) {
    std::string layout = kLayout;
    layout.replace(layout.find("2026-12-18T19:30"), 16, "2026-12-19T1" + std::to_string(i) + ":00");
    ASSERT_EQ(Call("POST", "/admin/showtimes", layout, {Bearer(Token(1, true))}).status, 201);
  }
  auto page = json::parse(Call("GET", "/showtimes?limit=2").body);
  ASSERT_EQ(page["showtimes"].size(), 2u);
  ASSERT_TRUE(page["nextCursor"].is_string());
  auto rest = json::parse(
      Call("GET", "/showtimes?limit=2&cursor=" + page["nextCursor"].get<std::string>()).body);
  EXPECT_EQ(rest["showtimes"].size(), 2u);
  EXPECT_TRUE(rest["nextCursor"].is_null());
  auto filtered = json::parse(Call("GET",
                                   "/showtimes?from=2026-12-19T00:00:00Z&to=2026-12-19T11:00:00Z&"
                                   "cinema=Odeon%20Leicester%20Square")
                                  .body);
  EXPECT_EQ(filtered["showtimes"].size(), 1u);  // from <= startsAt < to
  EXPECT_EQ(json::parse(Call("GET", "/showtimes?cinema=Rex").body)["showtimes"].size(), 0u);
  ExpectError(Call("GET", "/showtimes?limit=501"), 400, "VALIDATION_FAILED");
  ExpectError(Call("GET", "/showtimes?limit=0"), 400, "VALIDATION_FAILED");
  ExpectError(Call("GET", "/showtimes?from=yesterday"), 400, "VALIDATION_FAILED");
  ExpectError(Call("GET", "/showtimes?cursor=!!"), 400, "VALIDATION_FAILED");
}

TEST_P(HttpApi, HoldLifecycle) {
  auto created = Hold(7, R"(["F6", "F5"])");
  ASSERT_EQ(created.status, 201) << created.body;
  auto hold = json::parse(created.body);
  const std::string id = hold["holdId"];
  EXPECT_TRUE(IsUuid(id));
  EXPECT_EQ(created.Header("location"), "/holds/" + id);
  EXPECT_EQ(hold["showtimeId"], showtime_);
  EXPECT_EQ(hold["seats"], json::array({"F5", "F6"}));
  EXPECT_TRUE(hold["expiresAt"].is_string());

  auto got = Call("GET", "/holds/" + id, "", {Bearer(Token(7))});
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(json::parse(got.body)["status"], "HELD");

  // The seeds' partial overlap: B asks F6+F7, learns F6 was taken, F7 stays free.
  auto conflict = Hold(8, R"(["F6", "F7"])");
  ExpectError(conflict, 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(json::parse(conflict.body)["seats"], json::array({"F6"}));
  EXPECT_EQ(json::parse(conflict.body)["error"],
            "Seats [F6, F7] of showtime " + std::to_string(showtime_) + " are not available");
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][16]["status"], "AVAILABLE");

  auto extended = Call("POST", "/holds/" + id + "/extend", "", {Bearer(Token(7))});
  ASSERT_EQ(extended.status, 200) << extended.body;
  EXPECT_EQ(json::parse(extended.body)["holdId"], id);

  EXPECT_EQ(Call("DELETE", "/holds/" + id, "", {Bearer(Token(7))}).status, 204);
  EXPECT_EQ(Call("DELETE", "/holds/" + id, "", {Bearer(Token(7))}).status, 204);
  EXPECT_EQ(json::parse(Call("GET", "/holds/" + id, "", {Bearer(Token(7))}).body)["status"],
            "RELEASED");
  ExpectError(Call("POST", "/holds/" + id + "/extend", "", {Bearer(Token(7))}), 409,
              "HOLD_NOT_ACTIVE");
  EXPECT_EQ(Hold(8, R"(["F6", "F7"])").status, 201);
}

TEST_P(HttpApi, HoldsAreVisibleOnlyToTheirOwner) {
  auto created = Hold(7, R"(["E5"])");
  ASSERT_EQ(created.status, 201);
  const std::string id = json::parse(created.body)["holdId"];
  const std::string before = SeatState();
  ExpectError(Call("GET", "/holds/" + id, "", {Bearer(Token(8))}), 404, "NOT_FOUND");
  ExpectError(Call("DELETE", "/holds/" + id, "", {Bearer(Token(8))}), 404, "NOT_FOUND");
  ExpectError(Call("POST", "/holds/" + id + "/extend", "", {Bearer(Token(8))}), 404, "NOT_FOUND");
  ExpectError(Call("GET", "/holds/" + NewUuid(), "", {Bearer(Token(7))}), 404, "NOT_FOUND");
  ExpectError(Call("GET", "/holds/not-a-uuid", "", {Bearer(Token(7))}), 404, "NOT_FOUND");
  EXPECT_EQ(SeatState(), before);
  EXPECT_EQ(Call("GET", "/holds/" + id, "", {Bearer(Token(7))}).status, 200);
}

TEST_P(HttpApi, BadRequestsGetClearErrorsAndChangeNothing) {
  ASSERT_EQ(Hold(3, R"(["E9"])").status, 201);
  const std::string before = SeatState();
  const std::string tok = Token(9);
  struct Case {
    std::string body;
    int status;
    std::string code;
  };
  const std::vector<Case> cases = {
      {"not json", 400, "BAD_JSON"},
      {"", 400, "BAD_JSON"},
      {R"({"seats": ["E1")", 400, "BAD_JSON"},
      {"[]", 400, "VALIDATION_FAILED"},
      {"{}", 400, "VALIDATION_FAILED"},
      {R"({"seats": "E1"})", 400, "VALIDATION_FAILED"},
      {R"({"seats": []})", 400, "VALIDATION_FAILED"},
      {R"({"seats": [1]})", 400, "VALIDATION_FAILED"},
      {R"({"seats": ["E1","E2","E3","E4","E5","E6","E7","E8","F1"]})", 400, "VALIDATION_FAILED"},
      {R"({"seats": ["E1", "E1"]})", 400, "VALIDATION_FAILED"},
      {R"({"seats": ["e1"]})", 400, "VALIDATION_FAILED"},
      {R"({"seats": ["E01"]})", 400, "VALIDATION_FAILED"},
      {R"({"seats": ["E1", "Z1"]})", 400, "UNKNOWN_SEATS"},
      {R"({"seats": ["E1", "E11"]})", 400, "UNKNOWN_SEATS"},
      {R"({"seats": ["E1", "E9"]})", 409, "SEATS_UNAVAILABLE"},
  };
  for (const Case& c : cases) {
    auto r = Call("POST", Holds(), c.body, {Bearer(tok)});
    ExpectError(r, c.status, c.code);
  }
  auto unknown = Call("POST", Holds(), R"({"seats": ["E1", "Z1"]})", {Bearer(tok)});
  EXPECT_EQ(json::parse(unknown.body)["seats"], json::array({"Z1"}));
  ExpectError(Call("POST", "/showtimes/999999/holds", R"({"seats": ["E1"]})", {Bearer(tok)}), 404,
              "NOT_FOUND");
  // 64 KiB is the limit; one byte more is refused before it is parsed.
  std::string big = R"({"seats": ["E1"], "pad": ")" + std::string(64 * 1024, 'x') + "\"}";
  ExpectError(Call("POST", Holds(), big, {Bearer(tok)}), 413, "PAYLOAD_TOO_LARGE");
  EXPECT_EQ(SeatState(), before);
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
}

TEST_P(HttpApi, TokensAreCheckedStrictly) {
  const std::string before = SeatState();
  const std::string body = R"({"seats": ["E1"]})";
  const std::string claims = Base64UrlEncode(
      R"({"sub":"5","exp":)" + std::to_string(ToEpochMs(SystemClock().Now()) / 1000 + 600) + "}");
  const std::vector<std::vector<std::pair<std::string, std::string>>> bad = {
      {},
      {{"Authorization", "Token abc"}},
      {{"Authorization", "Bearer "}},
      {{"Authorization", "Bearer not.a.token"}},
      {Bearer(Token(5, false, Millis(-60'000)))},  // expired past the 30 s leeway
      {Bearer(SignJwt(Principal{5, false}, SystemClock().Now() + Millis(600'000),
                      "another-secret-another-secret-000"))},
      {Bearer(Base64UrlEncode(R"({"alg":"none","typ":"JWT"})") + "." + claims + ".")},
  };
  for (const auto& headers : bad) {
    auto r = Call("POST", Holds(), body, headers);
    ExpectError(r, 401, "UNAUTHENTICATED");
    EXPECT_EQ(r.Header("www-authenticate").rfind("Bearer", 0), 0u);
  }
  ExpectError(Call("GET", "/holds/" + NewUuid()), 401, "UNAUTHENTICATED");
  EXPECT_EQ(SeatState(), before);
  // The seat map and showtimes are public.
  EXPECT_EQ(Call("GET", Seats()).status, 200);
}

TEST_P(HttpApi, AdminShowtimeValidation) {
  const std::string admin = Token(1, true);
  ExpectError(Call("POST", "/admin/showtimes", kLayout), 401, "UNAUTHENTICATED");
  ExpectError(Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(2))}), 403, "FORBIDDEN");
  auto layout = [](const std::string& rows,
                   const std::string& prices =
                       R"({"standard": {"amount": 1250, "currency": "EUR"}})") {
    return R"({"title": "T", "cinema": "C", "hall": "H", "startsAt": "2026-12-18T19:30:00.000Z", "rows": )" +
           rows + R"(, "prices": )" + prices + "}";
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{", "BAD_JSON"},
      {layout(
           R"([{"row": "A", "seats": 10, "category": "standard"}, {"row": "A", "seats": 5, "category": "standard"}])"),
       "VALIDATION_FAILED"},
      {layout("[]"), "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 0, "category": "standard"}])"), "VALIDATION_FAILED"},
      {layout(
           R"([{"row": "A", "seats": 600, "category": "standard"}, {"row": "B", "seats": 401, "category": "standard"}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "vip"}])"), "VALIDATION_FAILED"},
      {layout(R"([{"row": "a", "seats": 10, "category": "standard"}])"), "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard"}])",
              R"({"standard": {"amount": -1, "currency": "EUR"}})"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard"}])",
              R"({"standard": {"amount": 100, "currency": "euro"}})"),
       "VALIDATION_FAILED"},
  };
  const std::string before = Call("GET", "/showtimes").body;
  for (const auto& [body, code] : cases)
    ExpectError(Call("POST", "/admin/showtimes", body, {Bearer(admin)}), 400, code);
  EXPECT_EQ(Call("GET", "/showtimes").body, before);
  auto ok = Call(
      "POST", "/admin/showtimes",
      layout(
          R"([{"row": "A", "seats": 600, "category": "standard"}, {"row": "B", "seats": 400, "category": "standard"}])"),
      {Bearer(admin)});
  EXPECT_EQ(ok.status, 201) << ok.body;
}

// Holds expire by themselves: the map shows the seat AVAILABLE (lazy expiry at read time)
// and the sweeper inside `serve` tidies the row. Real time here (the binary's clock), so
// the hold lasts one second and the test polls, bounded, instead of asserting timings.
TEST_P(HttpApi, HoldsExpireAndTheSweeperRunsInsideServe) {
  Start(db_, {"--hold-ttl", "1s", "--hold-max-lifetime", "1s", "--sweep-interval", "100ms"});
  auto created = Hold(6, R"(["E3"])");
  ASSERT_EQ(created.status, 201);
  const std::string id = json::parse(created.body)["holdId"];
  bool swept = false;
  for (int i = 0; i < 200 && !swept; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    swept = Call("GET", "/metrics").body.find("boxoffice_sweeper_released_seats_total 1\n") !=
            std::string::npos;
  }
  EXPECT_TRUE(swept);
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][2]["status"], "AVAILABLE");
  EXPECT_EQ(json::parse(Call("GET", "/holds/" + id, "", {Bearer(Token(6))}).body)["status"],
            "EXPIRED");
  ExpectError(Call("POST", "/holds/" + id + "/extend", "", {Bearer(Token(6))}), 409,
              "HOLD_NOT_ACTIVE");
  EXPECT_EQ(Call("DELETE", "/holds/" + id, "", {Bearer(Token(6))}).status, 204);
  EXPECT_EQ(Hold(7, R"(["E3"])").status, 201);
}

// The gateway's callback through the real binary. Checkout is not an endpoint yet, so the
// test starts the booking through the store directly (the same database the service uses).
class PaymentCallbacks : public HttpApi {
 protected:
  std::unique_ptr<Store> Direct() {
    if (GetParam() == Engine::kSqlite) {
      SqliteOptions o;
      o.path = db_.substr(std::string("sqlite:").size());
      return std::make_unique<SqliteStore>(o, &clock_);
    }
    PgOptions o;
    o.url = db_;
    return std::make_unique<PgStore>(o);
  }
  HttpResult Callback(const std::string& body, const std::string& signature) {
    return Call("POST", "/payments/callback", body, {{"X-Gateway-Signature", signature}});
  }
  HttpResult Signed(const std::string& body) {
    return Callback(body, SignGatewayPayload(kGatewaySecret, SystemClock().Now(), body));
  }
  static std::string Report(const std::string& payment_id, int64_t booking_id,
                            int64_t amount = 2900, const std::string& status = "SUCCEEDED") {
    return json{{"paymentId", payment_id},
                {"sessionId", "ses_" + payment_id},
                {"reference", std::to_string(booking_id)},
                {"status", status},
                {"amount", amount},
                {"currency", "EUR"}}
        .dump();
  }
  SystemClock clock_;
};

TEST_P(PaymentCallbacks, ASignedCallbackConfirmsTheBookingOnce) {
  auto hold = Hold(21, R"(["E1", "F1"])");
  ASSERT_EQ(hold.status, 201);
  auto store = Direct();
  auto booking = store->StartCheckout(json::parse(hold.body)["holdId"], 21, Millis(600'000),
                                      Millis(1'200'000));
  ASSERT_TRUE(booking.ok()) << booking.status().message();
  const std::string path = "/bookings/" + std::to_string(booking->id);
  auto pending = Call("GET", path, "", {Bearer(Token(21))});
  ASSERT_EQ(pending.status, 200);
  EXPECT_EQ(json::parse(pending.body)["status"], "PENDING");
  EXPECT_EQ(json::parse(pending.body)["amount"], (json{{"amount", 2900}, {"currency", "EUR"}}));
  ExpectError(Call("GET", path, "", {Bearer(Token(22))}), 404, "NOT_FOUND");
  ExpectError(Call("GET", path), 401, "UNAUTHENTICATED");

  auto first = Signed(Report("pay_e2e", booking->id));
  ASSERT_EQ(first.status, 200) << first.body;
  EXPECT_EQ(json::parse(first.body)["outcome"], "confirmed");
  auto second = Signed(Report("pay_e2e", booking->id));
  EXPECT_EQ(second.status, 200);
  EXPECT_EQ(json::parse(second.body)["outcome"], "duplicate");
  auto confirmed = json::parse(Call("GET", path, "", {Bearer(Token(21))}).body);
  EXPECT_EQ(confirmed["status"], "CONFIRMED");
  EXPECT_EQ(confirmed["paymentId"], "pay_e2e");
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
  // The outbox relay inside `serve` writes the event to the events file, once.
  std::vector<json> events;
  for (int i = 0; i < 300 && events.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    events = service_->Events();
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "BookingConfirmed");
  EXPECT_EQ(events[0]["bookingId"], booking->id);
  EXPECT_EQ(events[0]["seats"], json::array({"E1", "F1"}));
}

TEST_P(PaymentCallbacks, UnsignedOrMalformedCallbacksChangeNothing) {
  const std::string body = Report("pay_forged", 12345);
  const int64_t now_s = ToEpochMs(SystemClock().Now()) / 1000;
  const std::string good = SignGatewayPayload(kGatewaySecret, SystemClock().Now(), body);
  const std::vector<std::pair<std::string, std::string>> refused = {
      {"", body},
      {SignGatewayPayload("another-gateway-secret", SystemClock().Now(), body), body},
      {good, Report("pay_forged", 12345, 1)},
      {SignGatewayPayload(kGatewaySecret, SystemClock().Now() - Millis(3'600'000), body), body},
      {"t=" + std::to_string(now_s) + ",v1=00", body},
  };
  for (const auto& [signature, sent] : refused)
    ExpectError(Callback(sent, signature), 401, "UNAUTHENTICATED");
  ExpectError(Call("POST", "/payments/callback", body), 401, "UNAUTHENTICATED");
  ExpectError(Signed("{not json"), 400, "BAD_JSON");
  ExpectError(Signed(R"({"paymentId": "p"})"), 400, "VALIDATION_FAILED");
  ExpectError(Signed(Report("pay_bad", 1, 100, "MAYBE")), 400, "VALIDATION_FAILED");
  auto store = Direct();
  EXPECT_TRUE(store->PendingRefunds(100)->empty());
  // The forged payment was never recorded: signed properly now, it is new (and refunded,
  // since it matches no booking).
  auto real = Signed(body);
  EXPECT_EQ(json::parse(real.body)["outcome"], "unknown_recorded");
  EXPECT_EQ(store->PendingRefunds(100)->size(), 1u);
}

// The same through `boxoffice fake-gateway`, a separate process that signs and delivers
// callbacks the way a real gateway does.
class GatewayCallbacks : public PaymentCallbacks {
 protected:
  void SetUp() override {
    PaymentCallbacks::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    gateway_ = std::make_unique<Service>(std::vector<std::string>{
        "fake-gateway", "--listen", "127.0.0.1:0", "--secret", kGatewaySecret});
  }
  HttpResult Gateway(const std::string& method, const std::string& target,
                     const std::string& body = "",
                     const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return HttpCall(gateway_->port(), method, target, body, headers);
  }
  // Holds E1+F1 for `customer`, checks out through the store, opens a gateway session.
  std::pair<Booking, std::string> Checkout(int64_t customer, Millis ttl = Millis(600'000)) {
    auto hold = Hold(customer, R"(["E1", "F1"])");
    EXPECT_EQ(hold.status, 201);
    auto booking =
        Direct()->StartCheckout(json::parse(hold.body)["holdId"], customer, ttl, ttl + ttl);
    EXPECT_TRUE(booking.ok());
    const std::string callback =
        "http://127.0.0.1:" + std::to_string(service_->port()) + "/payments/callback";
    auto session = Gateway("POST", "/v1/sessions",
                           json{{"amount", booking->amount.amount},
                                {"currency", "EUR"},
                                {"reference", std::to_string(booking->id)},
                                {"callbackUrl", callback},
                                {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(480'000))}}
                               .dump());
    EXPECT_EQ(session.status, 201) << session.body;
    return {booking.value(), json::parse(session.body)["sessionId"]};
  }
  HttpResult Pay(const std::string& session, const std::string& outcome,
                 const std::string& delivery) {
    return Gateway("POST", "/v1/sessions/" + session + "/pay",
                   json{{"outcome", outcome}, {"delivery", delivery}, {"delayMs", 0}}.dump());
  }
  // Polls GET /bookings/{id} until its status is `want` (or gives up after ~6 s).
  std::string AwaitStatus(const Booking& b, const std::string& want) {
    std::string status;
    for (int i = 0; i < 300 && status != want; ++i) {
      status = json::parse(Call("GET", "/bookings/" + std::to_string(b.id), "",
                                {Bearer(Token(b.customer_id))})
                               .body)
                   .value("status", "");
      if (status != want) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return status;
  }
  double Settled(const std::string& outcome) {
    const std::string body = Call("GET", "/metrics").body;
    const std::string series = "boxoffice_payments_settled_total{outcome=\"" + outcome + "\"} ";
    const size_t at = body.find(series);
    return at == std::string::npos ? 0 : std::stod(body.substr(at + series.size()));
  }
  std::unique_ptr<Service> gateway_;
};

TEST_P(GatewayCallbacks, DeliveredTwiceConfirmsOnceWithOneEvent) {
  auto [booking, session] = Checkout(31);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "twice").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  for (int i = 0; i < 300 && Settled("duplicate") < 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(Settled("confirmed"), 1);
  EXPECT_EQ(Settled("duplicate"), 1);
  auto status = json::parse(Gateway("GET", "/v1/sessions/" + session).body);
  EXPECT_EQ(status["status"], "PAID");
  EXPECT_EQ(
      json::parse(Call("GET", "/bookings/" + std::to_string(booking.id), "", {Bearer(Token(31))})
                      .body)["paymentId"],
      status["paymentId"]);
  std::vector<json> events;
  for (int i = 0; i < 300 && events.empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    events = service_->Events();
  }
  EXPECT_EQ(events.size(), 1u);
}

TEST_P(GatewayCallbacks, AFailedPaymentKeepsTheHold) {
  auto [booking, session] = Checkout(32);
  ASSERT_EQ(Pay(session, "FAILED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "FAILED"), "FAILED");
  EXPECT_EQ(
      json::parse(Call("GET", "/holds/" + booking.hold_id, "", {Bearer(Token(32))}).body)["status"],
      "HELD");
  EXPECT_TRUE(
      Direct()->StartCheckout(booking.hold_id, 32, Millis(600'000), Millis(1'200'000)).ok());
}

TEST_P(GatewayCallbacks, ACallbackThatNeverComesLeavesTheBookingPending) {
  auto [booking, session] = Checkout(33);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(AwaitStatus(booking, "PENDING"), "PENDING");
  // The gateway knows it was paid: the question the reconciler will ask.
  auto status = json::parse(Gateway("GET", "/v1/sessions/" + session).body);
  EXPECT_EQ(status["status"], "PAID");
  EXPECT_TRUE(status.contains("paymentId"));
  ExpectError(Pay(session, "SUCCEEDED", "normal"), 409, "NOT_OPEN");
}

TEST_P(GatewayCallbacks, ALateCallbackIsRefundedOnceAndTheNewHolderKeepsTheSeats) {
  Start(db_, {"--hold-ttl", "1s", "--hold-max-lifetime", "2s", "--gateway-url",
              "http://127.0.0.1:" + std::to_string(gateway_->port())});
  auto [booking, session] = Checkout(34, Millis(1'000));
  std::this_thread::sleep_for(std::chrono::milliseconds(1'100));
  auto newer = Hold(35, R"(["E1"])");
  ASSERT_EQ(newer.status, 201);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "FAILED"), "FAILED");
  EXPECT_EQ(
      json::parse(Call("GET", "/holds/" + json::parse(newer.body)["holdId"].get<std::string>(), "",
                       {Bearer(Token(35))})
                      .body)["status"],
      "HELD");
  // The refund worker inside `serve` gives the money back, once, and the booking ends REFUNDED.
  EXPECT_EQ(AwaitStatus(booking, "REFUNDED"), "REFUNDED");
  const std::string payment =
      json::parse(Gateway("GET", "/v1/sessions/" + session).body)["paymentId"];
  auto refunds = json::parse(Gateway("GET", "/v1/refunds?paymentId=" + payment).body)["refunds"];
  ASSERT_EQ(refunds.size(), 1u);
  EXPECT_EQ(refunds[0]["amount"], 2900);
  EXPECT_TRUE(Direct()->PendingRefunds(10)->empty());
}

TEST_P(GatewayCallbacks, TheReconcilerSettlesACallbackThatNeverCame) {
  Start(db_, {"--reconcile-after", "200ms", "--reconcile-interval", "100ms", "--gateway-url",
              "http://127.0.0.1:" + std::to_string(gateway_->port())});
  auto [booking, session] = Checkout(37);
  ASSERT_TRUE(
      Direct()
          ->AttachPaymentSession(booking.id, session, "", SystemClock().Now() + Millis(480'000))
          .ok());
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
}

TEST_P(GatewayCallbacks, RefundsAreIdempotentByKey) {
  auto [booking, session] = Checkout(36);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  const std::string payment =
      json::parse(Gateway("GET", "/v1/sessions/" + session).body)["paymentId"];
  const std::string body = json{{"paymentId", payment}, {"amount", 2900}}.dump();
  ExpectError(Gateway("POST", "/v1/refunds", body), 400, "IDEMPOTENCY_KEY_REQUIRED");
  auto first = Gateway("POST", "/v1/refunds", body, {{"Idempotency-Key", "r-1"}});
  auto again = Gateway("POST", "/v1/refunds", body, {{"Idempotency-Key", "r-1"}});
  ASSERT_EQ(first.status, 201);
  EXPECT_EQ(first.body, again.body);
  auto list = json::parse(Gateway("GET", "/v1/refunds?paymentId=" + payment).body)["refunds"];
  EXPECT_EQ(list.size(), 1u);
  ExpectError(Gateway("POST", "/v1/refunds", json{{"paymentId", "pay_nope"}, {"amount", 1}}.dump(),
                      {{"Idempotency-Key", "r-2"}}),
              404, "NOT_FOUND");
}

// A real gateway retries callbacks that are not answered 2xx; so does the fake one. The
// receiver here is an in-process server that refuses twice, then accepts, and checks
// every delivery's signature.
TEST(FakeGateway, RetriesCallbacksUntilTheyAreAccepted) {
  std::mutex mu;
  std::vector<std::string> bodies;
  std::atomic<int> calls{0}, bad_signatures{0};
  http::Router router;
  router.Add(
      "POST", "/hook",
      [&](http::Request& req) {
        const std::string* sig = req.headers.Find("X-Gateway-Signature");
        if (!sig ||
            !VerifyGatewaySignature(*sig, req.body, kGatewaySecret, SystemClock().Now()).ok())
          ++bad_signatures;
        {
          std::lock_guard lock(mu);
          bodies.push_back(req.body);
        }
        http::Response r;
        r.status = ++calls <= 2 ? 503 : 200;
        return r;
      },
      /*blocking=*/false);
  Metrics metrics;
  http::ServerOptions options;
  options.port = 0;
  options.io_threads = 1;
  options.worker_threads = 1;
  http::Server receiver(options, &router, &metrics);
  ASSERT_TRUE(receiver.Start());
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret});
  auto session = HttpCall(
      gateway.port(), "POST", "/v1/sessions",
      json{{"amount", 100},
           {"currency", "EUR"},
           {"reference", "1"},
           {"callbackUrl", "http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook"},
           {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(60'000))}}
          .dump());
  ASSERT_EQ(session.status, 201);
  const std::string id = json::parse(session.body)["sessionId"];
  ASSERT_EQ(
      HttpCall(gateway.port(), "POST", "/v1/sessions/" + id + "/pay", R"({"delivery": "normal"})")
          .status,
      200);
  for (int i = 0; i < 300 && calls.load() < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no fourth delivery after the 200
  receiver.Stop();
  EXPECT_EQ(calls.load(), 3);
  EXPECT_EQ(bad_signatures.load(), 0);
  std::lock_guard lock(mu);
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[0], bodies[2]);  // the same payment each time
  EXPECT_EQ(json::parse(bodies[0])["status"], "SUCCEEDED");
}

INSTANTIATE_TEST_SUITE_P(Engines, GatewayCallbacks,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const auto& info) {
                           return info.param == Engine::kSqlite ? "Sqlite" : "Postgres";
                         });

INSTANTIATE_TEST_SUITE_P(Engines, PaymentCallbacks,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const auto& info) {
                           return info.param == Engine::kSqlite ? "Sqlite" : "Postgres";
                         });

TEST_P(HttpApi, StopsCleanlyOnSigterm) {
  ASSERT_EQ(Hold(4, R"(["E2"])").status, 201);
  EXPECT_EQ(service_->Terminate(), 0);
  const std::string log = service_->Log();
  EXPECT_NE(log.find("\"msg\":\"stopped\""), std::string::npos) << log;
  // Every log line is one JSON object.
  std::istringstream lines(log);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_TRUE(json::parse(line, nullptr, false).is_object()) << line;
  }
}

// With SQLite another process can hold the write lock, which lets these tests keep a
// request waiting on the database for as long as they like.
class SqliteLocked : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = testing::TempDir() + "/locked.db";
    service_ = std::make_unique<Service>("sqlite:" + path_);
    auto created =
        HttpCall(service_->port(), "POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
    ASSERT_EQ(created.status, 201);
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
  }
  void TearDown() override { sqlite3_close(db_); }
  void Lock() {
    ASSERT_EQ(sqlite3_exec(db_, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  void Unlock() { ASSERT_EQ(sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK); }
  std::future<HttpResult> HoldAsync(const std::string& seat) {
    return std::async(std::launch::async, [this, seat] {
      return HttpCall(service_->port(), "POST", "/showtimes/1/holds",
                      R"({"seats": [")" + seat + R"("]})", {Bearer(Token(11))});
    });
  }
  // Waits until the service has a request in flight on the database (from /metrics).
  void AwaitRequestInFlight() {
    for (int i = 0; i < 500; ++i) {
      if (Gauge("boxoffice_http_requests_in_flight") >= 2) return;  // the hold and this scrape
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "no request in flight";
  }
  double Gauge(const std::string& name) {
    const std::string body = HttpCall(service_->port(), "GET", "/metrics").body;
    const size_t at = body.find("\n" + name + " ");
    return at == std::string::npos ? -1 : std::stod(body.substr(at + name.size() + 2));
  }

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Service> service_;
};

// A request waiting on the database occupies a worker, never an I/O thread: the service
// keeps answering, and the request completes once the database lets it.
TEST_F(SqliteLocked, DatabaseWaitsNeverBlockTheIoThreads) {
  Lock();
  auto hold = HoldAsync("E1");
  AwaitRequestInFlight();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(HttpCall(service_->port(), "GET", "/healthz").status, 200);
  Unlock();
  EXPECT_EQ(hold.get().status, 201);
}

// A database that stays locked past the busy timeout gives 503 UNAVAILABLE with
// Retry-After, and nothing is held.
TEST_F(SqliteLocked, ADatabaseThatDoesNotAnswerGives503) {
  Lock();
  auto hold = HoldAsync("E1").get();
  Unlock();
  EXPECT_EQ(hold.status, 503) << hold.body;
  EXPECT_EQ(json::parse(hold.body)["code"], "UNAVAILABLE");
  EXPECT_EQ(hold.Header("retry-after"), "1");
  auto map = json::parse(HttpCall(service_->port(), "GET", "/showtimes/1/seats").body);
  EXPECT_EQ(map["seats"][0]["status"], "AVAILABLE");
}

// SIGTERM while a request is in flight: the request still gets its answer, then the
// process exits 0.
TEST_F(SqliteLocked, SigtermLetsInFlightRequestsFinish) {
  Lock();
  auto hold = HoldAsync("E2");
  AwaitRequestInFlight();
  std::thread unlock([this] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    Unlock();
  });
  EXPECT_EQ(service_->Terminate(), 0);
  unlock.join();
  EXPECT_EQ(hold.get().status, 201);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db_, "SELECT status FROM show_seat WHERE seat_code = 'E2'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "HELD");
  sqlite3_finalize(stmt);
}

INSTANTIATE_TEST_SUITE_P(Engines, HttpApi, ::testing::Values(Engine::kSqlite, Engine::kPostgres),
                         [](const auto& info) {
                           return info.param == Engine::kSqlite ? "Sqlite" : "Postgres";
                         });

}  // namespace
}  // namespace boxoffice
