// API.md "Seat rules beyond picking by hand" through the binary, on every store: best
// available, the single-seat gap rule, and the alternatives a refusal carries.
#include "e2e/e2e_fixture.h"

namespace boxoffice::e2e {
namespace {

// Rows A, B, C of 8 standard seats with an aisle after seat 4, and row D of 4 premium
// seats; single-seat gaps forbidden.
constexpr const char* kRuledHall = R"({"title": "T", "cinema": "C", "hall": "H",
  "startsAt": "2099-12-18T19:30:00.000Z", "singleSeatGaps": "forbid",
  "rows": [{"row": "A", "seats": 8, "category": "standard", "aisles": [4]},
           {"row": "B", "seats": 8, "category": "standard", "aisles": [4]},
           {"row": "C", "seats": 8, "category": "standard", "aisles": [4]},
           {"row": "D", "seats": 4, "category": "premium"}],
  "prices": {"standard": {"amount": 1250, "currency": "EUR"},
             "premium": {"amount": 1650, "currency": "EUR"}}})";

TEST_P(HttpApi, BestAvailableGapsAndAlternatives) {
  auto created = Call("POST", "/admin/showtimes", kRuledHall, {Bearer(Token(1, true))});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = std::to_string(json::parse(created.body)["showtimeId"].get<int64_t>());
  const std::string holds = "/showtimes/" + id + "/holds";
  EXPECT_EQ(json::parse(Call("GET", "/showtimes/" + id).body)["singleSeatGaps"], "forbid");
  EXPECT_EQ(
      json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_)).body)["singleSeatGaps"],
      "allow");
  auto hold = [&](int64_t customer, const std::string& body) {
    return Call("POST", holds, body, {Bearer(Token(customer))});
  };
  ASSERT_EQ(Call("GET", "/showtimes/" + id + "/seats").status, 200);  // the instance's map

  // Best 2: of the two middle rows (B and C of four) the one further back, the block
  // nearest its centre that strands no seat.
  auto best = hold(10, R"({"best": {"count": 2, "category": "standard"}})");
  ASSERT_EQ(best.status, 201) << best.body;
  EXPECT_EQ(json::parse(best.body)["seats"], json::array({"C3", "C4"}));
  EXPECT_EQ(best.Header("location"),
            "/holds/" + json::parse(best.body)["holdId"].get<std::string>());
  auto premium = hold(11, R"({"best": {"count": 2, "category": "premium"}})");
  ASSERT_EQ(premium.status, 201) << premium.body;
  EXPECT_EQ(json::parse(premium.body)["seats"], json::array({"D1", "D2"}));  // D2D3 strands two

  // C2 by hand would leave C1 alone: refused, naming it, with free single seats near it
  // that strand nothing themselves (of its category: row D is premium).
  auto gap = hold(12, R"({"seats": ["C2"]})");
  ExpectError(gap, 409, "SINGLE_SEAT_GAP");
  EXPECT_EQ(json::parse(gap.body)["seats"], json::array({"C1"}));
  EXPECT_EQ(json::parse(gap.body)["error"],
            "Seats [C2] of showtime " + id + " would leave [C1] alone");
  EXPECT_EQ(json::parse(gap.body)["alternatives"],
            json::parse(R"([{"seats": ["C5"]}, {"seats": ["C8"]}, {"seats": ["B1"]}])"));
  // A taken seat: SEATS_UNAVAILABLE, with alternatives of its size.
  auto taken = hold(12, R"({"seats": ["C4", "C3"]})");
  ExpectError(taken, 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(json::parse(taken.body)["seats"], json::array({"C3", "C4"}));
  EXPECT_EQ(json::parse(taken.body)["alternatives"],
            json::parse(R"([{"seats": ["C1", "C2"]}, {"seats": ["C5", "C6"]},
                            {"seats": ["C7", "C8"]}])"));
  // No block of 3 premium seats is left: 409 with no seats and no alternatives.
  auto none = hold(13, R"({"best": {"count": 3, "category": "premium"}})");
  ExpectError(none, 409, "SEATS_UNAVAILABLE");
  EXPECT_EQ(json::parse(none.body)["seats"], json::array());
  EXPECT_FALSE(json::parse(none.body).contains("alternatives"));

  // Bad requests change nothing.
  const std::string state = Call("GET", "/showtimes/" + id + "/seats").Header("etag");
  for (const char* body :
       {R"({"best": {"count": 2, "category": "balcony"}})",
        R"({"best": {"count": 9, "category": "standard"}})",
        R"({"best": {"count": 0, "category": "standard"}})", R"({"best": {"count": 2}})",
        R"({"best": {"count": "2", "category": "standard"}})", R"({"best": [2]})",
        R"({"seats": ["A1"], "best": {"count": 1, "category": "standard"}})"}) {
    ExpectError(hold(14, body), 400, "VALIDATION_FAILED");
  }
  EXPECT_EQ(Call("GET", "/showtimes/" + id + "/seats").Header("etag"), state);
  ExpectError(Call("POST", "/showtimes/999999999/holds",
                   R"({"best": {"count": 2, "category": "standard"}})", {Bearer(Token(14))}),
              404, "NOT_FOUND");
  ExpectError(Call("POST", "/admin/showtimes",
                   std::string(kRuledHall)
                       .replace(std::string(kRuledHall).find("\"forbid\""), 8, "\"never\""),
                   {Bearer(Token(1, true))}),
              400, "VALIDATION_FAILED");

  // Only the two holds took seats.
  auto seats = json::parse(Call("GET", "/showtimes/" + id + "/seats").body)["seats"];
  int held = 0;
  for (const auto& s : seats) held += s["status"] == "HELD";
  EXPECT_EQ(held, 4);
}

}  // namespace
}  // namespace boxoffice::e2e
