// Cancelling a showtime end to end, through the real binary and the fake gateway, on SQLite,
// PostgreSQL and two shards: the admin's cancel answers 202 (again: 202, nothing more), the
// showtime and its map say CANCELLED, holds and queue joins get 410, the paid bookings are
// refunded at the gateway exactly once with a BookingRefunded event naming the reason, a
// payment made after the cancel is refunded too, and the admin trail names who did it. A
// customer cancels their own booking of a showtime that allows it: refunded at the gateway
// once however many clicks, the seats for sale again at once.
#include "e2e/e2e_fixture.h"
#include "support/backends.h"
#include "support/redis_server.h"
#include "support/sse_client.h"

namespace boxoffice::e2e {
namespace {

class CancelShowtime : public GatewayCallbacks {
 protected:
  HttpResult Cancel(int64_t showtime, const std::string& body, bool admin = true) {
    return Call("POST", "/admin/showtimes/" + std::to_string(showtime) + "/cancel", body,
                {Bearer(Token(admin ? 7 : 8, admin))});
  }
  std::string PaymentOf(const Booking& b) {
    auto id = json::parse(
        Call("GET", "/bookings/" + std::to_string(b.id), "", {Bearer(Token(b.customer_id))})
            .body)["paymentId"];
    return id.is_string() ? id.get<std::string>() : "";
  }
  // The payment the gateway took for a session (a booking the cancel failed keeps none).
  std::string PaymentOfSession(const std::string& session) {
    auto id = json::parse(Gateway("GET", "/v1/sessions/" + session).body)["paymentId"];
    return id.is_string() ? id.get<std::string>() : "";
  }
  size_t RefundsAtGateway(const std::string& payment_id) {
    return json::parse(Gateway("GET", "/v1/refunds?paymentId=" + payment_id).body)
        .at("refunds")
        .size();
  }
  void CustomerCancels();
  // With the Redis gate: whether the gate holds a key for the seat (redis-cli).
  bool GateHasKey(const std::string& code) {
    const std::string command = "redis-cli -p " + std::to_string(redis_port_) + " EXISTS 'seat:{" +
                                std::to_string(showtime_) + "}:" + code + "'";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return false;
    char out[64] = {};
    const size_t n = fread(out, 1, sizeof out - 1, pipe);
    pclose(pipe);
    return n > 0 && out[0] == '1';
  }
  unsigned short redis_port_ = 0;  // the gate's Redis, when there is one
  // The BookingRefunded events published for a booking, once there are `want` (~6 s).
  std::vector<json> RefundedEvents(int64_t booking_id, size_t want) {
    std::vector<json> out;
    for (int i = 0; i < 300; ++i) {
      out.clear();
      for (const json& e : PublishedFor(booking_id)) {
        if (e.value("type", "") == "BookingRefunded") out.push_back(e);
      }
      if (out.size() >= want) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return out;
  }
};

TEST_P(CancelShowtime, PaidBookingsAreRefundedOnceAndNothingMoreIsSold) {
  const Booking first = BoughtWithEmail(11, "", R"(["E1"])");
  const Booking second = BoughtWithEmail(12, "", R"(["E2", "E3"])");
  auto [paying, session] = CheckedOutWithEmail(13, "", R"(["F1"])");
  ASSERT_EQ(Hold(14, R"(["F5"])").status, 201);

  // Refused as they should be, changing nothing.
  ExpectError(Cancel(showtime_, R"({"reason": "x"})", /*admin=*/false), 403, "FORBIDDEN");
  ExpectError(Cancel(showtime_, R"({"reason": 5})"), 400, "VALIDATION_FAILED");
  ExpectError(Cancel(showtime_, R"({"why": "x"})"), 400, "VALIDATION_FAILED");
  ExpectError(Cancel(showtime_, json{{"reason", std::string(501, 'x')}}.dump()), 400,
              "VALIDATION_FAILED");
  ExpectError(Cancel(showtime_ + 1'000'000, "{}"), 404, "NOT_FOUND");
  EXPECT_EQ(AwaitStatus(first, "CONFIRMED"), "CONFIRMED");

  // What the admin sees before: sales and the bookings, by status.
  const std::string admin = "/admin/showtimes/" + std::to_string(showtime_);
  auto sales = Call("GET", admin + "/sales", "", {Bearer(Token(7, true))});
  ASSERT_EQ(sales.status, 200) << sales.body;
  auto figures = json::parse(sales.body);
  EXPECT_EQ(figures["status"], "SCHEDULED");
  EXPECT_EQ(figures["seats"]["booked"], 3);
  EXPECT_EQ(figures["seats"]["held"], 2);  // F1 in checkout, F5 held
  EXPECT_EQ(figures["bookings"]["confirmed"], 2);
  EXPECT_EQ(figures["bookings"]["pending"], 1);
  EXPECT_GT(figures["revenue"]["amount"].get<int64_t>(), 0);
  EXPECT_EQ(figures["checkedIn"], 0);
  auto listed =
      Call("GET", admin + "/bookings?status=CONFIRMED&limit=1", "", {Bearer(Token(7, true))});
  ASSERT_EQ(listed.status, 200) << listed.body;
  auto page = json::parse(listed.body);
  ASSERT_EQ(page["bookings"].size(), 1u);
  EXPECT_EQ(page["bookings"][0]["customerId"], 11);
  ASSERT_TRUE(page["nextCursor"].is_string());
  auto rest = json::parse(
      Call("GET",
           admin + "/bookings?status=CONFIRMED&cursor=" + page["nextCursor"].get<std::string>(), "",
           {Bearer(Token(7, true))})
          .body);
  ASSERT_EQ(rest["bookings"].size(), 1u);
  EXPECT_EQ(rest["bookings"][0]["customerId"], 12);
  EXPECT_TRUE(rest["nextCursor"].is_null());
  ExpectError(Call("GET", admin + "/bookings?status=SOLD", "", {Bearer(Token(7, true))}), 400,
              "VALIDATION_FAILED");
  ExpectError(Call("GET", admin + "/sales", "", {Bearer(Token(8))}), 403, "FORBIDDEN");
  const std::string unknown = "/admin/showtimes/" + std::to_string(showtime_ + 1'000'000);
  for (const char* what : {"/sales", "/bookings", "/changes"}) {
    ExpectError(Call("GET", unknown + what, "", {Bearer(Token(7, true))}), 404, "NOT_FOUND");
  }

  auto cancelled = Cancel(showtime_, R"({"reason": "projector broken"})");
  ASSERT_EQ(cancelled.status, 202) << cancelled.body;
  auto body = json::parse(cancelled.body);
  EXPECT_EQ(body["status"], "CANCELLED");
  EXPECT_EQ(body["alreadyCancelled"], false);
  EXPECT_EQ(body["bookingsRefunded"], 2);
  EXPECT_EQ(body["bookingsPending"], 1);
  auto again = Cancel(showtime_, "");
  ASSERT_EQ(again.status, 202) << again.body;
  EXPECT_EQ(json::parse(again.body)["alreadyCancelled"], true);

  // The showtime and its map say so; nothing more is sold.
  auto showtime = json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_)).body);
  EXPECT_EQ(showtime["status"], "CANCELLED");
  auto map = json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_) + "/seats").body);
  EXPECT_EQ(map["status"], "CANCELLED");
  for (const json& seat : map["seats"]) EXPECT_NE(seat["status"], "AVAILABLE") << seat;
  ExpectError(Hold(15, R"(["E9"])"), 410, "SHOWTIME_CANCELLED");
  ExpectError(
      Call("POST", "/showtimes/" + std::to_string(showtime_) + "/queue", "", {Bearer(Token(15))}),
      410, "SHOWTIME_CANCELLED");

  // The customer who pays after the cancel gets the money back.
  ASSERT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(paying, "REFUNDED"), "REFUNDED");

  // Each paid booking: REFUNDED, one refund at the gateway, one event with the reason.
  const Booking paid_late = paying;
  for (const Booking* b : {&first, &second, &paid_late}) {
    EXPECT_EQ(AwaitStatus(*b, "REFUNDED"), "REFUNDED") << b->id;
    const std::string payment = b == &paid_late ? PaymentOfSession(session) : PaymentOf(*b);
    ASSERT_FALSE(payment.empty()) << b->id;
    for (int i = 0; i < 300 && RefundsAtGateway(payment) == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_EQ(RefundsAtGateway(payment), 1u) << b->id;
    auto events = RefundedEvents(b->id, 1);
    ASSERT_EQ(events.size(), 1u) << b->id;
    EXPECT_EQ(events[0]["reason"], "SHOWTIME_CANCELLED") << b->id;
  }

  // The trail: one change, by the admin who made it.
  auto changes = Call("GET", "/admin/showtimes/" + std::to_string(showtime_) + "/changes", "",
                      {Bearer(Token(7, true))});
  ASSERT_EQ(changes.status, 200) << changes.body;
  auto trail = json::parse(changes.body)["changes"];
  ASSERT_EQ(trail.size(), 1u);
  EXPECT_EQ(trail[0]["actor"], 7);
  EXPECT_EQ(trail[0]["action"], "CANCEL");
  EXPECT_EQ(trail[0]["after"]["reason"], "projector broken");
  EXPECT_EQ(Call("GET", "/admin/showtimes/" + std::to_string(showtime_) + "/changes", "",
                 {Bearer(Token(8))})
                .status,
            403);

  figures = json::parse(Call("GET", admin + "/sales", "", {Bearer(Token(7, true))}).body);
  EXPECT_EQ(figures["status"], "CANCELLED");
  EXPECT_EQ(figures["revenue"]["amount"], 0);
  EXPECT_EQ(figures["bookings"]["refunded"], 3);
  // The refunds' progress, on the admin's figures and in /metrics, until all are issued.
  const std::string issued_metric =
      "showtime=\"" + std::to_string(showtime_) + "\",state=\"issued\"} 3\n";
  bool issued = false;
  for (int i = 0; i < 500 && !issued; ++i) {
    figures = json::parse(Call("GET", admin + "/sales", "", {Bearer(Token(7, true))}).body);
    issued = figures["refunds"]["issued"] == 3 &&
             Call("GET", "/metrics").body.find(issued_metric) != std::string::npos;
    if (!issued) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(issued) << figures.dump();
  EXPECT_EQ(figures["refunds"]["pending"], 0);
  EXPECT_EQ(figures["refunds"]["refused"], 0);

  auto audit = Direct()->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
}

void CancelShowtime::CustomerCancels() {
  // A showtime customers may cancel until an hour before its start.
  json layout = json::parse(kLayout);
  layout["refundUntilMinutesBefore"] = 60;
  auto created = Call("POST", "/admin/showtimes", layout.dump(), {Bearer(Token(1, true))});
  ASSERT_EQ(created.status, 201) << created.body;
  showtime_ = json::parse(created.body)["showtimeId"].get<int64_t>();
  EXPECT_EQ(
      json::parse(
          Call("GET", "/showtimes/" + std::to_string(showtime_)).body)["refundUntilMinutesBefore"],
      60);
  const Booking b = BoughtWithEmail(21, "", R"(["E1", "E2"])");
  const std::string cancel = "/bookings/" + std::to_string(b.id) + "/cancel";
  ExpectError(Call("POST", cancel, "", {Bearer(Token(22))}), 404, "NOT_FOUND");
  ExpectError(Call("POST", cancel, R"({"x": 1})", {Bearer(Token(21))}), 400, "VALIDATION_FAILED");
  EXPECT_EQ(AwaitStatus(b, "CONFIRMED"), "CONFIRMED");
  if (redis_port_) {
    // A sold seat's key stays until the start (set on the side: waited for).
    for (int i = 0; i < 300 && !GateHasKey("E1"); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_TRUE(GateHasKey("E1"));
  }
  // The live stream hears the seats released once: only the click that refunded the booking
  // frees its seats (a later click's seats may be someone else's by then).
  testing::SseClient stream(service_->port(),
                            "/showtimes/" + std::to_string(showtime_) + "/seats/stream");
  ASSERT_EQ(stream.status(), 200);
  for (int click = 0; click < 3; ++click) {
    auto r = Call("POST", cancel, "", {Bearer(Token(21))});
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["status"], "REFUNDED");
    if (click == 0) {
      auto released = stream.Next(std::chrono::milliseconds(5'000));
      ASSERT_TRUE(released.has_value());
      EXPECT_EQ(json::parse(*released)["type"], "SeatsReleased");
      EXPECT_EQ(json::parse(*released)["seats"], json::array({"E1", "E2"}));
    }
  }
  EXPECT_FALSE(stream.Next(std::chrono::milliseconds(500)).has_value());
  if (redis_port_) {  // removed before the answer
    EXPECT_FALSE(GateHasKey("E1"));
    EXPECT_FALSE(GateHasKey("E2"));
  }
  // The seats read AVAILABLE at once and another customer holds them.
  auto map = json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_) + "/seats").body);
  for (const json& seat : map["seats"]) {
    if (seat["code"] == "E1" || seat["code"] == "E2") {
      EXPECT_EQ(seat["status"], "AVAILABLE");
    }
  }
  EXPECT_EQ(Hold(23, R"(["E1", "E2"])").status, 201);
  // Refunded at the gateway once, one event with the reason.
  const std::string payment = PaymentOf(b);
  for (int i = 0; i < 300 && RefundsAtGateway(payment) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(RefundsAtGateway(payment), 1u);
  auto events = RefundedEvents(b.id, 1);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "CUSTOMER_CANCELLED");
  // The fixture's showtime allows no cancelling.
  showtime_ =
      json::parse(
          Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))}).body)["showtimeId"]
          .get<int64_t>();
  const Booking fixed = BoughtWithEmail(24, "", R"(["E1"])");
  ExpectError(
      Call("POST", "/bookings/" + std::to_string(fixed.id) + "/cancel", "", {Bearer(Token(24))}),
      409, "NOT_REFUNDABLE");
  EXPECT_EQ(Direct()->Audit()->violations(), 0);
}

TEST_P(CancelShowtime, AnEditChangesWhatMayChangeAndRefusesTheRest) {
  const std::string path = "/admin/showtimes/" + std::to_string(showtime_);
  auto patch = [&](const std::string& body, bool admin = true) {
    return Call("PATCH", path, body, {Bearer(Token(admin ? 7 : 8, admin))});
  };
  const json before = json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_)).body);
  json prices = before["prices"];
  for (auto& [category, price] : prices.items()) price["amount"] = 999;
  auto edited = patch(
      json{{"title", "Late show"}, {"prices", prices}, {"refundUntilMinutesBefore", 30}}.dump());
  ASSERT_EQ(edited.status, 200) << edited.body;
  auto now = json::parse(edited.body);
  EXPECT_EQ(now["title"], "Late show");
  EXPECT_EQ(now["refundUntilMinutesBefore"], 30);
  EXPECT_EQ(now["status"], "SCHEDULED");
  for (auto& [category, price] : now["prices"].items()) EXPECT_EQ(price["amount"], 999);
  EXPECT_EQ(json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_)).body)["title"],
            "Late show");
  // Refused, changing nothing.
  ExpectError(patch(R"({"title": "x"})", /*admin=*/false), 403, "FORBIDDEN");
  ExpectError(patch(R"({"rows": []})"), 400, "VALIDATION_FAILED");
  ExpectError(patch("{}"), 400, "VALIDATION_FAILED");
  ExpectError(patch(R"({"startsAt": "2001-01-01T00:00:00Z"})"), 400, "VALIDATION_FAILED");
  ExpectError(patch(R"({"refundUntilMinutesBefore": -1})"), 400, "VALIDATION_FAILED");
  ExpectError(Call("PATCH", "/admin/showtimes/" + std::to_string(showtime_ + 1'000'000),
                   R"({"title": "x"})", {Bearer(Token(7, true))}),
              404, "NOT_FOUND");
  // A seat held: the prices are fixed; the title still changes.
  ASSERT_EQ(Hold(41, R"(["E1"])").status, 201);
  for (auto& [category, price] : prices.items()) price["amount"] = 1;
  ExpectError(patch(json{{"prices", prices}}.dump()), 409, "SALES_STARTED");
  ASSERT_EQ(patch(R"({"title": "Later show"})").status, 200);
  auto changes =
      json::parse(Call("GET", path + "/changes", "", {Bearer(Token(7, true))}).body)["changes"];
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0]["after"]["title"], "Later show");
  EXPECT_EQ(changes[1]["before"]["refundUntilMinutesBefore"], nullptr);
  EXPECT_EQ(changes[1]["after"]["refundUntilMinutesBefore"], 30);
}

// A customer in checkout when the showtime is cancelled pays anyway, and the gateway's
// callback never comes: the reconciler asks the gateway about the booking, still PENDING,
// and the money goes back.
TEST_P(CancelShowtime, APaymentWhoseCallbackNeverComesAfterTheCancelIsRefunded) {
  // Long enough that a checkout still opening its session (slow under the sanitizers) is not
  // taken for a dead one and abandoned; short enough for the polls below.
  StartServe({"--reconcile-after", "1500ms", "--reconcile-interval", "100ms"});
  auto [paying, session] = CheckedOutWithEmail(31, "", R"(["F2"])");
  auto cancelled = Cancel(showtime_, "{}");
  ASSERT_EQ(cancelled.status, 202) << cancelled.body;
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  EXPECT_EQ(AwaitStatus(paying, "REFUNDED"), "REFUNDED");
  const std::string payment = PaymentOfSession(session);
  ASSERT_FALSE(payment.empty());
  for (int i = 0; i < 300 && RefundsAtGateway(payment) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(RefundsAtGateway(payment), 1u);
  EXPECT_EQ(Direct()->Audit()->violations(), 0);
}

TEST_P(CancelShowtime, ACustomerCancelsTheirBookingAndTheSeatsAreForSaleAgain) {
  CustomerCancels();
}

// The production profile: the Redis gate keeps a sold seat's key until the start; a
// customer's cancel removes it before the answer, so the next customer's hold is not
// turned away by it.
class CancelWithRedis : public CancelShowtime {
 protected:
  void SetUp() override {
    BOX_REQUIRE_REDIS();
    redis_ = std::make_unique<testing::RedisServer>();
    ASSERT_TRUE(redis_->ok());
    CancelShowtime::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StartServe({"--redis", redis_->url(), "--redis-timeout", "1s"});
    redis_port_ = redis_->port();
  }
  std::unique_ptr<testing::RedisServer> redis_;
};

TEST_P(CancelWithRedis, ACustomerCancelsTheirBookingAndTheSeatsAreForSaleAgain) {
  ASSERT_EQ(json::parse(Call("GET", "/readyz").body).value("redis", ""), "ok");
  CustomerCancels();
}

INSTANTIATE_TEST_SUITE_P(Engines, CancelShowtime, AllEngines(), EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, CancelWithRedis, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
