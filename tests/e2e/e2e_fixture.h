// The fixtures of the end-to-end suites: the real `boxoffice` binary started as a child
// process (serve or fake-gateway) on SQLite or PostgreSQL, spoken to over HTTP.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "core/crypto.h"
#include "core/gateway_signature.h"
#include "core/jwt.h"
#include "core/time_format.h"
#include "store/pg_store.h"
#include "store/sharded_store.h"
#include "store/sqlite_store.h"
#include "support/engines.h"
#include "support/http_client.h"
#include "support/process.h"
#include "support/test_env.h"

extern char** environ;

namespace boxoffice::e2e {

using nlohmann::json;
using testing::HttpCall;
using testing::HttpResult;

inline const std::string kSecret = "e2e-secret-e2e-secret-e2e-secret-0123";
inline const std::string kGatewaySecret = "e2e-gateway-secret-0123";

// kShards here: `serve` on two PostgreSQL shards (--db "URL1 URL2", as BOXOFFICE_DB
// splits).
using testing::AllEngines;
using testing::Engine;
using testing::EngineName;

inline std::string Token(int64_t customer, bool admin = false, Millis ttl = Millis(3'600'000)) {
  return SignJwt(Principal{customer, admin}, SystemClock().Now() + ttl, kSecret);
}

inline std::pair<std::string, std::string> Bearer(const std::string& token) {
  return {"Authorization", "Bearer " + token};
}

class Service {
 public:
  // Starts `serve` on a port the kernel picks (127.0.0.1:0) and learns it from the
  // "listening" log line, so parallel tests never race for a port.
  Service(const std::string& db, std::vector<std::string> extra = {},
          const std::vector<std::string>& env = {})
      : Service(ServeArgs(db, std::move(extra)), env) {}

  // Runs BOXOFFICE_BINARY with args (its subcommand first), e.g. fake-gateway, with
  // env ("NAME=value") added to this process's environment.
  explicit Service(std::vector<std::string> args, const std::vector<std::string>& env = {}) {
    log_ = testing::TempDir() + "/process.log";
    args.insert(args.begin(), BOXOFFICE_BINARY);
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--events-file") events_ = args[i + 1];
    }
    pid_ = testing::Spawn(args, log_, env);
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
  // serve with the tests' defaults; a flag given in `extra` replaces its default.
  static std::vector<std::string> ServeArgs(const std::string& db, std::vector<std::string> extra) {
    const std::vector<std::pair<std::string, std::string>> defaults = {
        {"--listen", "127.0.0.1:0"},
        {"--db", db},
        {"--jwt-secret", kSecret},
        {"--gateway-secret", kGatewaySecret},
        {"--events-file", testing::TempDir() + "/events.jsonl"},
        {"--holds-per-minute", "100000"},  // tests hold often; HoldAttemptsAreRateLimited sets 5
    };
    std::vector<std::string> args = {"serve"};
    for (const auto& [flag, value] : defaults) {
      if (std::find(extra.begin(), extra.end(), flag) != extra.end()) continue;
      args.push_back(flag);
      args.push_back(value);
    }
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }

  // SIGTERM, as an orchestrator stops it; SIGKILL if it is still there after 5 s.
  ~Service() {
    if (pid_ > 0 && Terminate(5) < 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  // SIGKILL, as a crash: nothing of it runs after this.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = 0;
  }
  // SIGTERM, then the exit status (or -1 if it did not stop within `seconds`).
  int Terminate(int seconds = 15) {
    kill(pid_, SIGTERM);
    for (int i = 0; i < seconds * 100; ++i) {
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

inline const std::string kLayout =
    R"({"title": "Dune: Part Three", "cinema": "Odeon Leicester Square",
  "hall": "Screen 1", "startsAt": "2099-12-18T19:30:00.000Z",
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
      if (GetParam() == Engine::kShards) db += " " + testing::FreshPostgresSchemaUrl();
    }
    db_ = db;
    Start(db, {});
  }

  void Start(const std::string& db, std::vector<std::string> flags) {
    service_.reset();
    service_ = std::make_unique<Service>(db, std::move(flags));
    if (GetParam() == Engine::kShards) {
      // A new showtime goes to the shard with the fewest: this one to shard 0, the test's to
      // shard 1 (whose ids and hold ids carry its number), and the test's next ones alternate.
      auto first = Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
      ASSERT_EQ(first.status, 201) << first.body;
    }
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

  // Showtimes Start made (with shards, one more so the test's lands on shard 1).
  int SetupShowtimes() const { return GetParam() == Engine::kShards ? 2 : 1; }

  std::unique_ptr<Service> service_;
  std::string db_;
  int64_t showtime_ = 0;
};

// The gateway's callback through the real binary, with hand-made callbacks: the booking is
// started through the store directly (the same database the service uses), so each test
// controls every field of the report it signs.
class PaymentCallbacks : public HttpApi {
 protected:
  std::unique_ptr<Store> Direct() {
    if (GetParam() == Engine::kSqlite) {
      SqliteOptions o;
      o.path = db_.substr(std::string("sqlite:").size());
      return std::make_unique<SqliteStore>(o, &clock_);
    }
    if (GetParam() == Engine::kShards) {
      std::vector<std::unique_ptr<PgStore>> shards;
      std::istringstream urls(db_);
      for (std::string url; urls >> url;) {
        PgOptions o;
        o.url = url;
        shards.push_back(std::make_unique<PgStore>(o));
      }
      auto store = std::make_unique<ShardedStore>(std::move(shards));
      EXPECT_TRUE(store->Migrate().ok());  // learns the numbers serve gave the shards
      return store;
    }
    PgOptions o;
    o.url = db_;
    return std::make_unique<PgStore>(o);
  }
  // The unpublished outbox rows of every database (each shard has its own outbox).
  std::vector<OutboxEvent> DirectEvents() {
    auto store = Direct();
    std::vector<OutboxEvent> all;
    for (const Store::Database& db : store->Databases()) {
      auto some = db.outbox->PendingEvents(0, 1'000);
      EXPECT_TRUE(some.ok()) << some.status().message();
      if (some.ok()) all.insert(all.end(), some->begin(), some->end());
    }
    return all;
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

using Headers = std::vector<std::pair<std::string, std::string>>;

// `serve` and `boxoffice fake-gateway` as two processes: purchases made through the API and
// paid at the gateway, the way a customer's browser does.
class GatewayCallbacks : public PaymentCallbacks {
 protected:
  void SetUp() override {
    PaymentCallbacks::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    gateway_ = std::make_unique<Service>(std::vector<std::string>{
        "fake-gateway", "--listen", "127.0.0.1:0", "--secret", kGatewaySecret});
    StartServe({});
  }
  std::string GatewayUrl() const { return "http://127.0.0.1:" + std::to_string(gateway_->port()); }
  // (Re)starts `serve` on the same database, speaking to the fake gateway.
  void StartServe(std::vector<std::string> flags) {
    flags.insert(flags.end(), {"--gateway-url", GatewayUrl()});
    Start(db_, std::move(flags));
  }
  HttpResult Gateway(const std::string& method, const std::string& target,
                     const std::string& body = "", const Headers& headers = {}) {
    return HttpCall(gateway_->port(), method, target, body, headers);
  }
  HttpResult CheckoutCall(int64_t customer, const std::string& hold_id, const std::string& key,
                          const std::string& body = "") {
    Headers headers = {Bearer(Token(customer))};
    if (!key.empty()) headers.emplace_back("Idempotency-Key", key);
    return Call("POST", "/holds/" + hold_id + "/checkout", body, headers);
  }
  std::string HoldId(int64_t customer, const std::string& seats_json) {
    auto hold = Hold(customer, seats_json);
    EXPECT_EQ(hold.status, 201) << hold.body;
    return json::parse(hold.body).value("holdId", "");
  }
  // Holds E1+F1 for `customer` and checks out through the API: the booking and its session.
  std::pair<Booking, std::string> Checkout(int64_t customer) {
    const std::string hold_id = HoldId(customer, R"(["E1", "F1"])");
    auto r = CheckoutCall(customer, hold_id, "key-" + NewUuid());
    EXPECT_EQ(r.status, 201) << r.body;
    auto body = json::parse(r.body);
    Booking b;
    b.id = body.value("bookingId", int64_t{0});
    b.hold_id = hold_id;
    b.customer_id = customer;
    return {b, body["payment"].value("sessionId", "")};
  }
  // The sessions the gateway opened for a booking (a list that needs the gateway's secret).
  size_t SessionsFor(int64_t booking_id) {
    return json::parse(Gateway("GET", "/v1/sessions?reference=" + std::to_string(booking_id), "",
                               {{"Authorization", "Bearer " + kGatewaySecret}})
                           .body)
        .at("sessions")
        .size();
  }
  // A customer's token carrying an e-mail address (none when email is empty).
  static std::string TokenWithEmail(int64_t customer, const std::string& email) {
    Principal who;
    who.customer_id = customer;
    who.email = email;
    return SignJwt(who, SystemClock().Now() + Millis(3'600'000), kSecret);
  }
  // Holds seats_json (["E1"]) for customer, whose token carries email, and checks out: the
  // booking and its payment session.
  std::pair<Booking, std::string> CheckedOutWithEmail(int64_t customer, const std::string& email,
                                                      const std::string& seats_json) {
    auto hold = Call("POST", Holds(), R"({"seats": )" + seats_json + "}",
                     {Bearer(TokenWithEmail(customer, email))});
    EXPECT_EQ(hold.status, 201) << hold.body;
    const std::string hold_id = json::parse(hold.body).value("holdId", "");
    auto checkout = Call("POST", "/holds/" + hold_id + "/checkout", "{}",
                         {Bearer(TokenWithEmail(customer, email)), {"Idempotency-Key", "buy"}});
    EXPECT_EQ(checkout.status, 201) << checkout.body;
    auto body = json::parse(checkout.body);
    Booking b;
    b.id = body.value("bookingId", int64_t{0});
    b.customer_id = customer;
    return {b, body["payment"].value("sessionId", "")};
  }
  // The same, paid at the gateway: the booking, once CONFIRMED.
  Booking BoughtWithEmail(int64_t customer, const std::string& email,
                          const std::string& seats_json) {
    auto [b, session] = CheckedOutWithEmail(customer, email, seats_json);
    EXPECT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
    EXPECT_EQ(AwaitStatus(b, "CONFIRMED"), "CONFIRMED");
    return b;
  }
  HttpResult Pay(const std::string& session, const std::string& outcome,
                 const std::string& delivery, int delay_ms = 0) {
    return Gateway(
        "POST", "/v1/sessions/" + session + "/pay",
        json{{"outcome", outcome}, {"delivery", delivery}, {"delayMs", delay_ms}}.dump());
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
  // Payment reports settled so far, whatever their outcome.
  double SettledInAll() {
    std::istringstream lines(Call("GET", "/metrics").body);
    const std::string series = "boxoffice_payments_settled_total{";
    double sum = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(series, 0) == 0) sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
    return sum;
  }
  // The events the relay published for a booking.
  std::vector<json> PublishedFor(int64_t booking_id) {
    std::vector<json> out;
    for (const json& e : service_->Events()) {
      if (e.value("bookingId", int64_t{0}) == booking_id) out.push_back(e);
    }
    return out;
  }
  std::unique_ptr<Service> gateway_;
};

}  // namespace boxoffice::e2e
