// End to end: starts the real `boxoffice serve` binary on SQLite and on PostgreSQL and
// speaks HTTP to it. Proves every endpoint of API.md's Conventions, Authentication,
// Showtimes, Holds, Admin and Operations sections, every error code they list, that no
// bad request changes any state, and that SIGTERM stops the service cleanly.
#include <sqlite3.h>

#include <future>

#include "core/crypto.h"
#include "core/metrics.h"
#include "e2e/e2e_fixture.h"
#include "http/encoding.h"
#include "http/server.h"

namespace boxoffice::e2e {
namespace {

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
  EXPECT_NE(metrics.body.find("boxoffice_bookings{status=\"CONFIRMED\"}"), std::string::npos);
  EXPECT_NE(metrics.body.find("boxoffice_outbox_lag_seconds"), std::string::npos);
  auto openapi = Call("GET", "/openapi.yaml");
  EXPECT_EQ(openapi.status, 200);
  EXPECT_EQ(openapi.body.rfind("openapi: 3.1.0", 0), 0u);
}

// GET / is the seat picker; its scripts and styles are compiled into the binary and served
// under /app/<version>/, cached for good, while the page itself is revalidated.
TEST_P(HttpApi, TheSeatPickerIsServedFromTheBinary) {
  auto page = Call("GET", "/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.Header("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.Header("cache-control"), "no-cache");
  EXPECT_NE(page.Header("content-security-policy").find("default-src 'self'"), std::string::npos);
  const std::string etag = page.Header("etag");
  EXPECT_EQ(Call("GET", "/", "", {{"If-None-Match", etag}}).status, 304);
  const size_t at = page.body.find("src=\"/app/");
  ASSERT_NE(at, std::string::npos) << page.body;
  const size_t end = page.body.find('"', at + 5);
  const std::string script = page.body.substr(at + 5, end - at - 5);  // /app/<version>/app.js
  EXPECT_EQ(script.substr(script.size() - 7), "/app.js");

  auto js = Call("GET", script);
  ASSERT_EQ(js.status, 200);
  EXPECT_EQ(js.Header("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(js.Header("cache-control"), "public, max-age=31536000, immutable");
  EXPECT_NE(js.body.find("import"), std::string::npos);
  EXPECT_EQ(Call("GET", script, "", {{"If-None-Match", js.Header("etag")}}).status, 304);
  auto head = Call("HEAD", script);
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.body, "");
  // Another version's URL (a page from before an upgrade) gets today's file, not cached.
  auto old = Call("GET", "/app/0123456789abcdef/app.js");
  EXPECT_EQ(old.status, 200);
  EXPECT_EQ(old.Header("cache-control"), "no-cache");
  EXPECT_EQ(old.body, js.body);
  const std::string dir = script.substr(0, script.size() - 6);
  EXPECT_EQ(Call("GET", dir + "style.css").Header("content-type"), "text/css; charset=utf-8");
  ExpectError(Call("GET", dir + "nope.js"), 404, "NOT_FOUND");
  ExpectError(Call("GET", dir + "..%2Fapp.js"), 404, "NOT_FOUND");
  EXPECT_EQ(Call("POST", "/").status, 405);
}

TEST_P(HttpApi, RequestIdIsEchoedOrMade) {
  EXPECT_EQ(Call("GET", "/healthz", "", {{"X-Request-Id", "abc-123"}}).Header("x-request-id"),
            "abc-123");
  EXPECT_TRUE(IsUuid(Call("GET", "/healthz").Header("x-request-id")));
  EXPECT_TRUE(IsUuid(Call("GET", "/nowhere").Header("x-request-id")));
}

// On the wire: a 304 and a 204 carry no Content-Length, no Content-Type and no body (the
// next answer on the connection follows the head at once); a header the service writes
// itself appears once even where a handler names it too (the web page's nosniff).
TEST_P(HttpApi, HeadsOnTheWireFrameEveryAnswerOnce) {
  const std::string etag = Call("GET", Seats()).Header("etag");
  const std::string three =
      "GET " + Seats() + " HTTP/1.1\r\nHost: x\r\nIf-None-Match: " + etag + "\r\n\r\n" +
      "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n";
  const std::string answers = testing::RawExchange(service_->port(), three);
  const size_t second = answers.find("HTTP/1.1 204");
  ASSERT_EQ(answers.rfind("HTTP/1.1 304 Not Modified\r\n", 0), 0u) << answers;
  ASSERT_NE(second, std::string::npos) << answers;
  const std::string not_modified = answers.substr(0, second);
  EXPECT_TRUE(not_modified.ends_with("\r\n\r\n")) << "no body after the head: " << answers;
  EXPECT_EQ(not_modified.find("Content-Length"), std::string::npos) << not_modified;
  EXPECT_EQ(not_modified.find("\r\nContent-Type:"), std::string::npos) << not_modified;
  EXPECT_NE(not_modified.find("ETag: " + etag + "\r\n"), std::string::npos) << not_modified;
  const std::string no_content = answers.substr(second);
  EXPECT_EQ(no_content.find("Content-Length"), std::string::npos) << no_content;
  EXPECT_TRUE(no_content.ends_with("\r\n\r\n")) << no_content;
  const std::string page = testing::RawExchange(
      service_->port(), "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t nosniff = 0;
  for (size_t at = 0; (at = page.find("X-Content-Type-Options", at)) != std::string::npos; ++at) {
    ++nosniff;
  }
  EXPECT_EQ(nosniff, 1u) << page.substr(0, page.find("\r\n\r\n"));
  EXPECT_EQ(page.find("Content-Length: ", page.find("Content-Length: ") + 1), std::string::npos);
  // HEAD on the seat-change stream: a GET's head, which has no length (the stream ends
  // when the connection does), and nothing after it.
  const std::string stream_head = testing::RawExchange(
      service_->port(), "HEAD " + Seats() + "/stream HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(stream_head.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << stream_head;
  EXPECT_NE(stream_head.find("Content-Type: text/event-stream\r\n"), std::string::npos)
      << stream_head;
  EXPECT_EQ(stream_head.find("Content-Length"), std::string::npos) << stream_head;
  EXPECT_NE(stream_head.find("Connection: close\r\n"), std::string::npos) << stream_head;
  EXPECT_TRUE(stream_head.ends_with("\r\n\r\n")) << stream_head;
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
      service_->port(), "BREW7 /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
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
  EXPECT_EQ(r.Header("allow"), "GET, HEAD");
  auto h = Call("GET", Holds());
  EXPECT_EQ(h.status, 405);
  EXPECT_EQ(h.Header("allow"), "POST");
  auto hold = Call("PATCH", "/holds/" + NewUuid());
  EXPECT_EQ(hold.status, 405);
  EXPECT_EQ(hold.Header("allow"), "GET, HEAD, DELETE");
}

TEST_P(HttpApi, ShowtimesAndTheSeatMap) {
  auto st = Call("GET", "/showtimes/" + std::to_string(showtime_));
  ASSERT_EQ(st.status, 200);
  auto body = json::parse(st.body);
  EXPECT_EQ(body["title"], "Dune: Part Three");
  EXPECT_EQ(body["cinema"], "Odeon Leicester Square");
  EXPECT_EQ(body["hall"], "Screen 1");
  EXPECT_EQ(body["startsAt"], "2099-12-18T19:30:00.000Z");
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
    layout.replace(layout.find("2099-12-18T19:30"), 16, "2099-12-19T1" + std::to_string(i) + ":00");
    ASSERT_EQ(Call("POST", "/admin/showtimes", layout, {Bearer(Token(1, true))}).status, 201);
  }
  auto page = json::parse(Call("GET", "/showtimes?limit=2").body);
  ASSERT_EQ(page["showtimes"].size(), 2u);
  ASSERT_TRUE(page["nextCursor"].is_string());
  // The pages hold every showtime once, in (startsAt, id) order, then say there are no more.
  size_t seen = page["showtimes"].size();
  std::string cursor = page["nextCursor"].get<std::string>();
  std::string last_start = page["showtimes"][1]["startsAt"];
  for (int i = 0; i < 5 && !cursor.empty(); ++i) {
    auto rest = json::parse(Call("GET", "/showtimes?limit=2&cursor=" + cursor).body);
    for (const auto& s : rest["showtimes"]) {
      EXPECT_GE(s["startsAt"].get<std::string>(), last_start);
      last_start = s["startsAt"];
    }
    seen += rest["showtimes"].size();
    cursor = rest["nextCursor"].is_string() ? rest["nextCursor"].get<std::string>() : "";
  }
  EXPECT_EQ(seen, static_cast<size_t>(3 + SetupShowtimes()));
  EXPECT_TRUE(cursor.empty());
  auto filtered = json::parse(Call("GET",
                                   "/showtimes?from=2099-12-19T00:00:00Z&to=2099-12-19T11:00:00Z&"
                                   "cinema=Odeon%20Leicester%20Square")
                                  .body);
  EXPECT_EQ(filtered["showtimes"].size(), 1u);  // from <= startsAt < to
  EXPECT_EQ(json::parse(Call("GET", "/showtimes?cinema=Rex").body)["showtimes"].size(), 0u);
  ExpectError(Call("GET", "/showtimes?limit=501"), 400, "VALIDATION_FAILED");
  ExpectError(Call("GET", "/showtimes?seatsLeft=yes"), 400, "VALIDATION_FAILED");
  ExpectError(Call("GET", "/showtimes?seatsLeft=true&limit=101"), 400, "VALIDATION_FAILED");
  auto counted = json::parse(Call("GET", "/showtimes?seatsLeft=true").body);  // default 100
  ASSERT_FALSE(counted["showtimes"].empty());
  for (const auto& s : counted["showtimes"]) EXPECT_EQ(s["seatsLeft"], s["seatCount"]);
  for (const auto& s : page["showtimes"]) EXPECT_FALSE(s.contains("seatsLeft")) << "not asked";
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

// API.md's HOLD_LIMIT: 8 seats of a showtime per customer at once, across their holds.
TEST_P(HttpApi, ACustomerHoldsAtMostEightSeatsAtOnce) {
  ASSERT_EQ(Hold(4, R"(["E1", "E2", "E3", "E4", "E5"])").status, 201);
  auto three = Hold(4, R"(["E6", "E7", "E8"])");
  ASSERT_EQ(three.status, 201);
  const std::string before = SeatState();
  auto ninth = Hold(4, R"(["F1"])");
  ExpectError(ninth, 409, "HOLD_LIMIT");
  EXPECT_EQ(json::parse(ninth.body)["held"], 8);
  EXPECT_EQ(json::parse(ninth.body)["limit"], 8);
  EXPECT_EQ(SeatState(), before) << "a refused hold changes nothing";
  const std::string id = json::parse(three.body)["holdId"];
  ASSERT_EQ(Call("DELETE", "/holds/" + id, "", {Bearer(Token(4))}).status, 204);
  EXPECT_EQ(Hold(4, R"(["F1", "F2", "F3"])").status, 201);
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

// What a hostile-input probe found, each refused with a clear error and nothing changed: a
// body with bytes after its JSON value (after a NUL, which the JSON parser took for the end),
// strings holding U+0000 (PostgreSQL cuts them there), query text that is not UTF-8 (which
// PostgreSQL refused with its own error text, shown to the client), and unknown seats
// named in the error.
TEST_P(HttpApi, HostileInputIsRefusedAndChangesNothing) {
  const std::string before = SeatState();
  const std::string tok = Token(9);
  const std::string nul_tail = std::string(R"({"seats":["E1"]})") + '\0' + "garbage";
  ExpectError(Call("POST", Holds(), nul_tail, {Bearer(tok)}), 400, "BAD_JSON");
  ExpectError(Call("POST", Holds(), R"({"seats":["E1"]} {"seats":["E2"]})", {Bearer(tok)}), 400,
              "BAD_JSON");
  ExpectError(Call("POST", Holds(), R"({"seats":["E1"]}x)", {Bearer(tok)}), 400, "BAD_JSON");
  ExpectError(Call("POST", Holds(), R"({"seats":["E1\u0000"]})", {Bearer(tok)}), 400,
              "VALIDATION_FAILED");
  ExpectError(Call("POST", Holds(), R"({"seats":["E1"],"x\u0000":1})", {Bearer(tok)}), 400,
              "VALIDATION_FAILED");
  EXPECT_EQ(SeatState(), before);
  for (const char* query : {"cinema=%ff", "cinema=a%00b", "cinema=%C0%AF", "from=%ff"}) {
    auto r = Call("GET", std::string("/showtimes?") + query);
    ExpectError(r, 400, "VALIDATION_FAILED");
    EXPECT_EQ(r.body.find("ERROR"), std::string::npos) << r.body;
    EXPECT_EQ(r.body.find("byte sequence"), std::string::npos) << r.body;
  }
  EXPECT_EQ(Call("GET", "/showtimes?cinema=Od%C3%A9on").status, 200);
  auto unknown = Call("POST", Holds(), R"({"seats": ["E1", "Z9", "E12"]})", {Bearer(tok)});
  ExpectError(unknown, 400, "UNKNOWN_SEATS");
  EXPECT_EQ(json::parse(unknown.body)["seats"], json::array({"E12", "Z9"})) << unknown.body;
  EXPECT_NE(json::parse(unknown.body)["error"].get<std::string>().find("Z9"), std::string::npos)
      << unknown.body;
  const std::string title_nul =
      R"({"title": "A\u0000B", "cinema": "C", "hall": "H", "startsAt": "2099-12-18T19:30:00.000Z",)"
      R"( "rows": [{"row": "A", "seats": 2, "category": "standard"}],)"
      R"( "prices": {"standard": {"amount": 100, "currency": "EUR"}}})";
  ExpectError(Call("POST", "/admin/showtimes", title_nul, {Bearer(Token(1, true))}), 400,
              "VALIDATION_FAILED");
}

// HEAD works on the GET routes and If-None-Match understands lists, weak tags and *.
TEST_P(HttpApi, HeadAndConditionalRequestsOnTheSeatMap) {
  auto get = Call("GET", Seats());
  ASSERT_EQ(get.status, 200);
  const std::string etag = get.Header("etag");
  auto head = Call("HEAD", Seats());
  EXPECT_EQ(head.status, 200);
  EXPECT_EQ(head.Header("etag"), etag);
  EXPECT_EQ(head.body, "");
  for (const std::string& inm : {etag, "W/" + etag, "\"nope\", " + etag, std::string("*")}) {
    EXPECT_EQ(Call("GET", Seats(), "", {{"If-None-Match", inm}}).status, 304) << inm;
  }
  EXPECT_EQ(Call("GET", Seats(), "", {{"If-None-Match", "\"nope\""}}).status, 200);
  ASSERT_EQ(Hold(3, R"(["E1"])").status, 201);
  EXPECT_EQ(Call("GET", Seats(), "", {{"If-None-Match", etag}}).status, 200) << "the map changed";
}

// A hall's map goes out in the coding the client prefers (br, else gzip), compressed once per
// version, with Vary and a tag per coding; the seats are the same in every coding, so any
// coding's tag of the current version is a hit, and a change shows in every coding.
TEST_P(HttpApi, SeatMapsGoOutCompressedInTheCodingAsked) {
  std::string rows;
  for (char row = 'A'; row <= 'O'; ++row) {
    rows += std::string(rows.empty() ? "" : ", ") + R"({"row": ")" + row +
            R"(", "seats": 20, "category": "standard"})";
  }
  auto created = Call("POST", "/admin/showtimes",
                      R"({"title": "Big", "cinema": "Rex", "hall": "1",)"
                      R"( "startsAt": "2099-12-18T19:30:00.000Z", "rows": [)" +
                          rows + R"(], "prices": {"standard": {"amount": 900, "currency": "EUR"}}})",
                      {Bearer(Token(1, true))});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string path =
      "/showtimes/" + std::to_string(json::parse(created.body)["showtimeId"].get<int64_t>()) +
      "/seats";
  auto plain = Call("GET", path);
  ASSERT_EQ(plain.status, 200);
  EXPECT_EQ(plain.Header("content-encoding"), "");
  EXPECT_EQ(plain.Header("vary"), "Accept-Encoding");
  const std::string tag = plain.Header("etag");
  const json seats = json::parse(plain.body)["seats"];
  ASSERT_EQ(seats.size(), 300u);

  auto fetch = [&](const std::string& accept, const std::string& coding, http::Encoding e) {
    auto r = Call("GET", path, "", {{"Accept-Encoding", accept}});
    EXPECT_EQ(r.status, 200) << accept;
    EXPECT_EQ(r.Header("content-encoding"), coding) << accept;
    EXPECT_EQ(r.Header("vary"), "Accept-Encoding") << accept;
    auto decoded = http::Decompress(e, r.body);
    EXPECT_TRUE(decoded.has_value()) << accept;
    EXPECT_LT(r.body.size(), e == http::Encoding::kIdentity ? SIZE_MAX : plain.body.size() / 8)
        << accept;
    if (decoded) {
      EXPECT_EQ(json::parse(*decoded)["seats"], seats) << accept;
    }
    return r;
  };
  auto gz = fetch("gzip", "gzip", http::Encoding::kGzip);
  auto br = fetch("gzip, deflate, br", "br", http::Encoding::kBrotli);
  fetch("br;q=0, gzip", "gzip", http::Encoding::kGzip);
  fetch("gzip;q=0.5, br;q=0.4", "gzip", http::Encoding::kGzip);
  fetch("*", "br", http::Encoding::kBrotli);
  fetch("gzip;q=0, br;q=0", "", http::Encoding::kIdentity);
  fetch("deflate, identity", "", http::Encoding::kIdentity);
  fetch("gzip;q=2", "", http::Encoding::kIdentity);  // a weight past 1 is no weight
  const std::string gz_tag = gz.Header("etag");
  EXPECT_EQ(gz_tag, tag.substr(0, tag.size() - 1) + "-gz\"");
  EXPECT_EQ(br.Header("etag"), tag.substr(0, tag.size() - 1) + "-br\"");
  // A tag is a hit only for its own coding (RFC 9110 13.1.2: the representation chosen),
  // so a cache never takes a 304 for bytes it does not hold.
  auto again = Call("GET", path, "", {{"Accept-Encoding", "gzip"}, {"If-None-Match", gz_tag}});
  EXPECT_EQ(again.status, 304);
  EXPECT_EQ(again.Header("etag"), gz_tag);
  EXPECT_EQ(again.Header("vary"), "Accept-Encoding");
  for (const std::string& other : {tag, br.Header("etag")}) {
    EXPECT_EQ(Call("GET", path, "", {{"Accept-Encoding", "gzip"}, {"If-None-Match", other}}).status,
              200)
        << other;
  }
  EXPECT_EQ(Call("GET", path, "", {{"If-None-Match", gz_tag}}).status, 200);
  EXPECT_EQ(Call("GET", path, "", {{"If-None-Match", tag}}).status, 304);
  // Accept-Encoding sent twice is one list: a coding refused in either is not chosen.
  auto twice = Call("GET", path, "", {{"Accept-Encoding", "br"}, {"Accept-Encoding", "br;q=0, gzip"}});
  EXPECT_EQ(twice.Header("content-encoding"), "gzip");
  auto head = Call("HEAD", path, "", {{"Accept-Encoding", "br"}});
  EXPECT_EQ(head.Header("content-encoding"), "br");
  EXPECT_EQ(head.Header("content-length"), br.Header("content-length"));

  // A hold shows at once in every coding, under new tags.
  auto held = Call("POST", path.substr(0, path.size() - 5) + "holds", R"({"seats": ["A1"]})",
                   {Bearer(Token(4))});
  ASSERT_EQ(held.status, 201) << held.body;
  for (auto [accept, e] : {std::pair{"gzip", http::Encoding::kGzip},
                           std::pair{"br", http::Encoding::kBrotli}}) {
    auto after = Call("GET", path, "", {{"Accept-Encoding", accept}, {"If-None-Match", gz_tag}});
    ASSERT_EQ(after.status, 200) << accept;
    EXPECT_NE(after.Header("etag"), gz_tag);
    auto decoded = http::Decompress(e, after.body);
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(json::parse(*decoded)["seats"][0]["status"], "HELD") << accept;
  }
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
    return R"({"title": "T", "cinema": "C", "hall": "H", "startsAt": "2099-12-18T19:30:00.000Z", "rows": )" +
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
      {layout(R"([{"row": "A", "seats": 10, "category": "standard"}])",
              R"({"standard": {"amount": 9223372036854775807, "currency": "EUR"}})"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard"}])",
              R"({"standard": {"amount": 10000001, "currency": "EUR"}})"),
       "VALIDATION_FAILED"},
      {layout(
           R"([{"row": "A", "seats": 10, "category": "standard"}, {"row": "B", "seats": 5, "category": "vip"}])",
           R"({"standard": {"amount": 100, "currency": "EUR"}, "vip": {"amount": 100, "currency": "USD"}})"),
       "VALIDATION_FAILED"},
      // The optional layout: an aisle after a seat that has a neighbour, each place once.
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "aisles": [10]}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "aisles": [0]}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "aisles": [3, 3]}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "aisles": "3"}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "accessible": [11]}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 10, "category": "standard", "accessible": [1.5]}])"),
       "VALIDATION_FAILED"},
      {layout(R"([{"row": "A", "seats": 1, "category": "standard", "aisles": [1]}])"),
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

// The layout fields reach the seat map: the rows in hall order with their aisles, and the
// wheelchair places; a showtime without them has rows with no aisles.
TEST_P(HttpApi, TheSeatMapCarriesTheRowsAislesAndWheelchairPlaces) {
  auto created =
      Call("POST", "/admin/showtimes",
           R"({"title": "T", "cinema": "C", "hall": "H", "startsAt": "2099-12-18T19:30:00.000Z",
                          "rows": [{"row": "A", "seats": 6, "category": "standard", "aisles": [2, 4], "accessible": [1, 6]},
                                   {"row": "B", "seats": 3, "category": "standard"}],
                          "prices": {"standard": {"amount": 1250, "currency": "EUR"}}})",
           {Bearer(Token(1, true))});
  ASSERT_EQ(created.status, 201) << created.body;
  const std::string id = std::to_string(json::parse(created.body)["showtimeId"].get<int64_t>());
  auto map = json::parse(Call("GET", "/showtimes/" + id + "/seats").body);
  EXPECT_EQ(map["rows"],
            json::parse(R"([{"row": "A", "aisles": [2, 4]}, {"row": "B", "aisles": []}])"));
  std::vector<std::string> accessible;
  for (const auto& s : map["seats"]) {
    if (s.value("accessible", false)) accessible.push_back(s["code"]);
  }
  EXPECT_EQ(accessible, (std::vector<std::string>{"A1", "A6"}));
  EXPECT_FALSE(map["seats"][1].contains("accessible"));
  // A hold changes a seat's state, not the layout.
  ASSERT_EQ(Call("POST", "/showtimes/" + id + "/holds", R"({"seats": ["A1"]})", {Bearer(Token(7))})
                .status,
            201);
  auto held = json::parse(Call("GET", "/showtimes/" + id + "/seats").body);
  EXPECT_EQ(held["rows"], map["rows"]);
  EXPECT_EQ(held["seats"][0]["accessible"], true);
  EXPECT_EQ(held["seats"][0]["status"], "HELD");
  auto plain = json::parse(Call("GET", Seats()).body);
  for (const auto& r : plain["rows"]) EXPECT_EQ(r["aisles"], json::array());
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

// A one-thread in-process server, standing in for our callback endpoint.
http::ServerOptions ReceiverOptions() {
  http::ServerOptions options;
  options.port = 0;
  options.io_threads = 1;
  options.worker_threads = 1;
  return options;
}

// A payment session at the fake gateway whose callbacks go to hook.
auto OpenSession(int gateway_port, const std::string& reference, const std::string& hook) {
  return HttpCall(gateway_port, "POST", "/v1/sessions",
                  json{{"amount", 100},
                       {"currency", "EUR"},
                       {"reference", reference},
                       {"callbackUrl", hook},
                       {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(60'000))}}
                      .dump());
}

// Given the services it works for, the fake gateway opens sessions that call back and
// return only there: it is nobody's redirect, whoever opens a session.
TEST(FakeGateway, AServiceUrlLimitsWhereSessionsMayLead) {
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret, "--service-url",
                                           "http://127.0.0.1:18080"});
  auto open = [&](const std::string& callback, const std::string& back) {
    json body{{"amount", 100},
              {"currency", "EUR"},
              {"reference", "1"},
              {"callbackUrl", callback},
              {"expiresAt", FormatRfc3339(SystemClock().Now() + Millis(60'000))}};
    if (!back.empty()) body["returnUrl"] = back;
    return HttpCall(gateway.port(), "POST", "/v1/sessions", body.dump()).status;
  };
  EXPECT_EQ(open("http://127.0.0.1:18080/payments/callback", "http://127.0.0.1:18080/#/bookings/1"),
            201);
  EXPECT_EQ(open("http://127.0.0.1:18080/payments/callback", ""), 201);
  EXPECT_EQ(open("http://evil.example/hook", "http://evil.example/"), 400);
  EXPECT_EQ(open("http://127.0.0.1:18080/payments/callback", "http://evil.example/"), 400);
  EXPECT_EQ(open("http://127.0.0.1:18081/payments/callback", ""), 400);
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
  http::Server receiver(ReceiverOptions(), &router, &metrics);
  ASSERT_TRUE(receiver.Start());
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret});
  auto session = OpenSession(gateway.port(), "1",
                             "http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook");
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

// A premiere pays faster than its receiver answers: every pay is taken and every callback
// arrives, many at once over kept-alive connections (not one thread each, with a low cap).
TEST(FakeGateway, ManyCallbacksInFlightAtOnceAreAllDelivered) {
  constexpr int kPays = 400;
  std::atomic<int> arrived{0};
  http::Router router;
  router.AddAsync("POST", "/hook", [&](http::Request&) -> io::asio::awaitable<http::Response> {
    ++arrived;
    // Every callback is answered late: they pile up in flight at the gateway.
    io::asio::steady_timer timer(co_await io::asio::this_coro::executor, Millis(1'500));
    co_await timer.async_wait(io::asio::use_awaitable);
    http::Response r;
    r.status = 200;
    co_return r;
  });
  Metrics metrics;
  http::Server receiver(ReceiverOptions(), &router, &metrics);
  ASSERT_TRUE(receiver.Start());
  Service gateway(std::vector<std::string>{"fake-gateway", "--listen", "127.0.0.1:0", "--secret",
                                           kGatewaySecret});
  const std::string hook = "http://127.0.0.1:" + std::to_string(receiver.port()) + "/hook";
  std::map<int, int> pays;
  for (int i = 0; i < kPays; ++i) {
    auto session = OpenSession(gateway.port(), std::to_string(i), hook);
    ASSERT_EQ(session.status, 201);
    const std::string id = json::parse(session.body)["sessionId"];
    ++pays[HttpCall(gateway.port(), "POST", "/v1/sessions/" + id + "/pay", "{}").status];
  }
  EXPECT_EQ(pays, (std::map<int, int>{{200, kPays}}));
  for (int i = 0; i < 500 && arrived.load() < kPays; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(arrived.load(), kPays);
  receiver.Stop();
}

INSTANTIATE_TEST_SUITE_P(Engines, PaymentCallbacks, AllEngines(), EngineName);

// The embedded profile limits hold attempts in process: 5 a minute, then 429.
TEST_P(HttpApi, HoldAttemptsAreRateLimited) {
  Start(db_, {"--holds-per-minute", "5"});
  for (int i = 0; i < 5; ++i) Hold(31, "[\"E" + std::to_string(1 + i) + "\"]");
  auto refused = Hold(31, R"(["F1"])");
  ExpectError(refused, 429, "RATE_LIMITED");
  EXPECT_EQ(refused.Header("retry-after"), "12");
  EXPECT_EQ(Hold(32, R"(["F1"])").status, 201);
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][10]["status"], "HELD");
}

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
    // The service writes on its own too (the outbox relay renews its lease every 200 ms):
    // taking the lock waits for such a write to end instead of failing with SQLITE_BUSY.
    sqlite3_busy_timeout(db_, 10'000);
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

// Ids in paths (API.md Conventions): one spelling each, and any that names nothing is 404
// whatever its size. Ids from 2^53 up once reached an assertion on the hold path
// (NewHoldId's shard) and ended the process: one request took down the instance.
TEST_P(HttpApi, IdsOfAnySizeThatNameNothingAre404AndTheServiceLivesOn) {
  const std::string tok = Token(11);
  for (const char* id : {"9007199254740992", "9007199254740993", "9223372036854775807",
                         "4611686018427387904", "8796093022208"}) {
    SCOPED_TRACE(id);
    const std::string base = std::string("/showtimes/") + id;
    ExpectError(Call("POST", base + "/holds", R"({"seats":["A1"]})", {Bearer(tok)}), 404,
                "NOT_FOUND");
    ExpectError(Call("POST", base + "/holds", R"({"best":{"count":1,"category":"standard"}})",
                     {Bearer(tok)}),
                404, "NOT_FOUND");
    ExpectError(Call("GET", base), 404, "NOT_FOUND");
    ExpectError(Call("GET", base + "/seats"), 404, "NOT_FOUND");
    ExpectError(Call("POST", base + "/queue", "", {Bearer(tok)}), 404, "NOT_FOUND");
    ExpectError(Call("GET", std::string("/bookings/") + id, "", {Bearer(tok)}), 404, "NOT_FOUND");
  }
  // Not one spelling of an id: a sign, a leading zero, 20 digits, past 2^63 - 1.
  for (const char* id : {"+1", "-1", "01", "0", "00000000000000000001", "9223372036854775808",
                         "18446744073709551616", "1e3", "0x10"}) {
    SCOPED_TRACE(id);
    ExpectError(Call("GET", std::string("/showtimes/") + id), 404, "NOT_FOUND");
    ExpectError(Call("POST", std::string("/showtimes/") + id + "/holds", R"({"seats":["E1"]})",
                     {Bearer(tok)}),
                404, "NOT_FOUND");
  }
  EXPECT_EQ(Call("GET", "/healthz").status, 200);
  EXPECT_EQ(Hold(11, R"(["E1"])").status, 201);
}

// Hold ids compare case-insensitively: the upper-case spelling of a hold id finds it.
TEST_P(HttpApi, AnUpperCaseHoldIdFindsTheHold) {
  auto hold = Hold(12, R"(["E2"])");
  ASSERT_EQ(hold.status, 201);
  std::string id = json::parse(hold.body)["holdId"];
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto got = Call("GET", "/holds/" + id, "", {Bearer(Token(12))});
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(json::parse(got.body)["holdId"], json::parse(hold.body)["holdId"]);
  EXPECT_EQ(Call("POST", "/holds/" + id + "/extend", "", {Bearer(Token(12))}).status, 200);
  EXPECT_EQ(Call("DELETE", "/holds/" + id, "", {Bearer(Token(12))}).status, 204);
  EXPECT_EQ(json::parse(Call("GET", Seats()).body)["seats"][1]["status"], "AVAILABLE");
}

// A body is exactly one JSON value: a byte-order mark before it, or an object naming a key
// twice (the last one used to win), is BAD_JSON and changes nothing; a token whose claims
// name `sub` twice is refused (it acted as the second).
TEST_P(HttpApi, DuplicateKeysAndByteOrderMarksAreRefused) {
  const std::string before = SeatState();
  const std::string tok = Token(13);
  ExpectError(Call("POST", Holds(),
                   "\xEF\xBB\xBF"
                   R"({"seats":["E1"]})",
                   {Bearer(tok)}),
              400, "BAD_JSON");
  ExpectError(Call("POST", Holds(), R"({"seats":["E1"],"seats":["E2"]})", {Bearer(tok)}), 400,
              "BAD_JSON");
  ExpectError(Call("POST", Holds(), R"({"best":{"count":1,"count":2,"category":"standard"}})",
                   {Bearer(tok)}),
              400, "BAD_JSON");
  EXPECT_EQ(SeatState(), before);
  const std::string header = Base64UrlEncode(R"({"alg":"HS256","typ":"JWT"})");
  const std::string claims =
      Base64UrlEncode(R"({"sub":"13","sub":"14","exp":)" +
                      std::to_string(ToEpochMs(SystemClock().Now()) / 1000 + 600) + "}");
  const std::string input = header + "." + claims;
  const std::string two_subs = input + "." + Base64UrlEncode(HmacSha256(kSecret, input));
  ExpectError(Call("POST", Holds(), R"({"seats":["E1"]})", {Bearer(two_subs)}), 401,
              "UNAUTHENTICATED");
  EXPECT_EQ(SeatState(), before);
}

// Every response says nosniff: answers, refusals, the page, errors of the head.
TEST_P(HttpApi, EveryResponseCarriesNoSniff) {
  for (const auto& [method, target] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/healthz"},
                                                        {"GET", "/"},
                                                        {"GET", "/nowhere"},
                                                        {"POST", "/healthz"},
                                                        {"GET", Seats()},
                                                        {"POST", Holds()},
                                                        {"GET", "/metrics"}}) {
    auto r = Call(method, target);
    EXPECT_EQ(r.Header("x-content-type-options"), "nosniff") << method << " " << target;
  }
}

// A payment reference has one spelling: "07" names no booking. Such a callback once
// confirmed booking 7 and then stopped the process on an assertion after the commit. It is
// recorded and refunded like any unknown reference, and the booking stays payable.
TEST_P(PaymentCallbacks, AReferenceWithALeadingZeroNamesNoBooking) {
  auto hold = Hold(23, R"(["E3"])");
  ASSERT_EQ(hold.status, 201);
  auto store = Direct();
  auto booking = store->StartCheckout(json::parse(hold.body)["holdId"], 23, Millis(600'000),
                                      Millis(1'200'000));
  ASSERT_TRUE(booking.ok()) << booking.status().message();
  json report = json::parse(Report("pay_zero", booking->id, 1250));
  report["reference"] = "0" + std::to_string(booking->id);
  auto answer = Signed(report.dump());
  ASSERT_EQ(answer.status, 200) << answer.body;
  EXPECT_NE(json::parse(answer.body)["outcome"], "confirmed") << answer.body;
  EXPECT_EQ(Call("GET", "/healthz").status, 200) << "the service lives";
  const std::string path = "/bookings/" + std::to_string(booking->id);
  EXPECT_EQ(json::parse(Call("GET", path, "", {Bearer(Token(23))}).body)["status"], "PENDING");
  // Its own reference still confirms it.
  auto own = Signed(Report("pay_own", booking->id, 1250));
  ASSERT_EQ(own.status, 200) << own.body;
  EXPECT_EQ(json::parse(own.body)["outcome"], "confirmed") << own.body;
}

// A showtime of four seats starting `from_now` from now, for the store to create directly
// (the API refuses starts in the past).
NewShowtime SmallShowtime(const std::string& title, const std::string& cinema, Millis from_now) {
  NewShowtime s;
  s.title = title;
  s.cinema = cinema;
  s.hall = "Screen 2";
  s.starts_at = SystemClock().Now() + from_now;
  s.rows = {{"A", 4, "standard"}};
  s.prices = {{"standard", {900, "EUR"}}};
  return s;
}

// Sales close at the start, or salesCloseMinutesBefore earlier (API.md): holds, checkouts
// and queue joins are then 409 SALES_CLOSED, decided in the store on its clock. A hold on a
// show that had started once answered 201.
TEST_P(PaymentCallbacks, SalesCloseAtTheStartOrEarlier) {
  auto store = Direct();
  NewShowtime started = SmallShowtime("Started", "Odeon Leicester Square", -Millis(60'000));
  auto past = store->CreateShowtime(started);  // behind the API's back: it refuses past starts
  ASSERT_TRUE(past.ok()) << past.status().message();
  NewShowtime closing = started;
  closing.title = "Closes an hour before";
  closing.starts_at = SystemClock().Now() + Millis(30 * 60'000);
  closing.sales_close_minutes = 60;
  auto early = store->CreateShowtime(closing);
  ASSERT_TRUE(early.ok()) << early.status().message();
  const std::string before = SeatState();
  for (const int64_t id : std::vector<int64_t>{past.value(), early.value()}) {
    SCOPED_TRACE(id);
    const std::string holds = "/showtimes/" + std::to_string(id) + "/holds";
    ExpectError(Call("POST", holds, R"({"seats":["A1"]})", {Bearer(Token(15))}), 409,
                "SALES_CLOSED");
    ExpectError(
        Call("POST", holds, R"({"best":{"count":2,"category":"standard"}})", {Bearer(Token(15))}),
        409, "SALES_CLOSED");
    ExpectError(
        Call("POST", "/showtimes/" + std::to_string(id) + "/queue", "", {Bearer(Token(15))}), 409,
        "SALES_CLOSED");
    auto owners = store->GetSeatOwners(id);
    ASSERT_TRUE(owners.ok());
    for (const auto& o : owners.value()) EXPECT_EQ(o.status, SeatStatus::kAvailable) << o.code;
  }
  EXPECT_EQ(SeatState(), before);
  auto shown = json::parse(Call("GET", "/showtimes/" + std::to_string(early.value())).body);
  EXPECT_EQ(shown["salesCloseMinutesBefore"], 60);
  // A hold made while sales were open cannot be checked out once they closed.
  NewShowtime soon = started;
  soon.title = "Soon";
  soon.starts_at = SystemClock().Now() + Millis(3'000);
  auto soon_id = store->CreateShowtime(soon);
  ASSERT_TRUE(soon_id.ok());
  auto hold = Call("POST", "/showtimes/" + std::to_string(soon_id.value()) + "/holds",
                   R"({"seats":["A2"]})", {Bearer(Token(16))});
  ASSERT_EQ(hold.status, 201) << hold.body;
  std::this_thread::sleep_for(std::chrono::milliseconds(3'500));  // past the start
  ExpectError(
      Call("POST", "/holds/" + json::parse(hold.body)["holdId"].get<std::string>() + "/checkout",
           "", {Bearer(Token(16)), {"Idempotency-Key", "after-the-start"}}),
      409, "SALES_CLOSED");
}

// The list shows what lies ahead unless asked for an earlier `from`; the admin refuses a
// start in the past; a showtime carries the cinema's time zone (IANA), UTC by default.
TEST_P(PaymentCallbacks, TheListShowsWhatIsAheadAndShowtimesCarryTheirTimeZone) {
  auto store = Direct();
  NewShowtime yesterday = SmallShowtime("Yesterday", "Rex", -Millis(86'400'000));
  ASSERT_TRUE(store->CreateShowtime(yesterday).ok());
  EXPECT_EQ(json::parse(Call("GET", "/showtimes?cinema=Rex").body)["showtimes"].size(), 0u);
  EXPECT_EQ(
      json::parse(Call("GET", "/showtimes?cinema=Rex&from=2000-01-01T00:00:00Z").body)["showtimes"]
          .size(),
      1u);
  const std::string admin = Token(1, true);
  std::string past = kLayout;
  past.replace(past.find("2099-12-18T19:30"), 16, "2020-12-18T19:30");
  ExpectError(Call("POST", "/admin/showtimes", past, {Bearer(admin)}), 400, "VALIDATION_FAILED");
  EXPECT_EQ(json::parse(Call("GET", "/showtimes/" + std::to_string(showtime_)).body)["timeZone"],
            "UTC");
  std::string zoned = kLayout;
  zoned.insert(zoned.rfind('}'), R"(, "timeZone": "Europe/London", "salesCloseMinutesBefore": 15)");
  auto created = Call("POST", "/admin/showtimes", zoned, {Bearer(admin)});
  ASSERT_EQ(created.status, 201) << created.body;
  const int64_t zoned_id = json::parse(created.body)["showtimeId"];
  auto shown = json::parse(Call("GET", "/showtimes/" + std::to_string(zoned_id)).body);
  EXPECT_EQ(shown["timeZone"], "Europe/London");
  EXPECT_EQ(shown["salesCloseMinutesBefore"], 15);
  for (const char* bad : {R"("Mars/Olympus")", R"("../etc/passwd")", R"("europe/london")", R"("")",
                          R"(42)", R"("Europe")", R"("Europe/London/")"}) {
    std::string layout = kLayout;
    layout.insert(layout.rfind('}'), std::string(R"(, "timeZone": )") + bad);
    ExpectError(Call("POST", "/admin/showtimes", layout, {Bearer(admin)}), 400,
                "VALIDATION_FAILED");
  }
  for (const char* bad : {"-1", "10081", "1.5", R"("15")"}) {
    std::string layout = kLayout;
    layout.insert(layout.rfind('}'), std::string(R"(, "salesCloseMinutesBefore": )") + bad);
    ExpectError(Call("POST", "/admin/showtimes", layout, {Bearer(admin)}), 400,
                "VALIDATION_FAILED");
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, HttpApi, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
