// The production profile's parts through the real binary: `serve --redis` with a
// redis-server of the test's own, on SQLite and PostgreSQL.
#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/crypto.h"
#include "e2e/e2e_fixture.h"
#include "support/backends.h"
#include "support/mock_kafka.h"
#include "support/redis_server.h"
#include "support/sse_client.h"

namespace boxoffice::e2e {
namespace {

class WithRedis : public HttpApi {
 protected:
  void SetUp() override {
    BOX_REQUIRE_REDIS();
    redis_ = std::make_unique<testing::RedisServer>();
    ASSERT_TRUE(redis_->ok());
    HttpApi::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Start(db_, {"--redis", redis_->url(), "--redis-timeout", "1s"});
  }
  double Metric(const std::string& series) { return MetricOf(service_->port(), series); }
  static double MetricOf(unsigned short port, const std::string& series) {
    const std::string body = HttpCall(port, "GET", "/metrics").body;
    const size_t at = body.find("\n" + series + " ");
    return at == std::string::npos ? -1 : std::stod(body.substr(at + series.size() + 2));
  }
  // Redis's answer to command once it satisfies ok, or the last one after 2 s: for what the
  // service sends aside of its answer (re-arming and keeping a hold's keys).
  std::string CliOnce(const std::string& command,
                      const std::function<bool(const std::string&)>& ok) {
    std::string reply = redis_->Cli(command);
    for (int i = 0; i < 100 && !ok(reply); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      reply = redis_->Cli(command);
    }
    return reply;
  }
  static bool Above(const std::string& reply, long long floor) {
    return !reply.empty() && std::stoll(reply) > floor;
  }
  std::unique_ptr<testing::RedisServer> redis_;
};

TEST_P(WithRedis, HoldsPassTheGateWhichTurnsTakenSeatsAwayAtOnce) {
  auto ready = Call("GET", "/readyz");
  EXPECT_EQ(ready.status, 200);
  EXPECT_EQ(json::parse(ready.body)["redis"], "ok");
  auto first = Hold(1, R"(["E1", "E2"])");
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string hold_id = json::parse(first.body)["holdId"];
  const std::string key = "seat:{" + std::to_string(showtime_) + "}:E1";
  EXPECT_EQ(redis_->Cli("GET " + key), hold_id + "\n");
  auto second = Hold(2, R"(["E2", "E3"])");
  ExpectError(second, 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(json::parse(second.body)["seats"], json::array({"E2"}));
  EXPECT_EQ(Metric("boxoffice_gate_total{outcome=\"rejected\"}"), 1);
  EXPECT_EQ(redis_->Cli("EXISTS seat:{" + std::to_string(showtime_) + "}:E3"), "0\n");
  // Extend re-arms the keys; release removes them, and the seats are free at once.
  ASSERT_EQ(Call("POST", "/holds/" + hold_id + "/extend", "", {Bearer(Token(1))}).status, 200);
  EXPECT_GT(std::stoi(CliOnce("PTTL " + key, [](auto& r) { return Above(r, 500'000); })), 500'000);
  ASSERT_EQ(Call("DELETE", "/holds/" + hold_id, "", {Bearer(Token(1))}).status, 204);
  EXPECT_EQ(redis_->Cli("EXISTS " + key), "0\n");
  EXPECT_EQ(Hold(2, R"(["E2", "E3"])").status, 201);
}

TEST_P(WithRedis, WithoutRedisHoldsGoToTheStoreAndTheGateComesBack) {
  ASSERT_EQ(Hold(1, R"(["F1"])").status, 201);
  redis_->Kill();
  auto ready = Call("GET", "/readyz");
  ExpectError(ready, 503, "UNAVAILABLE");
  // Slower, never wrong: the store still decides.
  EXPECT_EQ(Hold(2, R"(["F2"])").status, 201);
  ExpectError(Hold(3, R"(["F1"])"), 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(Metric("boxoffice_gate_up"), 0);
  ASSERT_TRUE(redis_->Start());  // empty: it forgot every key
  bool back = false;
  for (int i = 0; i < 100 && !back; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // The gate rests 1 s after a failure, then tries Redis again on the next hold.
    auto probe = Hold(4, "[\"E" + std::to_string(1 + i % 10) + "\"]");
    if (probe.status == 201) {
      Call("DELETE", "/holds/" + json::parse(probe.body)["holdId"].get<std::string>(), "",
           {Bearer(Token(4))});
    }
    back = Metric("boxoffice_gate_up") == 1;
  }
  EXPECT_TRUE(back);
  EXPECT_EQ(Call("GET", "/readyz").status, 200);
  // Wiped keys make the gate say yes; the store still says no to a held seat.
  ExpectError(Hold(5, R"(["F1"])"), 409, "SEATS_UNAVAILABLE");
}

// A release that never reached Redis (sent into a connection that then broke) leaves the
// seats' keys with the hold's whole TTL while the store has the seats free. The map shows
// them AVAILABLE, so when the gate calls them taken the store is asked, gives them, and
// the keys are repaired: no free seat is turned away for ten minutes.
TEST_P(WithRedis, KeysALostReleaseLeftBehindAreRepairedByTheStoresYes) {
  auto first = Hold(1, R"(["E7", "E8"])");
  ASSERT_EQ(first.status, 201) << first.body;
  const std::string first_id = json::parse(first.body)["holdId"];
  const std::string key = "seat:{" + std::to_string(showtime_) + "}:E7";
  ASSERT_EQ(Call("DELETE", "/holds/" + first_id, "", {Bearer(Token(1))}).status, 204);
  // (The release is sent aside of the answer: wait for it to land before undoing it.)
  for (int i = 0; i < 200 && redis_->Cli("GET " + key) != "\n"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_EQ(redis_->Cli("GET " + key), "\n");
  // The release is lost: the keys are back as the hold left them.
  for (const char* seat : {"E7", "E8"}) {
    redis_->Cli("SET seat:{" + std::to_string(showtime_) + "}:" + seat + " " + first_id +
                " PX 600000");
  }
  ASSERT_EQ(redis_->Cli("GET " + key), first_id + "\n");
  auto map = json::parse(Call("GET", Seats()).body);
  EXPECT_EQ(map["seats"][6]["code"], "E7");
  EXPECT_EQ(map["seats"][6]["status"], "AVAILABLE");
  auto second = Hold(2, R"(["E7", "E8"])");
  ASSERT_EQ(second.status, 201) << second.body;

  const std::string second_id = json::parse(second.body)["holdId"];
  EXPECT_EQ(redis_->Cli("GET " + key), second_id + "\n") << "the keys were repaired";
  EXPECT_EQ(Metric("boxoffice_gate_disputed_total"), 1);
  // And the gate turns the next customer away at once again.
  ExpectError(Hold(3, R"(["E8"])"), 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(Metric("boxoffice_gate_disputed_total"), 1) << "the map shows E8 held now";
}

// Checkout re-arms the keys with the hold; a confirmed payment keeps them until the
// showtime starts, so sold seats stay behind the gate.
TEST_P(WithRedis, BookedSeatsStayBehindTheGateUntilTheShowtimeStarts) {
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret});
  Start(db_, {"--redis", redis_->url(), "--redis-timeout", "1s", "--gateway-url",
              "http://127.0.0.1:" + std::to_string(gateway.port())});
  // A showtime 30 days from now, whatever day the test runs.
  auto layout = json::parse(kLayout);
  layout["startsAt"] = FormatRfc3339(SystemClock().Now() + Millis(30LL * 86'400'000));
  auto created = Call("POST", "/admin/showtimes", layout.dump(), {Bearer(Token(1, true))});
  ASSERT_EQ(created.status, 201);
  showtime_ = json::parse(created.body)["showtimeId"];
  auto hold = Hold(9, R"(["F9"])");
  ASSERT_EQ(hold.status, 201);
  const std::string hold_id = json::parse(hold.body)["holdId"];
  const std::string key = "seat:{" + std::to_string(showtime_) + "}:F9";
  auto checkout = Call("POST", "/holds/" + hold_id + "/checkout", "",
                       {Bearer(Token(9)), {"Idempotency-Key", "k"}});
  ASSERT_EQ(checkout.status, 201) << checkout.body;
  EXPECT_GT(std::stoi(CliOnce("PTTL " + key, [](auto& r) { return Above(r, 590'000); })), 590'000);
  const std::string session = json::parse(checkout.body)["payment"]["sessionId"];
  ASSERT_EQ(HttpCall(gateway.port(), "POST", "/v1/sessions/" + session + "/pay",
                     R"({"outcome": "SUCCEEDED"})")
                .status,
            200);
  const std::string booking =
      "/bookings/" + std::to_string(json::parse(checkout.body)["bookingId"].get<int64_t>());
  std::string status;
  for (int i = 0; i < 300 && status != "CONFIRMED"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    status = json::parse(Call("GET", booking, "", {Bearer(Token(9))}).body).value("status", "");
  }
  ASSERT_EQ(status, "CONFIRMED");
  EXPECT_EQ(redis_->Cli("GET " + key), hold_id + "\n");
  // The showtime starts in 30 days: the key lives for days, not minutes.
  constexpr long long kDay = 24LL * 3'600'000;
  EXPECT_GT(std::stoll(CliOnce("PTTL " + key, [](auto& r) { return Above(r, kDay); })), kDay);
  ExpectError(Hold(10, R"(["F9"])"), 409, "SEATS_UNAVAILABLE");
}

// serve --kafka: a purchase's BookingConfirmed reaches topic booking-events, keyed by the
// booking, with its id and type as headers; its showtime cancelled, its BookingRefunded
// with the reason SHOWTIME_CANCELLED.
TEST_P(HttpApi, ServeWithKafkaPublishesBookingEvents) {
  testing::MockKafka kafka;
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret});
  Start(db_, {"--kafka", kafka.bootstraps(), "--gateway-url",
              "http://127.0.0.1:" + std::to_string(gateway.port())});
  auto hold = Hold(5, R"(["E5"])");
  ASSERT_EQ(hold.status, 201);
  auto checkout =
      Call("POST", "/holds/" + json::parse(hold.body)["holdId"].get<std::string>() + "/checkout",
           "", {Bearer(Token(5)), {"Idempotency-Key", "k"}});
  ASSERT_EQ(checkout.status, 201) << checkout.body;
  const std::string session = json::parse(checkout.body)["payment"]["sessionId"];
  ASSERT_EQ(HttpCall(gateway.port(), "POST", "/v1/sessions/" + session + "/pay",
                     R"({"outcome": "SUCCEEDED"})")
                .status,
            200);
  auto messages = kafka.ReadAll(1, std::chrono::seconds(15));
  ASSERT_EQ(messages.size(), 1u);
  auto event = json::parse(messages[0].value);
  EXPECT_EQ(event["type"], "BookingConfirmed");
  EXPECT_EQ(messages[0].key,
            std::to_string(json::parse(checkout.body)["bookingId"].get<int64_t>()));
  EXPECT_EQ(messages[0].id, event["id"]);
  EXPECT_EQ(messages[0].type, "BookingConfirmed");

  // The showtime cancelled: the booking's BookingRefunded follows, with the reason.
  ASSERT_EQ(Call("POST", "/admin/showtimes/" + std::to_string(showtime_) + "/cancel",
                 R"({"reason": "projector broken"})", {Bearer(Token(1, true))})
                .status,
            202);
  messages = kafka.ReadAll(2, std::chrono::seconds(15));
  ASSERT_EQ(messages.size(), 2u);
  const auto refunded = std::find_if(messages.begin(), messages.end(),
                                     [](const auto& m) { return m.type == "BookingRefunded"; });
  ASSERT_NE(refunded, messages.end());
  event = json::parse(refunded->value);
  EXPECT_EQ(event["type"], "BookingRefunded");
  EXPECT_EQ(event["reason"], "SHOWTIME_CANCELLED");
  EXPECT_EQ(event["bookingId"], json::parse(checkout.body)["bookingId"]);
  EXPECT_EQ(refunded->key, messages[0].key);
}

// `boxoffice relay` killed with SIGKILL while it drains a backlog into Kafka, then started
// again: every event arrives (some twice; consumers dedupe on id), none is lost.
TEST(RelayProcess, KilledMidBacklogLosesNothing) {
  testing::MockKafka kafka;
  const std::string path = testing::TempDir() + "/relay.db";
  SystemClock clock;
  SqliteOptions o;
  o.path = path;
  SqliteStore store(o, &clock);
  ASSERT_TRUE(store.Migrate().ok());
  // 2,000 confirmed bookings: 2,000 events waiting in the outbox.
  for (int hall = 0; hall < 2; ++hall) {
    NewShowtime st;
    st.title = "Backlog";
    st.cinema = "C";
    st.hall = "H" + std::to_string(hall);
    st.starts_at = clock.Now() + Millis(86'400'000);
    for (int r = 0; r < 50; ++r)
      st.rows.push_back({std::string(1, 'A' + r % 26) + (r >= 26 ? "A" : ""), 20, "std"});
    st.prices["std"] = Price{1000, "EUR"};
    auto id = store.CreateShowtime(st);
    ASSERT_TRUE(id.ok()) << id.status().message();
    for (const auto& row : st.rows) {
      for (int n = 1; n <= 20; ++n) {
        auto h = store.HoldSeats(
            HoldRequest{NewUuid(), id.value(), 1, {row.row + std::to_string(n)}, Millis(600'000)});
        ASSERT_TRUE(h.ok());
        auto b = store.StartCheckout(h->hold_id, 1, Millis(600'000), Millis(1'200'000));
        ASSERT_TRUE(b.ok());
        ASSERT_EQ(store
                      .SettlePayment({"pay_" + std::to_string(b->id), "", std::to_string(b->id),
                                      true, 1000, "EUR"})
                      .value(),
                  Settlement::kConfirmed);
      }
    }
  }
  const auto events = store.PendingEvents(0, 10'000).value();
  ASSERT_EQ(events.size(), 2'000u);
  auto spawn = [&] {
    std::vector<std::string> args = {
        BOXOFFICE_BINARY, "relay",
        "--db",           "sqlite:" + path,
        "--kafka",        kafka.bootstraps(),
        "--outbox-lease", "2s",
        "--batch",        "20"};  // 100 deliveries: time to kill it midway
    return testing::Spawn(args);
  };
  auto pending = [&] { return store.PendingEvents(0, 10'000)->size(); };
  pid_t relay = spawn();
  // Killed as soon as it has published part of the backlog, likely with a batch in flight.
  for (int i = 0; i < 2'000 && pending() == events.size(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  kill(relay, SIGKILL);
  waitpid(relay, nullptr, 0);
  const size_t left = pending();
  EXPECT_LT(left, events.size());
  EXPECT_GT(left, 0u) << "the relay finished before it could be killed; no crash was tested";
  relay = spawn();  // takes over once the dead relay's 2 s lease has run out
  for (int i = 0; i < 3'000 && pending() > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  kill(relay, SIGTERM);
  waitpid(relay, nullptr, 0);
  EXPECT_EQ(pending(), 0u);
  std::map<std::string, int> seen;
  for (const auto& m : kafka.ReadAll(events.size(), std::chrono::seconds(20))) ++seen[m.id];
  size_t missing = 0, duplicated = 0;
  for (const auto& e : events) {
    if (seen[e.event_id] == 0) ++missing;
    if (seen[e.event_id] > 1) ++duplicated;
  }
  EXPECT_EQ(missing, 0u);
  std::cout << "events 2000, left after the kill " << left << ", delivered twice " << duplicated
            << "\n";
}

// --holds-per-minute across two instances sharing Redis: five attempts pass, whichever
// instance takes them, and the sixth gets 429 on either.
TEST_P(WithRedis, TheRateLimitHoldsAcrossInstances) {
  const std::vector<std::string> flags = {"--redis", redis_->url(),        "--redis-timeout",
                                          "1s",      "--holds-per-minute", "5"};
  Start(db_, flags);
  Service other(db_, flags);
  for (int i = 0; i < 5; ++i) {
    const unsigned short port = i % 2 ? other.port() : service_->port();
    auto r = HttpCall(port, "POST", Holds(), "{\"seats\": [\"E" + std::to_string(1 + i) + "\"]}",
                      {Bearer(Token(77))});
    EXPECT_EQ(r.status, 201) << r.body;
  }
  for (unsigned short port : {service_->port(), other.port()}) {
    auto r = HttpCall(port, "POST", Holds(), R"({"seats": ["F1"]})", {Bearer(Token(77))});
    ExpectError(r, 429, "RATE_LIMITED");
    EXPECT_GE(std::stoi(r.Header("retry-after")), 1);
  }
  EXPECT_EQ(
      HttpCall(other.port(), "POST", Holds(), R"({"seats": ["F1"]})", {Bearer(Token(78))}).status,
      201);
}

// Two instances on one database and one Redis: a hold made through one shows in the
// other's cached seat map within 2 s (API.md) and on its live stream, through Redis
// pub/sub; an unchanged map still answers 304.
TEST_P(WithRedis, ChangesThroughOneInstanceReachTheOther) {
  const std::vector<std::string> flags = {"--redis", redis_->url(), "--redis-timeout", "1s"};
  Service other(db_, flags);
  const std::string before = HttpCall(other.port(), "GET", Seats()).Header("etag");
  ASSERT_FALSE(before.empty());
  EXPECT_EQ(HttpCall(other.port(), "GET", Seats(), "", {{"If-None-Match", before}}).status, 304);
  testing::SseClient stream(other.port(), Seats() + "/stream");
  ASSERT_EQ(stream.status(), 200);
  // The subscribers may still be connecting right after start: wait until they listen.
  for (unsigned short port : {service_->port(), other.port()}) {
    for (int i = 0; i < 100 && MetricOf(port, "boxoffice_seat_changes_subscribed") != 1; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_EQ(MetricOf(port, "boxoffice_seat_changes_subscribed"), 1);
  }

  const auto held_at = std::chrono::steady_clock::now();
  auto hold = Hold(5, R"(["F3", "F4"])");
  ASSERT_EQ(hold.status, 201) << hold.body;
  auto event = stream.Next(std::chrono::seconds(2));
  ASSERT_TRUE(event.has_value());
  json change = json::parse(*event);
  EXPECT_EQ(change["type"], "SeatsHeld");
  EXPECT_EQ(change["seats"], json::array({"F3", "F4"}));
  std::string etag;
  json map;
  do {
    auto r = HttpCall(other.port(), "GET", Seats());
    etag = r.Header("etag");
    map = json::parse(r.body);
    if (etag != before) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  } while (std::chrono::steady_clock::now() - held_at < std::chrono::seconds(2));
  ASSERT_NE(etag, before) << "the other instance still shows the old map after 2 s";
  for (const auto& seat : map["seats"]) {
    if (seat["code"] == "F3") {
      EXPECT_EQ(seat["status"], "HELD");
    }
  }
  EXPECT_EQ(HttpCall(other.port(), "GET", Seats(), "", {{"If-None-Match", etag}}).status, 304);
  EXPECT_EQ(HttpCall(other.port(), "GET", Seats(), "", {{"If-None-Match", before}}).status, 200);
  // A release through the other instance reaches this one's stream the same way.
  testing::SseClient here(service_->port(), Seats() + "/stream");
  ASSERT_EQ(here.status(), 200);
  const std::string hold_id = json::parse(hold.body)["holdId"];
  ASSERT_EQ(HttpCall(other.port(), "DELETE", "/holds/" + hold_id, "", {Bearer(Token(5))}).status,
            204);
  auto released = here.Next(std::chrono::seconds(2));
  ASSERT_TRUE(released.has_value());
  EXPECT_EQ(json::parse(*released)["type"], "SeatsReleased");
}

// With Redis, instances share one waiting room: one queue, one limit, whichever instance a
// customer reaches; a room turned on through one instance is on for the other within a
// second or so (it reads the settings from the database every second).
TEST_P(WithRedis, InstancesShareOneWaitingRoom) {
  const std::vector<std::string> flags = {"--redis", redis_->url(), "--redis-timeout", "1s"};
  Service other(db_, flags);
  ASSERT_EQ(Call("PUT", "/admin/showtimes/" + std::to_string(showtime_) + "/waiting-room",
                 R"({"enabled": true, "activeLimit": 2, "admissionTtlSeconds": 60})",
                 {Bearer(Token(1, true))})
                .status,
            200);
  const std::string queue = "/showtimes/" + std::to_string(showtime_) + "/queue";
  HttpResult on_other;
  for (int i = 0; i < 100; ++i) {
    on_other = HttpCall(other.port(), "POST", Holds(), R"({"seats": ["E1"]})", {Bearer(Token(9))});
    if (on_other.status == 403) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ExpectError(on_other, 403, "NOT_ADMITTED");
  std::vector<json> joined;
  for (int64_t c = 21; c <= 25; ++c) {
    const unsigned short port = c % 2 ? other.port() : service_->port();
    auto r = HttpCall(port, "POST", queue, "", {Bearer(Token(c))});
    ASSERT_EQ(r.status, 201) << r.body;
    joined.push_back(json::parse(r.body));
  }
  for (size_t i = 0; i < joined.size(); ++i) {
    EXPECT_EQ(joined[i]["admitted"], i < 2) << i;
    EXPECT_EQ(joined[i]["position"], i < 2 ? 0 : i - 1) << i;
  }
  // An admission from one instance is good on the other.
  EXPECT_EQ(HttpCall(other.port(), "POST", Holds(), R"({"seats": ["E2"]})",
                     {Bearer(Token(22)), {"X-Admission-Token", joined[1]["admissionToken"]}})
                .status,
            201);
  auto status =
      HttpCall(service_->port(), "GET", queue + "/" + joined[4]["queueToken"].get<std::string>());
  EXPECT_EQ(json::parse(status.body)["position"], 3);
}

INSTANTIATE_TEST_SUITE_P(Engines, WithRedis, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
