// Tickets and the door end to end, through the real binary with the fake gateway, on
// SQLite, PostgreSQL and two shards: a purchase paid at the gateway, the customer's list,
// the tickets and their QR codes read back by a real decoder (zbarimg, from the PNG and
// from the SVG rasterised by rsvg-convert), and the door: one admission for ten doors
// scanning at once, a forged code, another showtime's ticket, a retried scan.
#include <barrier>
#include <cstdio>
#include <fstream>
#include <set>

#include "e2e/e2e_fixture.h"
#include "support/backends.h"
#include "support/redis_server.h"

namespace boxoffice::e2e {
namespace {

std::string DoorToken(int64_t staff = 900) {
  Principal who;
  who.customer_id = staff;
  who.door = true;
  return SignJwt(who, SystemClock().Now() + Millis(3'600'000), kSecret);
}

// What a command printed on stdout (its exit status in *status).
std::string RunCommand(const std::string& command, int* status) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) {
    *status = -1;
    return out;
  }
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) out.append(buffer, n);
  *status = pclose(pipe);
  return out;
}

// The text of the one QR code in an image, as zbarimg reads it.
std::string ReadQr(const std::string& image_path) {
  int status = 0;
  // (zbarimg says on stderr that it found no D-Bus; only its stdout is the code.)
  std::string text =
      RunCommand("zbarimg --quiet --raw '" + image_path + "' 2>'" + image_path + ".err'", &status);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
  std::ifstream err(image_path + ".err");
  EXPECT_EQ(status, 0) << "zbarimg (Debian's zbar-tools) could not read " << image_path << ": "
                       << std::string(std::istreambuf_iterator<char>(err), {});
  return text;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

class Tickets : public GatewayCallbacks {
 protected:
  void BuyReadAndScan();
  // A purchase of E1+F1 by customer, paid at the gateway: the confirmed booking's id.
  int64_t Bought(int64_t customer, const std::string& email) {
    return BoughtWithEmail(customer, email, R"(["E1", "F1"])").id;
  }
  HttpResult Scan(const std::string& code, int64_t showtime, const std::string& nonce = "") {
    json body{{"code", code}, {"showtimeId", showtime}};
    if (!nonce.empty()) body["nonce"] = nonce;
    return Call("POST", "/checkin", body.dump(), {Bearer(DoorToken())});
  }
};

// The whole of a ticket's life, from the purchase to the second scan (run by the suites
// without and with the Redis gate).
void Tickets::BuyReadAndScan() {
  const int64_t booking = Bought(51, "ana@example.com");

  // The customer's list: newest first, with the showtime's title and start.
  auto mine = Call("GET", "/me/bookings", "", {Bearer(Token(51))});
  ASSERT_EQ(mine.status, 200) << mine.body;
  auto list = json::parse(mine.body);
  ASSERT_EQ(list["bookings"].size(), 1u) << mine.body;
  EXPECT_EQ(list["bookings"][0]["bookingId"], booking);
  EXPECT_EQ(list["bookings"][0]["status"], "CONFIRMED");
  EXPECT_EQ(list["bookings"][0]["title"], "Dune: Part Three");
  EXPECT_EQ(list["bookings"][0]["startsAt"], "2099-12-18T19:30:00.000Z");
  EXPECT_TRUE(list["nextCursor"].is_null());
  EXPECT_TRUE(
      json::parse(Call("GET", "/me/bookings", "", {Bearer(Token(52))}).body)["bookings"].empty());

  // One ticket per seat, only for the owner.
  const std::string tickets_path = "/bookings/" + std::to_string(booking) + "/tickets";
  ExpectError(Call("GET", tickets_path, "", {Bearer(Token(52))}), 404, "NOT_FOUND");
  auto tickets = Call("GET", tickets_path, "", {Bearer(Token(51))});
  ASSERT_EQ(tickets.status, 200) << tickets.body;
  auto list_of = json::parse(tickets.body)["tickets"];
  ASSERT_EQ(list_of.size(), 2u) << tickets.body;
  std::map<std::string, std::string> code_of;
  for (const json& t : list_of) {
    const std::string code = t["code"];
    EXPECT_LE(code.size(), 48u);
    EXPECT_EQ(t["qr"], "/tickets/" + code + ".svg");
    code_of[t["seat"]] = code;
  }
  ASSERT_EQ(code_of.size(), 2u);
  const std::string e1 = code_of["E1"], f1 = code_of["F1"];

  // The QR codes say exactly the code: the PNG as served, the SVG rasterised.
  auto png = Call("GET", "/tickets/" + e1 + ".png");
  ASSERT_EQ(png.status, 200);
  EXPECT_EQ(png.Header("content-type"), "image/png");
  const std::string dir = testing::TempDir();
  WriteFile(dir + "/e1.png", png.body);
  EXPECT_EQ(ReadQr(dir + "/e1.png"), e1);
  auto svg = Call("GET", "/tickets/" + f1 + ".svg");
  ASSERT_EQ(svg.status, 200);
  EXPECT_EQ(svg.Header("content-type"), "image/svg+xml");
  WriteFile(dir + "/f1.svg", svg.body);
  int status = 0;
  const std::string converted =
      RunCommand("rsvg-convert --width 400 --background-color white -o '" + dir + "/f1.png' '" +
                     dir + "/f1.svg' 2>&1",
                 &status);
  ASSERT_EQ(status, 0) << "rsvg-convert (Debian's librsvg2-bin): " << converted;
  EXPECT_EQ(ReadQr(dir + "/f1.png"), f1);
  std::string forged = e1;
  forged[forged.size() / 2] = forged[forged.size() / 2] == 'A' ? 'B' : 'A';
  ExpectError(Call("GET", "/tickets/" + forged + ".png"), 404, "TICKET_UNKNOWN");
  ExpectError(Call("GET", "/tickets/" + e1 + ".gif"), 404, "NOT_FOUND");

  // The door: a door token, then ten doors scanning E1 at once admit it once.
  ExpectError(Call("POST", "/checkin", json{{"code", e1}, {"showtimeId", showtime_}}.dump(),
                   {Bearer(Token(51))}),
              403, "FORBIDDEN");
  ExpectError(Call("POST", "/checkin", json{{"code", e1}, {"showtimeId", showtime_}}.dump()), 401,
              "UNAUTHENTICATED");
  constexpr int kDoors = 10;
  std::barrier start(kDoors);
  std::vector<HttpResult> answers(kDoors);
  std::vector<std::thread> doors;
  for (int i = 0; i < kDoors; ++i) {
    doors.emplace_back([&, i] {
      start.arrive_and_wait();
      answers[i] = Scan(e1, showtime_);
    });
  }
  for (auto& t : doors) t.join();
  int admitted = 0;
  std::set<std::string> times;
  for (const HttpResult& r : answers) {
    auto body = json::parse(r.body, nullptr, false);
    ASSERT_TRUE(body.is_object()) << r.status << " " << r.body << "\n" << service_->Log();
    if (r.status == 200) {
      ++admitted;
      EXPECT_EQ(body["status"], "ADMITTED");
      EXPECT_EQ(body["seat"], "E1");
      EXPECT_EQ(body["bookingId"], booking);
      EXPECT_EQ(body["showtimeId"], showtime_);
    } else {
      EXPECT_EQ(r.status, 409) << r.body;
      EXPECT_EQ(body["code"], "ALREADY_CHECKED_IN");
    }
    times.insert(body.value("checkedInAt", ""));
  }
  EXPECT_EQ(admitted, 1);
  EXPECT_EQ(times.size(), 1u) << "every answer names the one admitting scan";

  // A forgery, another showtime, a retried scan.
  ExpectError(Scan(forged, showtime_), 404, "TICKET_UNKNOWN");
  auto other = Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
  ASSERT_EQ(other.status, 201);
  const int64_t other_id = json::parse(other.body)["showtimeId"];
  auto wrong = Scan(f1, other_id);
  ExpectError(wrong, 422, "WRONG_SHOWTIME");
  EXPECT_EQ(json::parse(wrong.body)["showtimeId"], showtime_);
  EXPECT_EQ(json::parse(wrong.body)["title"], "Dune: Part Three");
  EXPECT_EQ(json::parse(wrong.body)["seat"], "F1");
  auto first = Scan(f1, showtime_, "door-2:scan-17");
  ASSERT_EQ(first.status, 200) << first.body;
  auto retried = Scan(f1, showtime_, "door-2:scan-17");
  EXPECT_EQ(retried.status, 200) << retried.body;
  EXPECT_EQ(json::parse(retried.body)["checkedInAt"], json::parse(first.body)["checkedInAt"]);
  ExpectError(Scan(f1, showtime_, "door-3:scan-1"), 409, "ALREADY_CHECKED_IN");
  // A nonce is the scanning door's own: another door sending the same one is a later scan.
  ExpectError(
      Call("POST", "/checkin",
           json{{"code", f1}, {"showtimeId", showtime_}, {"nonce", "door-2:scan-17"}}.dump(),
           {Bearer(DoorToken(901))}),
      409, "ALREADY_CHECKED_IN");

  auto count = Call("GET", "/showtimes/" + std::to_string(showtime_) + "/checkins", "",
                    {Bearer(DoorToken())});
  ASSERT_EQ(count.status, 200) << count.body;
  EXPECT_EQ(json::parse(count.body)["sold"], 2);
  EXPECT_EQ(json::parse(count.body)["admitted"], 2);
  const std::string metrics = Call("GET", "/metrics").body;
  // E1 once, F1 once and its retry (a scan's answer, repeated).
  EXPECT_NE(metrics.find("boxoffice_checkins_total{outcome=\"ADMITTED\"} 3"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("boxoffice_checkins_total{outcome=\"WRONG_SHOWTIME\"} 1"),
            std::string::npos);
}

TEST_P(Tickets, ABoughtTicketIsReadFromItsQrCodeAndAdmittedOnce) { BuyReadAndScan(); }

// The production profile: serve with its Redis seat gate (the holds of the purchase pass
// it; tickets, check-ins and the customer's list are the store's).
class TicketsWithRedis : public Tickets {
 protected:
  void SetUp() override {
    BOX_REQUIRE_REDIS();
    redis_ = std::make_unique<testing::RedisServer>();
    ASSERT_TRUE(redis_->ok());
    Tickets::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    StartServe({"--redis", redis_->url(), "--redis-timeout", "1s"});
  }
  std::unique_ptr<testing::RedisServer> redis_;
};

TEST_P(TicketsWithRedis, ABoughtTicketIsReadFromItsQrCodeAndAdmittedOnce) {
  ASSERT_EQ(json::parse(Call("GET", "/readyz").body).value("redis", ""), "ok");
  BuyReadAndScan();
}

TEST_P(Tickets, APendingBookingHasNoTicketsAndBadScansChangeNothing) {
  auto hold = Call("POST", Holds(), R"({"seats": ["E4"]})", {Bearer(Token(61))});
  ASSERT_EQ(hold.status, 201);
  const std::string hold_id = json::parse(hold.body).value("holdId", "");
  auto checkout = Call("POST", "/holds/" + hold_id + "/checkout", R"({"email": "bo@example.org"})",
                       {Bearer(Token(61)), {"Idempotency-Key", "k"}});
  ASSERT_EQ(checkout.status, 201) << checkout.body;
  const int64_t booking = json::parse(checkout.body)["bookingId"];
  ExpectError(
      Call("GET", "/bookings/" + std::to_string(booking) + "/tickets", "", {Bearer(Token(61))}),
      409, "BOOKING_NOT_CONFIRMED");
  // Checkout refuses an address it could not send to, and fields it does not know.
  auto again = Call("POST", Holds(), R"({"seats": ["E5"]})", {Bearer(Token(62))});
  const std::string other_hold = json::parse(again.body).value("holdId", "");
  for (const char* body : {R"({"email": "no-at-sign"})", R"({"email": "a@b.c\r\nBcc: x@y.z"})",
                           R"({"email": 5})", R"({"mail": "a@b.c"})"}) {
    ExpectError(Call("POST", "/holds/" + other_hold + "/checkout", body,
                     {Bearer(Token(62)), {"Idempotency-Key", "k2"}}),
                400, "VALIDATION_FAILED");
  }
  for (const std::string& body :
       {std::string("{}"), std::string(R"({"code": "", "showtimeId": 1})"),
        std::string(R"({"code": "x", "showtimeId": 0})"),
        std::string(R"({"code": "x", "showtimeId": 1, "nonce": ""})"),
        R"({"code": "x", "showtimeId": 1, "nonce": ")" + std::string(65, 'n') + "\"}",
        std::string(R"({"code": "x", "showtimeId": 1, "extra": 1})")}) {
    ExpectError(Call("POST", "/checkin", body, {Bearer(DoorToken())}), 400, "VALIDATION_FAILED");
  }
  ExpectError(Call("GET", "/showtimes/999999999/checkins", "", {Bearer(DoorToken())}), 404,
              "NOT_FOUND");
  ExpectError(Call("GET", "/me/bookings?cursor=%%%", "", {Bearer(Token(61))}), 400,
              "VALIDATION_FAILED");
  ExpectError(Call("GET", "/me/bookings?limit=101", "", {Bearer(Token(61))}), 400,
              "VALIDATION_FAILED");
}

INSTANTIATE_TEST_SUITE_P(Engines, Tickets, AllEngines(), EngineName);
INSTANTIATE_TEST_SUITE_P(Engines, TicketsWithRedis, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
