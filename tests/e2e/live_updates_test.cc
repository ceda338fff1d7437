// Seat changes seen live: GET /showtimes/{id}/seats/stream (Server-Sent Events) through the
// real binary, on SQLite and PostgreSQL. Across instances: production_test.cc.
#include "e2e/e2e_fixture.h"
#include "support/sse_client.h"

namespace boxoffice::e2e {
namespace {

using testing::SseClient;
using namespace std::chrono_literals;

class LiveUpdates : public HttpApi {
 protected:
  std::string Stream(int64_t showtime) {
    return "/showtimes/" + std::to_string(showtime) + "/seats/stream";
  }
  static json Event(SseClient& stream) {
    auto data = stream.Next(5s);
    if (!data) return json();
    return json::parse(*data, nullptr, false);
  }
};

TEST_P(LiveUpdates, AStreamCarriesItsShowtimesChangesAsTheyHappen) {
  SseClient stream(service_->port(), Stream(showtime_));
  ASSERT_EQ(stream.status(), 200) << stream.headers();
  EXPECT_NE(stream.headers().find("content-type: text/event-stream"), std::string::npos);
  EXPECT_NE(stream.headers().find("x-request-id: "), std::string::npos);
  auto other_showtime = Call("POST", "/admin/showtimes", kLayout, {Bearer(Token(1, true))});
  ASSERT_EQ(other_showtime.status, 201);
  SseClient other(service_->port(), Stream(json::parse(other_showtime.body)["showtimeId"]));
  ASSERT_EQ(other.status(), 200);

  auto hold = Hold(7, R"(["E2", "E1"])");
  ASSERT_EQ(hold.status, 201) << hold.body;
  json held = Event(stream);
  EXPECT_EQ(held["type"], "SeatsHeld") << held;
  EXPECT_EQ(held["showtimeId"], showtime_);
  EXPECT_EQ(held["seats"], json::array({"E1", "E2"}));
  EXPECT_TRUE(ParseRfc3339(held.value("at", "")).has_value()) << held;
  // Nothing about the customer or the hold goes out.
  EXPECT_FALSE(held.contains("holdId"));
  EXPECT_FALSE(held.contains("customerId"));

  // A refused hold changes nothing and says nothing.
  ExpectError(Hold(8, R"(["E2", "E3"])"), 409, "SEATS_UNAVAILABLE");
  const std::string hold_id = json::parse(hold.body)["holdId"];
  ASSERT_EQ(Call("DELETE", "/holds/" + hold_id, "", {Bearer(Token(7))}).status, 204);
  json released = Event(stream);
  EXPECT_EQ(released["type"], "SeatsReleased") << released;
  EXPECT_EQ(released["seats"], json::array({"E1", "E2"}));
  // Deleting it again frees nothing: no second event.
  ASSERT_EQ(Call("DELETE", "/holds/" + hold_id, "", {Bearer(Token(7))}).status, 204);
  EXPECT_FALSE(stream.Next(300ms).has_value());
  // The other showtime's stream heard none of it.
  EXPECT_FALSE(other.Next(100ms).has_value());
}

// A hold that expires frees its seats without anyone asking; once the sweeper commits
// that, the stream says SeatsReleased.
TEST_P(LiveUpdates, ExpiredHoldsAreReleasedOnTheStreamBySweeper) {
  Start(db_, {"--hold-ttl", "1s", "--hold-max-lifetime", "1s", "--sweep-interval", "100ms"});
  SseClient stream(service_->port(), Stream(showtime_));
  ASSERT_EQ(stream.status(), 200);
  ASSERT_EQ(Hold(3, R"(["F7", "F8"])").status, 201);
  json held = Event(stream);
  EXPECT_EQ(held["type"], "SeatsHeld");
  auto data = stream.Next(std::chrono::seconds(5));
  ASSERT_TRUE(data.has_value()) << "no event after the hold expired";
  json released = json::parse(*data);
  EXPECT_EQ(released["type"], "SeatsReleased");
  EXPECT_EQ(released["seats"], json::array({"F7", "F8"}));
}

TEST_P(LiveUpdates, UnknownShowtimesHaveNoStream) {
  SseClient stream(service_->port(), "/showtimes/999999/seats/stream");
  EXPECT_EQ(stream.status(), 404);
  SseClient bad(service_->port(), "/showtimes/x/seats/stream");
  EXPECT_EQ(bad.status(), 404);
}

TEST_P(LiveUpdates, StreamsAreBoundedKeptAliveAndEndedCleanlyOnShutdown) {
  Start(db_, {"--max-streams", "2", "--sse-heartbeat", "200ms"});
  auto first = std::make_unique<SseClient>(service_->port(), Stream(showtime_));
  SseClient second(service_->port(), Stream(showtime_));
  ASSERT_EQ(first->status(), 200);
  ASSERT_EQ(second.status(), 200);
  {
    SseClient third(service_->port(), Stream(showtime_));
    EXPECT_EQ(third.status(), 503);
    EXPECT_NE(third.headers().find("retry-after: "), std::string::npos);
  }
  // Silence is broken by heartbeats (comments, which EventSource ignores).
  EXPECT_FALSE(second.Next(700ms).has_value());
  EXPECT_GE(second.comments(), 2);
  // A client that went away frees its place once a heartbeat finds it gone.
  first.reset();
  bool reopened = false;
  for (int i = 0; i < 50 && !reopened; ++i) {
    std::this_thread::sleep_for(100ms);
    SseClient again(service_->port(), Stream(showtime_));
    reopened = again.status() == 200;
  }
  EXPECT_TRUE(reopened);
  // SIGTERM ends every open stream with its last chunk, and the service stops promptly.
  EXPECT_EQ(service_->Terminate(), 0);
  EXPECT_TRUE(second.WaitEnd(2s));
  EXPECT_TRUE(second.ended_cleanly());
}

INSTANTIATE_TEST_SUITE_P(Engines, LiveUpdates, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
