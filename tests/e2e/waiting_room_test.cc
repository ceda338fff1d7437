// The waiting room of API.md through the real binary, on SQLite and PostgreSQL: the admin
// setting, joining, the queue status, and holds that need a running admission. Across
// instances with Redis: production_test.cc; the line moving on a confirmed booking:
// checkout_test.cc.
#include "e2e/e2e_fixture.h"

namespace boxoffice::e2e {
namespace {

class WaitingRoomApi : public HttpApi {
 protected:
  std::string Room() { return "/admin/showtimes/" + std::to_string(showtime_) + "/waiting-room"; }
  std::string Queue() { return "/showtimes/" + std::to_string(showtime_) + "/queue"; }
  HttpResult Join(int64_t customer) { return Call("POST", Queue(), "", {Bearer(Token(customer))}); }
  HttpResult HoldWith(int64_t customer, const std::string& seats, const std::string& token) {
    return Call("POST", Holds(), R"({"seats": )" + seats + "}",
                {Bearer(Token(customer)), {"X-Admission-Token", token}});
  }
};

TEST_P(WaitingRoomApi, OnlyAdmittedCustomersHoldSeats) {
  const std::string on = R"({"enabled": true, "activeLimit": 1, "admissionTtlSeconds": 60})";
  // The setting is the admin's, and checked.
  EXPECT_EQ(Call("PUT", Room(), on).status, 401);
  ExpectError(Call("PUT", Room(), on, {Bearer(Token(5))}), 403, "FORBIDDEN");
  const auto admin = Bearer(Token(1, true));
  ExpectError(Call("PUT", Room(), "{", {admin}), 400, "BAD_JSON");
  ExpectError(Call("PUT", Room(), R"({"activeLimit": 5})", {admin}), 400, "VALIDATION_FAILED");
  ExpectError(Call("PUT", Room(), R"({"enabled": true, "activeLimit": 0})", {admin}), 400,
              "VALIDATION_FAILED");
  ExpectError(Call("PUT", "/admin/showtimes/999999/waiting-room", on, {admin}), 404, "NOT_FOUND");
  ExpectError(Join(5), 404, "NOT_FOUND");  // no room yet
  const std::string path = "/showtimes/" + std::to_string(showtime_);
  EXPECT_FALSE(json::parse(Call("GET", path).body).contains("waitingRoom"));
  auto set = Call("PUT", Room(), on, {admin});
  ASSERT_EQ(set.status, 200) << set.body;
  // The showtime says so, for the seat picker to put customers in line before the map.
  EXPECT_EQ(json::parse(Call("GET", path).body).value("waitingRoom", false), true);
  EXPECT_EQ(json::parse(set.body),
            json::parse(R"({"showtimeId": )" + std::to_string(showtime_) +
                        R"(, "enabled": true, "activeLimit": 1, "admissionTtlSeconds": 60})"));

  // Without an admission, no hold.
  ExpectError(Hold(5, R"(["E1"])"), 403, "NOT_ADMITTED");
  auto first = Join(5);
  ASSERT_EQ(first.status, 201) << first.body;
  json a = json::parse(first.body);
  EXPECT_EQ(a["admitted"], true);
  EXPECT_EQ(a["position"], 0);
  ASSERT_TRUE(a.contains("admissionToken"));
  EXPECT_TRUE(ParseRfc3339(a.value("admissionExpiresAt", "")).has_value());
  auto second = Join(6);
  ASSERT_EQ(second.status, 201);
  json b = json::parse(second.body);
  EXPECT_EQ(b["admitted"], false);
  EXPECT_EQ(b["position"], 1);
  EXPECT_GT(b["estimatedWaitSeconds"].get<int64_t>(), 0);
  EXPECT_FALSE(b.contains("admissionToken"));
  EXPECT_EQ(json::parse(Join(6).body)["queueToken"], b["queueToken"]) << "joining again";
  auto status = Call("GET", Queue() + "/" + b["queueToken"].get<std::string>());
  ASSERT_EQ(status.status, 200);
  EXPECT_EQ(json::parse(status.body)["position"], 1);
  ExpectError(Call("GET", Queue() + "/q.1.2.forged"), 404, "NOT_FOUND");

  const std::string token = a["admissionToken"];
  EXPECT_EQ(HoldWith(5, R"(["E1"])", token).status, 201);
  ExpectError(HoldWith(6, R"(["E2"])", token), 403, "NOT_ADMITTED");  // not 6's admission
  ExpectError(HoldWith(5, R"(["E2"])", "a.1.5.99999999999999.x"), 403, "NOT_ADMITTED");
  // The room's sizes are on /metrics (the keeper publishes them every second).
  std::string metrics;
  for (int i = 0; i < 100; ++i) {
    metrics = Call("GET", "/metrics").body;
    if (metrics.find("boxoffice_waiting_room_queued{showtime=\"" + std::to_string(showtime_) +
                     "\"} 1") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_NE(metrics.find("boxoffice_waiting_room_admitted{showtime=\"" + std::to_string(showtime_) +
                         "\"} 1"),
            std::string::npos)
      << metrics;
  // Turned off, holds need no admission again; the setting survives a restart.
  ASSERT_EQ(Call("PUT", Room(), R"({"enabled": false})", {admin}).status, 200);
  EXPECT_EQ(Hold(6, R"(["E3"])").status, 201);
  ASSERT_EQ(Call("PUT", Room(), on, {admin}).status, 200);
  service_ = std::make_unique<Service>(db_);
  ExpectError(Hold(7, R"(["E4"])"), 403, "NOT_ADMITTED");
}

// Those waiting learn at their next poll that the showtime was cancelled, as a join would.
TEST_P(WaitingRoomApi, TheLineOfACancelledShowtimeSaysSo) {
  const auto admin = Bearer(Token(1, true));
  ASSERT_EQ(Call("PUT", Room(), R"({"enabled": true, "activeLimit": 1, "admissionTtlSeconds": 60})",
                 {admin})
                .status,
            200);
  ASSERT_EQ(Join(5).status, 201);
  auto waiting = Join(6);
  ASSERT_EQ(waiting.status, 201);
  const std::string status =
      Queue() + "/" + json::parse(waiting.body)["queueToken"].get<std::string>();
  ASSERT_EQ(Call("GET", status).status, 200);
  ASSERT_EQ(Call("POST", "/admin/showtimes/" + std::to_string(showtime_) + "/cancel", "{}", {admin})
                .status,
            202);
  ExpectError(Call("GET", status), 410, "SHOWTIME_CANCELLED");
  ExpectError(Join(7), 410, "SHOWTIME_CANCELLED");
}

INSTANTIATE_TEST_SUITE_P(Engines, WaitingRoomApi, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
