// Checkout and payment end to end: `boxoffice serve` and `boxoffice fake-gateway` as two
// processes, the purchase made through POST /holds/{id}/checkout, the gateway's signed
// callbacks in every misfortune (twice, never, late, failed), the idempotency contract of
// API.md, and the process killed with SIGKILL at each recovery point of checkout.
#include <barrier>
#include <future>
#include <iostream>
#include <set>

#include "core/crypto.h"
#include "e2e/e2e_fixture.h"
#include "support/sse_client.h"

namespace boxoffice::e2e {
namespace {

TEST_P(GatewayCallbacks, CheckoutOpensOneSessionAndReplaysItsFirstAnswer) {
  const std::string hold_id = HoldId(41, R"(["E1", "F1"])");
  const auto before = SystemClock().Now();
  auto first = CheckoutCall(41, hold_id, "order-41-a");
  ASSERT_EQ(first.status, 201) << first.body;
  EXPECT_EQ(first.Header("idempotent-replayed"), "");
  auto body = json::parse(first.body);
  EXPECT_EQ(body["holdId"], hold_id);
  EXPECT_EQ(body["status"], "PENDING");
  EXPECT_EQ(body["amount"], (json{{"amount", 2900}, {"currency", "EUR"}}));
  const int64_t booking_id = body["bookingId"];
  const std::string session = body["payment"]["sessionId"];
  EXPECT_FALSE(body["payment"]["url"].get<std::string>().empty());
  // The session ends 8 minutes after checkout; the hold 10 minutes after it.
  const Instant session_ends = *ParseRfc3339(body["payment"]["expiresAt"].get<std::string>());
  EXPECT_GE(session_ends, before + Millis(480'000) - Millis(1'000));
  EXPECT_LE(session_ends, SystemClock().Now() + Millis(480'000) + Millis(1'000));
  auto hold = json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(41))}).body);
  EXPECT_EQ(*ParseRfc3339(hold["expiresAt"].get<std::string>()), session_ends + Millis(120'000));
  EXPECT_EQ(json::parse(Gateway("GET", "/v1/sessions/" + session).body)["status"], "OPEN");

  auto replay = CheckoutCall(41, hold_id, "order-41-a");
  EXPECT_EQ(replay.status, 201);
  EXPECT_EQ(replay.body, first.body);
  EXPECT_EQ(replay.Header("idempotent-replayed"), "true");
  EXPECT_EQ(SessionsFor(booking_id), 1u);

  auto booking = json::parse(
      Call("GET", "/bookings/" + std::to_string(booking_id), "", {Bearer(Token(41))}).body);
  EXPECT_EQ(booking["status"], "PENDING");
  EXPECT_EQ(booking["seats"], json::array({"E1", "F1"}));
  // Another key for the same pending hold meets the pending booking.
  auto second = CheckoutCall(41, hold_id, "order-41-b");
  ExpectError(second, 409, "CHECKOUT_EXISTS");
  EXPECT_EQ(json::parse(second.body)["bookingId"], booking_id);
  // The first key for another hold is a reuse.
  ExpectError(CheckoutCall(41, HoldId(41, R"(["E5"])"), "order-41-a"), 422,
              "IDEMPOTENCY_KEY_REUSED");
  EXPECT_EQ(SessionsFor(booking_id), 1u);
}

// The customer's way through the gateway (API.md, fake gateway): the session's `url` is an
// HTML page with Pay and Fail buttons; a press settles the session with a normal delivery
// and sends the browser back to the seat picker's booking page, the returnUrl checkout gave.
TEST_P(GatewayCallbacks, ThePayPageSettlesTheSessionAndSendsTheBrowserToTheBookingPage) {
  auto [booking, session] = Checkout(45);
  ASSERT_EQ(SessionsFor(booking.id), 1u);
  const std::string page_path = "/pay/" + session;

  auto page = Gateway("GET", page_path);
  ASSERT_EQ(page.status, 200) << page.body;
  EXPECT_EQ(page.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(page.body.find("29.00 EUR"), std::string::npos) << page.body;
  EXPECT_NE(page.body.find("value=\"SUCCEEDED\""), std::string::npos);
  EXPECT_NE(page.body.find("value=\"FAILED\""), std::string::npos);
  EXPECT_EQ(Gateway("GET", "/pay/ses_nope").status, 404);

  const Headers form = {{"Content-Type", "application/x-www-form-urlencoded"}};
  EXPECT_EQ(Gateway("POST", page_path, "outcome=MAYBE", form).status, 400);
  EXPECT_EQ(json::parse(Gateway("GET", "/v1/sessions/" + session).body)["status"], "OPEN");

  const std::string booking_page = "http://127.0.0.1:" + std::to_string(service_->port()) +
                                   "/#/bookings/" + std::to_string(booking.id);
  auto pressed = Gateway("POST", page_path, "outcome=SUCCEEDED", form);
  EXPECT_EQ(pressed.status, 303) << pressed.body;
  EXPECT_EQ(pressed.Header("location"), booking_page);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  // A second press (a double click, the back button) settles nothing and goes back again.
  auto again = Gateway("POST", page_path, "outcome=FAILED", form);
  EXPECT_EQ(again.status, 303) << again.body;
  EXPECT_EQ(again.Header("location"), booking_page);
  EXPECT_EQ(json::parse(Gateway("GET", "/v1/sessions/" + session).body)["status"], "PAID");
  auto settled = Gateway("GET", page_path);
  EXPECT_NE(settled.body.find("PAID"), std::string::npos);
  EXPECT_EQ(settled.body.find("<form"), std::string::npos);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  // A returnUrl goes into a Location header: one with a space or a line break is refused.
  for (const char* bad :
       {"http://127.0.0.1/x y", "http://127.0.0.1/x\r\nSet-Cookie: a=b", "ftp://x"}) {
    const std::string body = json{
        {"amount", 100},
        {"currency", "EUR"},
        {"reference", "1"},
        {"callbackUrl", "http://127.0.0.1:1/cb"},
        {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(60'000))},
        {"returnUrl", bad}}.dump();
    EXPECT_EQ(Gateway("POST", "/v1/sessions", body).status, 400) << bad;
  }
}

TEST_P(GatewayCallbacks, CheckoutRefusesBadRequestsAndChangesNothing) {
  const std::string hold_id = HoldId(42, R"(["E2"])");
  const std::string expires =
      json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(42))}).body)["expiresAt"];
  ExpectError(CheckoutCall(42, hold_id, ""), 400, "IDEMPOTENCY_KEY_REQUIRED");
  ExpectError(CheckoutCall(42, hold_id, std::string(256, 'k')), 400, "VALIDATION_FAILED");
  ExpectError(CheckoutCall(42, hold_id, "tab\tkey"), 400, "VALIDATION_FAILED");
  ExpectError(CheckoutCall(42, hold_id, "k", "{not json"), 400, "BAD_JSON");
  ExpectError(CheckoutCall(42, hold_id, "k", R"({"amount": 1})"), 400, "VALIDATION_FAILED");
  ExpectError(CheckoutCall(43, hold_id, "k"), 404, "NOT_FOUND");
  ExpectError(CheckoutCall(42, "not-a-hold", "k"), 404, "NOT_FOUND");
  ExpectError(CheckoutCall(42, NewUuid(), "k"), 404, "NOT_FOUND");
  ExpectError(Call("POST", "/holds/" + hold_id + "/checkout", "", {{"Idempotency-Key", "k"}}), 401,
              "UNAUTHENTICATED");
  auto hold = json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(42))}).body);
  EXPECT_EQ(hold["expiresAt"], expires);
  // None of those used up the key: it still works, for this hold, with an empty object.
  EXPECT_EQ(CheckoutCall(42, hold_id, "k", "{}").status, 201);
  // A released hold cannot be checked out.
  const std::string released = HoldId(42, R"(["E3"])");
  ASSERT_EQ(Call("DELETE", "/holds/" + released, "", {Bearer(Token(42))}).status, 204);
  ExpectError(CheckoutCall(42, released, "k2"), 409, "HOLD_NOT_ACTIVE");
}

TEST_P(GatewayCallbacks, KeysBelongToTheirCustomer) {
  const std::string mine = HoldId(44, R"(["E1"])");
  const std::string theirs = HoldId(45, R"(["E2"])");
  auto a = CheckoutCall(44, mine, "same-key");
  auto b = CheckoutCall(45, theirs, "same-key");
  ASSERT_EQ(a.status, 201) << a.body;
  ASSERT_EQ(b.status, 201) << b.body;
  EXPECT_EQ(b.Header("idempotent-replayed"), "");
  EXPECT_NE(json::parse(a.body)["bookingId"], json::parse(b.body)["bookingId"]);
  EXPECT_EQ(json::parse(b.body)["holdId"], theirs);
  // Customer 45 replaying the key on customer 44's hold learns nothing about it.
  ExpectError(CheckoutCall(45, mine, "same-key"), 422, "IDEMPOTENCY_KEY_REUSED");
  auto again = CheckoutCall(45, theirs, "same-key");
  EXPECT_EQ(again.body, b.body);
}

TEST_P(GatewayCallbacks, FiftyRequestsWithOneKeyMakeOneBookingAndOneSession) {
  const std::string hold_id = HoldId(46, R"(["F1", "F2"])");
  constexpr int kRequests = 50;
  std::barrier start(kRequests);
  std::vector<std::future<HttpResult>> calls;
  for (int i = 0; i < kRequests; ++i) {
    calls.push_back(std::async(std::launch::async, [&] {
      start.arrive_and_wait();
      return CheckoutCall(46, hold_id, "fifty");
    }));
  }
  std::set<std::string> bodies;
  int created = 0, in_progress = 0;
  for (auto& c : calls) {
    HttpResult r = c.get();
    if (r.status == 201) {
      ++created;
      bodies.insert(r.body);
    } else {
      ExpectError(r, 409, "IDEMPOTENCY_IN_PROGRESS");
      ++in_progress;
    }
  }
  EXPECT_EQ(created + in_progress, kRequests);
  EXPECT_GE(created, 1);
  // Every success is the same answer; one more call replays it.
  auto last = CheckoutCall(46, hold_id, "fifty");
  ASSERT_EQ(last.status, 201);
  bodies.insert(last.body);
  EXPECT_EQ(bodies.size(), 1u);
  const int64_t booking_id = json::parse(last.body)["bookingId"];
  EXPECT_EQ(SessionsFor(booking_id), 1u);
  auto other = CheckoutCall(46, hold_id, "another");
  ExpectError(other, 409, "CHECKOUT_EXISTS");
  EXPECT_EQ(json::parse(other.body)["bookingId"], booking_id);
}

// The gateway unreachable: 503 UNAVAILABLE, and the hold is as it was, with no pending
// booking and the key free for a retry.
TEST_P(GatewayCallbacks, AGatewayThatIsDownGives503AndLeavesNothingHalfDone) {
  gateway_.reset();  // nothing listens on its port any more
  const std::string hold_id = HoldId(47, R"(["E4"])");
  const std::string expires =
      json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(47))}).body)["expiresAt"];
  auto r = CheckoutCall(47, hold_id, "down");
  ExpectError(r, 503, "UNAVAILABLE");
  EXPECT_EQ(r.Header("retry-after"), "1");
  auto hold = json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(47))}).body);
  EXPECT_EQ(hold["status"], "HELD");
  EXPECT_EQ(hold["expiresAt"], expires);
  // Not CHECKOUT_EXISTS with another key, not IN_PROGRESS or a replay with the same one.
  ExpectError(CheckoutCall(47, hold_id, "down-2"), 503, "UNAVAILABLE");
  ExpectError(CheckoutCall(47, hold_id, "down"), 503, "UNAVAILABLE");
  EXPECT_TRUE(DirectEvents().empty());
}

// kill -9 at each recovery point of checkout (a test-only fault hook makes the process
// SIGKILL itself there), restart, retry with the same key: one booking, one session.
TEST_P(GatewayCallbacks, ACheckoutKilledAtAnyRecoveryPointIsFinishedByARetry) {
  // The callback URL a session was opened with must survive the restart, as a public URL
  // does: every incarnation listens on the same port.
  const std::string listen = "127.0.0.1:" + std::to_string(testing::FreePort());
  const std::vector<std::string> flags = {"--listen",         listen, "--gateway-url", GatewayUrl(),
                                          "--checkout-lease", "1s"};
  int64_t customer = 50;
  for (const std::string point : {"claimed", "booked", "session"}) {
    SCOPED_TRACE("killed at " + point);
    ++customer;
    const std::string hold_id = HoldId(customer, "[\"E" + std::to_string(customer - 44) + "\"]");
    service_.reset();
    service_ = std::make_unique<Service>(
        db_, flags, std::vector<std::string>{"BOXOFFICE_TEST_CRASH_AT=" + point});
    auto dead = CheckoutCall(customer, hold_id, "crash-" + point);
    EXPECT_EQ(dead.status, 0) << "the process answered instead of dying: " << dead.body;
    EXPECT_NE(service_->Log().find("checkout fault injection"), std::string::npos);
    service_.reset();
    service_ = std::make_unique<Service>(db_, flags);
    // Until the dead request's lease ends the key is in progress; then the retry finishes.
    HttpResult retry;
    for (int i = 0; i < 100; ++i) {
      retry = CheckoutCall(customer, hold_id, "crash-" + point);
      if (retry.status != 409) break;
      ExpectError(retry, 409, "IDEMPOTENCY_IN_PROGRESS");
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ASSERT_EQ(retry.status, 201) << retry.body;
    EXPECT_EQ(retry.Header("idempotent-replayed"), "");
    auto replay = CheckoutCall(customer, hold_id, "crash-" + point);
    EXPECT_EQ(replay.body, retry.body);
    EXPECT_EQ(replay.Header("idempotent-replayed"), "true");
    const int64_t booking_id = json::parse(retry.body)["bookingId"];
    EXPECT_EQ(SessionsFor(booking_id), 1u);
    auto other = CheckoutCall(customer, hold_id, "crash-other");
    ExpectError(other, 409, "CHECKOUT_EXISTS");
    EXPECT_EQ(json::parse(other.body)["bookingId"], booking_id);
    // And the purchase completes.
    ASSERT_EQ(Pay(json::parse(retry.body)["payment"]["sessionId"], "SUCCEEDED", "normal").status,
              200);
    Booking b;
    b.id = booking_id;
    b.customer_id = customer;
    EXPECT_EQ(AwaitStatus(b, "CONFIRMED"), "CONFIRMED");
  }
}

TEST_P(GatewayCallbacks, DeliveredTwiceConfirmsOnceWithOneEvent) {
  testing::SseClient stream(service_->port(), Seats() + "/stream");
  ASSERT_EQ(stream.status(), 200);
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
  // The seat stream saw the hold, then the seats booked, once.
  std::vector<std::string> changes;
  while (auto data = stream.Next(std::chrono::milliseconds(300)))
    changes.push_back(json::parse(*data).value("type", ""));
  EXPECT_EQ(changes, (std::vector<std::string>{"SeatsHeld", "SeatsBooked"}));
  // `boxoffice audit` finds the database consistent: one booking, two seats, one payment.
  FILE* audit =
      popen((std::string(BOXOFFICE_BINARY) + " audit --db '" + db_ + "' 2>/dev/null").c_str(), "r");
  ASSERT_NE(audit, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, audit)) out += buf;
  EXPECT_EQ(pclose(audit), 0) << out;
  EXPECT_NE(out.find("result audit violations=0 "), std::string::npos) << out;
  EXPECT_NE(out.find(" seats_booked=2 bookings_confirmed=1 payments_succeeded=1"),
            std::string::npos)
      << out;
}

// A confirmed booking ends its customer's admission, and the next in line is admitted.
TEST_P(GatewayCallbacks, AConfirmedBookingLetsTheNextInLineIn) {
  const std::string room = "/admin/showtimes/" + std::to_string(showtime_) + "/waiting-room";
  ASSERT_EQ(Call("PUT", room, R"({"enabled": true, "activeLimit": 1, "admissionTtlSeconds": 600})",
                 {Bearer(Token(1, true))})
                .status,
            200);
  const std::string queue = "/showtimes/" + std::to_string(showtime_) + "/queue";
  json first = json::parse(Call("POST", queue, "", {Bearer(Token(61))}).body);
  json second = json::parse(Call("POST", queue, "", {Bearer(Token(62))}).body);
  ASSERT_EQ(first["admitted"], true);
  ASSERT_EQ(second["position"], 1);
  const std::string token = first["admissionToken"];
  auto hold = Call("POST", Holds(), R"({"seats": ["E5"]})",
                   {Bearer(Token(61)), {"X-Admission-Token", token}});
  ASSERT_EQ(hold.status, 201) << hold.body;
  auto checkout = CheckoutCall(61, json::parse(hold.body)["holdId"], "key-room");
  ASSERT_EQ(checkout.status, 201) << checkout.body;
  Booking booking;
  booking.id = json::parse(checkout.body)["bookingId"];
  booking.customer_id = 61;
  ASSERT_EQ(Pay(json::parse(checkout.body)["payment"]["sessionId"], "SUCCEEDED", "normal").status,
            200);
  ASSERT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  // The admission ends in the confirmation's follow-up, after the callback's answer: the
  // next in line is admitted soon after CONFIRMED shows, not at the same instant (waited
  // for, at most 5 s).
  json now = json::object();
  for (int i = 0; i < 250 && now.value("admitted", false) != true; ++i) {
    if (i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    now = json::parse(Call("GET", queue + "/" + second["queueToken"].get<std::string>()).body);
  }
  EXPECT_EQ(now["admitted"], true) << now;
  ExpectError(Call("POST", Holds(), R"({"seats": ["E6"]})",
                   {Bearer(Token(61)), {"X-Admission-Token", token}}),
              403, "NOT_ADMITTED");
  EXPECT_EQ(Call("POST", Holds(), R"({"seats": ["E6"]})",
                 {Bearer(Token(62)), {"X-Admission-Token", now.value("admissionToken", "")}})
                .status,
            201);
}

TEST_P(GatewayCallbacks, AFailedPaymentKeepsTheHold) {
  auto [booking, session] = Checkout(32);
  ASSERT_EQ(Pay(session, "FAILED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "FAILED"), "FAILED");
  EXPECT_EQ(
      json::parse(Call("GET", "/holds/" + booking.hold_id, "", {Bearer(Token(32))}).body)["status"],
      "HELD");
  // A new checkout of the same hold, with a new key, may follow.
  EXPECT_EQ(CheckoutCall(32, booking.hold_id, "second-try").status, 201);
}

// A callback the gateway never sends: the customer paid and nothing reaches us, so the
// booking stays PENDING, its hold HELD, with no settlement and no event (the reconciler asks
// about it long after this test). That nothing came is judged against a later purchase paid
// with a normal delivery, not against a sleep: the fake gateway takes pays and starts their
// deliveries in order on its one I/O thread, so a callback for the first payment would have
// gone out before the later one's. Once that one is settled and its event published (rows
// are published in the order they were written), the first's settlement and event would
// show too: its event published, or still in the outbox.
TEST_P(GatewayCallbacks, ACallbackThatNeverComesLeavesTheBookingPending) {
  auto [booking, session] = Checkout(33);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  // The gateway knows it was paid: the question the reconciler will ask.
  auto status = json::parse(Gateway("GET", "/v1/sessions/" + session).body);
  EXPECT_EQ(status["status"], "PAID");
  EXPECT_TRUE(status.contains("paymentId"));
  ExpectError(Pay(session, "SUCCEEDED", "normal"), 409, "NOT_OPEN");

  const std::string later_hold = HoldId(34, R"(["E2"])");
  auto later = CheckoutCall(34, later_hold, "key-later-34");
  ASSERT_EQ(later.status, 201) << later.body;
  Booking control;
  control.id = json::parse(later.body)["bookingId"];
  control.customer_id = 34;
  ASSERT_EQ(Pay(json::parse(later.body)["payment"]["sessionId"], "SUCCEEDED", "normal").status,
            200);
  ASSERT_EQ(AwaitStatus(control, "CONFIRMED"), "CONFIRMED");
  // Its settlement is counted and its event published shortly after its answer (at most 6 s).
  for (int i = 0; i < 300 && (SettledInAll() < 1 || PublishedFor(control.id).empty()); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(PublishedFor(control.id).size(), 1u) << "the later payment's event never came";

  EXPECT_EQ(SettledInAll(), 1) << "a report other than the later payment's was settled";
  EXPECT_EQ(
      json::parse(Call("GET", "/bookings/" + std::to_string(booking.id), "", {Bearer(Token(33))})
                      .body)["status"],
      "PENDING");
  EXPECT_EQ(
      json::parse(Call("GET", "/holds/" + booking.hold_id, "", {Bearer(Token(33))}).body)["status"],
      "HELD");
  EXPECT_TRUE(PublishedFor(booking.id).empty());
  for (const OutboxEvent& e : DirectEvents())
    EXPECT_NE(e.key, std::to_string(booking.id)) << e.type << " written for the unpaid booking";
}

// A hold extended near its lifetime cap ends sooner than checkout + payment TTL: the session
// still ends the margin (hold TTL - payment TTL) before the hold, so a payment can never
// come after the seats were let go; and a hold too close to its cap is not offered for
// payment at all (nothing half-done: the hold keeps its expiry).
TEST_P(GatewayCallbacks, APaymentSessionNeverOutlivesItsHold) {
  StartServe({"--hold-ttl", "4s", "--hold-max-lifetime", "5s", "--payment-ttl", "2s"});
  const std::string hold_id = HoldId(51, R"(["E1"])");
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));
  auto r = CheckoutCall(51, hold_id, "k51");
  ASSERT_EQ(r.status, 201) << r.body;
  const Instant session_ends =
      *ParseRfc3339(json::parse(r.body)["payment"]["expiresAt"].get<std::string>());
  auto hold = json::parse(Call("GET", "/holds/" + hold_id, "", {Bearer(Token(51))}).body);
  const Instant hold_ends = *ParseRfc3339(hold["expiresAt"].get<std::string>());
  EXPECT_LE(session_ends, hold_ends - Millis(2'000))
      << "session " << FormatRfc3339(session_ends) << ", hold " << FormatRfc3339(hold_ends);

  // Near the cap: at most a second to pay (half the payment TTL is the floor here).
  const std::string late_hold = HoldId(52, R"(["E2"])");
  std::this_thread::sleep_for(std::chrono::milliseconds(2'600));
  const std::string before = Call("GET", "/holds/" + late_hold, "", {Bearer(Token(52))}).body;
  auto refused = CheckoutCall(52, late_hold, "k52");
  ExpectError(refused, 409, "HOLD_NOT_ACTIVE");
  EXPECT_EQ(Call("GET", "/holds/" + late_hold, "", {Bearer(Token(52))}).body, before);
}

// A lost callback: the customer paid, the gateway never told us. The reconciler asks once
// the session has ended, while the hold's margin still keeps the seats, and confirms.
TEST_P(GatewayCallbacks, ALostCallbackConfirmsWhileTheHoldLasts) {
  StartServe({"--hold-ttl", "6s", "--hold-max-lifetime", "6s", "--payment-ttl", "2s",
              "--reconcile-interval", "200ms"});
  auto [booking, session] = Checkout(53);
  ASSERT_EQ(Pay(session, "SUCCEEDED", "never").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
}

// A signed callback naming our booking but another session confirms nothing: recorded,
// refunded, and the booking's own session can still be paid.
TEST_P(GatewayCallbacks, ACallbackForAnotherSessionNeverConfirms) {
  auto [booking, session] = Checkout(54);
  auto stray = Signed(json{
      {"paymentId", "pay_stray_54"},
      {"sessionId", "ses_not_this_one"},
      {"reference", std::to_string(booking.id)},
      {"status", "SUCCEEDED"},
      {"amount", 2900},
      {"currency", "EUR"}}.dump());
  ASSERT_EQ(stray.status, 200) << stray.body;
  EXPECT_EQ(json::parse(stray.body)["outcome"], "other_session_refunded");
  EXPECT_EQ(AwaitStatus(booking, "PENDING"), "PENDING");
  EXPECT_NE(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
  ASSERT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
}

// A gateway that answers after 5 s (longer than the client's timeout: every attempt fails)
// while checkouts pile up: they wait on a pool of their own, and holds and showtime reads,
// which need the database workers, keep being answered all along. The check is an order,
// not a timing: every hold is answered before the first checkout is.
TEST_P(GatewayCallbacks, ASlowGatewayNeverStallsHoldsOrReads) {
  Service slow(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                        kGatewaySecret, "--answer-delay", "5s"});
  Start(db_,
        {"--gateway-url", "http://127.0.0.1:" + std::to_string(slow.port()), "--workers", "2"});
  constexpr int kCheckouts = 8;
  std::vector<std::string> holds;
  for (int i = 0; i < kCheckouts; ++i) {
    holds.push_back(HoldId(60 + i, "[\"E" + std::to_string(i + 1) + "\"]"));
  }
  std::atomic<int> checkouts_answered{0};
  std::vector<std::thread> checkouts;
  for (int i = 0; i < kCheckouts; ++i) {
    checkouts.emplace_back([&, i] {
      CheckoutCall(60 + i, holds[i], "slow-" + std::to_string(i));
      checkouts_answered.fetch_add(1);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // they are at the gateway now
  std::vector<double> hold_ms;
  int answered_while_checkouts_waited = 0;
  for (int i = 0; i < 10; ++i) {
    const auto started = std::chrono::steady_clock::now();
    auto hold = Hold(80 + i, "[\"F" + std::to_string(i + 1) + "\"]");
    auto read = Call("GET", "/showtimes/" + std::to_string(showtime_));
    hold_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count());
    EXPECT_EQ(hold.status, 201) << hold.body;
    EXPECT_EQ(read.status, 200);
    if (checkouts_answered.load() == 0) ++answered_while_checkouts_waited;
  }
  for (auto& t : checkouts) t.join();
  EXPECT_EQ(answered_while_checkouts_waited, 10)
      << "holds waited behind checkouts stuck at a slow gateway";
  std::sort(hold_ms.begin(), hold_ms.end());
  std::cout << "hold + read while " << kCheckouts << " checkouts wait on a 5 s gateway: max "
            << hold_ms.back() << " ms\n";
}

TEST_P(GatewayCallbacks, ALateCallbackIsRefundedOnceAndTheNewHolderKeepsTheSeats) {
  StartServe({"--hold-ttl", "2s", "--hold-max-lifetime", "4s", "--payment-ttl", "1s"});
  auto [booking, session] = Checkout(34);
  // Paid in time, but the callback arrives 3 s later; by then the hold (2 s) expired and
  // customer 35 holds one of its seats, until 2 s after taking it.
  ASSERT_EQ(Pay(session, "SUCCEEDED", "delayed", 3'000).status, 200);
  std::this_thread::sleep_for(std::chrono::milliseconds(2'100));
  auto newer = Hold(35, R"(["E1"])");
  ASSERT_EQ(newer.status, 201);
  EXPECT_EQ(AwaitStatus(booking, "FAILED"), "FAILED");
  // The late payment took nothing from the newer holder (whose own hold may have run out
  // by now on a slow machine, but was never booked by someone else's payment).
  const std::string status =
      json::parse(Call("GET", "/holds/" + json::parse(newer.body)["holdId"].get<std::string>(), "",
                       {Bearer(Token(35))})
                      .body)["status"];
  EXPECT_TRUE(status == "HELD" || status == "EXPIRED") << status;
  EXPECT_NE(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
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
  // Long enough that a checkout still opening its session (slow under the sanitizers) is not
  // taken for a dead one and abandoned; short enough for the polls below.
  StartServe({"--reconcile-after", "1500ms", "--reconcile-interval", "100ms"});
  auto [booking, session] = Checkout(37);
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

INSTANTIATE_TEST_SUITE_P(Engines, GatewayCallbacks, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e

// Money at the gateway (API.md "Checkout and bookings", "Payment gateway callback", "Fake
// payment gateway"): the service's key at the gateway is unique per deployment, the session
// the gateway returns is checked before a customer is sent to it, a callback for another
// amount or currency never changes the booking, and the fake gateway sends browsers only
// back to the service and lists sessions only to whoever holds its secret.
namespace boxoffice::e2e {
namespace {

const Headers kGatewayOwner = {{"Authorization", "Bearer " + kGatewaySecret}};

// The gateway answers the checkout with a session someone else opened under the same key
// (the fake's test control: another amount, currency or reference, or one that ended): 503,
// logged, the hold as it was; the retry with the same key books afresh under a new gateway
// key, gets a session of its own, and the customer pays it.
TEST_P(GatewayCallbacks, ASessionThatIsNotTheOneAskedForGives503AndTheHoldStaysPayable) {
  ExpectError(Gateway("POST", "/v1/test/foreign-session", R"({"amount": 1})"), 401,
              "UNAUTHENTICATED");
  const std::vector<std::string> riggings = {
      R"({"amount": 200000, "status": "EXPIRED"})",  // twice the money, and ended
      R"({"amount": 1000})",
      R"({"currency": "USD"})",
      R"({"reference": "999999"})",
      R"({"status": "EXPIRED"})",
  };
  int64_t customer = 60;
  for (const std::string& rigging : riggings) {
    SCOPED_TRACE(rigging);
    ++customer;
    const std::string hold_id = HoldId(customer, "[\"E" + std::to_string(customer - 60) + "\"]");
    const std::string hold_path = "/holds/" + hold_id;
    const std::string expires =
        json::parse(Call("GET", hold_path, "", {Bearer(Token(customer))}).body)["expiresAt"];
    ASSERT_EQ(Gateway("POST", "/v1/test/foreign-session", rigging, kGatewayOwner).status, 200);
    const std::string key = "order-" + std::to_string(customer);
    ExpectError(CheckoutCall(customer, hold_id, key), 503, "UNAVAILABLE");
    auto hold = json::parse(Call("GET", hold_path, "", {Bearer(Token(customer))}).body);
    EXPECT_EQ(hold["status"], "HELD");
    EXPECT_EQ(hold["expiresAt"], expires) << "the re-arm undone";

    auto retried = CheckoutCall(customer, hold_id, key);
    ASSERT_EQ(retried.status, 201) << retried.body;
    EXPECT_EQ(retried.Header("idempotent-replayed"), "");
    auto body = json::parse(retried.body);
    const int64_t booking_id = body["bookingId"];
    const std::string session = body["payment"]["sessionId"];
    auto described = json::parse(Gateway("GET", "/v1/sessions/" + session).body);
    EXPECT_EQ(described["status"], "OPEN");
    EXPECT_EQ(described["amount"], 1250);
    EXPECT_EQ(described["currency"], "EUR");
    EXPECT_EQ(described["reference"], std::to_string(booking_id));
    EXPECT_EQ(SessionsFor(booking_id), 1u);
    Booking booking;
    booking.id = booking_id;
    booking.customer_id = customer;
    ASSERT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
    EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
  }
  // Each refusal is logged with what came back.
  size_t logged = 0;
  std::istringstream lines(service_->Log());
  for (std::string line; std::getline(lines, line);) {
    auto j = json::parse(line, nullptr, false);
    if (j.is_object() &&
        j.value("msg", "") == "payment gateway returned another session; checkout undone") {
      ++logged;
      EXPECT_FALSE(j.value("mismatch", "").empty()) << line;
    }
  }
  EXPECT_EQ(logged, riggings.size());
}

// Two deployments on their own databases sharing one gateway account: their first bookings
// have the same id, and each still gets a session of its own (the gateway answers a key it
// has seen with the session opened then, whoever asks, and both sessions would pass the
// check: same amount, same reference, open).
TEST_P(GatewayCallbacks, TwoDeploymentsSharingTheGatewayNeverShareASession) {
  std::string other_db;
  if (GetParam() == Engine::kSqlite) {
    other_db = "sqlite:" + testing::TempDir() + "/e2e-other-deployment.db";
  } else {
    other_db = testing::FreshPostgresSchemaUrl();
    if (GetParam() == Engine::kShards) other_db += " " + testing::FreshPostgresSchemaUrl();
  }
  Service other(other_db, {"--gateway-url", GatewayUrl()});
  auto call_other = [&](const std::string& method, const std::string& target,
                        const std::string& body, int64_t customer, const Headers& extra = {}) {
    Headers headers = {Bearer(Token(customer, customer == 1))};
    headers.insert(headers.end(), extra.begin(), extra.end());
    return HttpCall(other.port(), method, target, body, headers);
  };
  int64_t their_showtime = 0;
  for (int i = 0; i < SetupShowtimes(); ++i) {  // as Start: the last lands where ours did
    auto created = call_other("POST", "/admin/showtimes", kLayout, 1);
    ASSERT_EQ(created.status, 201) << created.body;
    their_showtime = json::parse(created.body)["showtimeId"];
  }
  auto their_hold = call_other("POST", "/showtimes/" + std::to_string(their_showtime) + "/holds",
                               R"({"seats": ["E1", "F1"]})", 71);
  ASSERT_EQ(their_hold.status, 201) << their_hold.body;
  auto theirs = call_other(
      "POST", "/holds/" + json::parse(their_hold.body)["holdId"].get<std::string>() + "/checkout",
      "", 71, {{"Idempotency-Key", "key-theirs"}});
  ASSERT_EQ(theirs.status, 201) << theirs.body;
  const json their_body = json::parse(theirs.body);

  auto [ours, our_session] = Checkout(72);
  ASSERT_EQ(ours.id, their_body["bookingId"].get<int64_t>())
      << "the deployments' first bookings share an id";
  const std::string their_session = their_body["payment"]["sessionId"];
  EXPECT_NE(our_session, their_session);
  EXPECT_EQ(SessionsFor(ours.id), 2u) << "one session per deployment for the same reference";

  // Each customer pays their own; each deployment confirms its own booking.
  ASSERT_EQ(Pay(our_session, "SUCCEEDED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(ours, "CONFIRMED"), "CONFIRMED");
  ASSERT_EQ(Pay(their_session, "SUCCEEDED", "normal").status, 200);
  std::string their_status;
  for (int i = 0; i < 300 && their_status != "CONFIRMED"; ++i) {
    auto read = call_other("GET", "/bookings/" + std::to_string(ours.id), "", 71);
    their_status = json::parse(read.body).value("status", "");
    if (their_status != "CONFIRMED") std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(their_status, "CONFIRMED");
}

// API.md, payment callback: a payment for another amount or currency than the booking's is
// recorded and refunded; it never changes the booking, which its own session still pays.
TEST_P(GatewayCallbacks, ACallbackForAnotherAmountNeverChangesTheBooking) {
  auto [booking, session] = Checkout(55);
  const std::vector<std::tuple<std::string, int64_t, std::string>> odd = {
      {"pay_more_55", 200'000, "EUR"}, {"pay_less_55", 1, "EUR"}, {"pay_usd_55", 2900, "USD"}};
  for (const auto& [payment, amount, currency] : odd) {
    SCOPED_TRACE(payment);
    auto r = Signed(json{
        {"paymentId", payment},
        {"sessionId", session},
        {"reference", std::to_string(booking.id)},
        {"status", "SUCCEEDED"},
        {"amount", amount},
        {"currency",
         currency}}.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["outcome"], "mismatch_refunded");
    EXPECT_EQ(AwaitStatus(booking, "PENDING"), "PENDING");
  }
  EXPECT_NE(json::parse(Call("GET", Seats()).body)["seats"][0]["status"], "BOOKED");
  for (const OutboxEvent& e : DirectEvents()) {
    EXPECT_NE(e.key, std::to_string(booking.id)) << e.type << " written for the booking";
  }
  for (const json& e : service_->Events()) {
    EXPECT_NE(e.value("bookingId", int64_t{0}), booking.id) << e.dump();
  }
  ASSERT_EQ(Pay(session, "SUCCEEDED", "normal").status, 200);
  EXPECT_EQ(AwaitStatus(booking, "CONFIRMED"), "CONFIRMED");
}

// The fake gateway is no open redirect: a session's returnUrl must lead back to the origin
// its callbacks go to (scheme, host and port, read as a browser reads them); and the list of
// sessions is for whoever holds the gateway's secret. A session is answered as a real
// gateway describes it: what it is for and where it stands.
TEST_P(GatewayCallbacks, TheFakeGatewaySendsBrowsersOnlyBackToTheService) {
  const std::string port = std::to_string(service_->port());
  const std::string service = "http://127.0.0.1:" + port;
  auto open = [&](const std::string& return_url) {
    return Gateway("POST", "/v1/sessions",
                   json{{"amount", 100},
                        {"currency", "EUR"},
                        {"reference", "4242"},
                        {"callbackUrl", service + "/payments/callback"},
                        {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(60'000))},
                        {"returnUrl", return_url}}
                       .dump());
  };
  const std::vector<std::string> foreign_urls = {
      "http://evil.example/#/bookings/4242",    "http://127.0.0.1/#/bookings/4242",
      "http://127.0.0.1:1/#/bookings/4242",     "http://localhost:" + port + "/",
      "http://evil.example?@127.0.0.1:" + port, "http://evil.example#@127.0.0.1:" + port,
      "http://user@127.0.0.1:" + port + "/",    "https://127.0.0.1:" + port + "/"};
  for (const std::string& foreign : foreign_urls) {
    SCOPED_TRACE(foreign);
    ExpectError(open(foreign), 400, "VALIDATION_FAILED");
  }
  auto opened = open(service + "/#/bookings/4242");
  ASSERT_EQ(opened.status, 201) << opened.body;
  auto body = json::parse(opened.body);
  EXPECT_EQ(body["amount"], 100);
  EXPECT_EQ(body["currency"], "EUR");
  EXPECT_EQ(body["reference"], "4242");
  EXPECT_EQ(body["status"], "OPEN");
  EXPECT_TRUE(ParseRfc3339(body.value("expiresAt", "")).has_value()) << opened.body;
  EXPECT_FALSE(body.value("url", "").empty());
  EXPECT_EQ(open("http://127.0.0.1:" + port + "/other/page").status, 201) << "any path";

  ExpectError(Gateway("GET", "/v1/sessions?reference=4242"), 401, "UNAUTHENTICATED");
  ExpectError(Gateway("GET", "/v1/sessions?reference=4242", "",
                      {{"Authorization", "Bearer not-the-secret"}}),
              401, "UNAUTHENTICATED");
  auto listed = Gateway("GET", "/v1/sessions?reference=4242", "", kGatewayOwner);
  ASSERT_EQ(listed.status, 200) << listed.body;
  EXPECT_EQ(json::parse(listed.body)["sessions"].size(), 2u);
}

}  // namespace
}  // namespace boxoffice::e2e
