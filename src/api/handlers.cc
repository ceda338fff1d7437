#include "api/handlers.h"

#include <strings.h>

#include <array>
#include <charconv>
#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <variant>

#include "api/json_io.h"
#include "core/crypto.h"
#include "core/gateway_signature.h"
#include "core/jwt.h"
#include "core/log.h"
#include "core/seats.h"
#include "core/sync.h"
#include "core/text.h"
#include "core/ticket_code.h"
#include "core/time_format.h"
#include "tickets/qr_code.h"

namespace boxoffice {
std::string_view OpenApiYaml();  // docs/openapi.yaml, embedded at build time
}

namespace boxoffice::api {
namespace {

using http::ErrorResponse;
using http::Request;
using http::Response;

constexpr int kDefaultListLimit = 100;
constexpr int kMaxListLimit = 500;
// `seatsLeft=true` visits every seat of every listed showtime (a 300-seat hall is 300 rows):
// a page of 100 costs ~50 ms of PostgreSQL at chain scale, so no larger page counts.
constexpr int kMaxSeatsLeftListLimit = 100;

Response Json(int status, std::string body) {
  Response r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

// {"seats":[...]}, written directly (the refusal of most holds at a premiere).
void AppendSeats(std::string* out, const std::vector<std::string>& seats) {
  out->push_back('[');
  for (size_t i = 0; i < seats.size(); ++i) {
    if (i) out->push_back(',');
    AppendJsonString(out, seats[i]);
  }
  out->push_back(']');
}

// {"seats":[...]} and, for a refused hold picked by hand, "alternatives":[{"seats":[...]}].
std::string SeatsDetail(const Status& s) {
  std::string out = "{\"seats\":";
  AppendSeats(&out, s.seats());
  if (const auto& alternatives = s.alternatives()) {
    out.append(",\"alternatives\":[");
    for (size_t i = 0; i < alternatives->size(); ++i) {
      out.append(i ? ",{\"seats\":" : "{\"seats\":");
      AppendSeats(&out, (*alternatives)[i]);
      out.push_back('}');
    }
    out.push_back(']');
  }
  out.push_back('}');
  return out;
}

Response Unauthenticated(const std::string& why) {
  return ErrorResponse(401, "UNAUTHENTICATED", why)
      .Header("WWW-Authenticate", "Bearer error=\"invalid_token\"");
}

Response BadBody(const ParseError& e) {
  return ErrorResponse(400, e.bad_json ? "BAD_JSON" : "VALIDATION_FAILED", e.message);
}

// An id in a path or query (API.md Conventions); anything else names nothing (404).
std::optional<int64_t> ParseId(const std::string& text) { return ParseDecimalId(text); }

// A hold id in a path, in the lower case the service writes (API.md: hold ids compare
// case-insensitively), or nullopt when it is no UUID (404).
std::optional<std::string> HoldIdOf(const std::string& text) {
  std::string id = text;
  for (char& c : id) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  if (!IsUuid(id)) return std::nullopt;
  return id;
}

// A list's `limit` (1 to max_limit; *limit keeps its default without one) and `cursor`
// query parameters, or the 400 that refuses them.
std::optional<Response> PageParams(Request& req, int max_limit, int* limit,
                                   std::optional<std::pair<Instant, int64_t>>* cursor) {
  if (auto text = req.QueryParam("limit")) {
    auto n = ParseId(*text);
    if (!n || *n > max_limit) {
      return ErrorResponse(400, "VALIDATION_FAILED",
                           "limit must be 1 to " + std::to_string(max_limit));
    }
    *limit = static_cast<int>(*n);
  }
  if (auto text = req.QueryParam("cursor")) {
    *cursor = DecodeCursor(*text);
    if (!*cursor) return ErrorResponse(400, "VALIDATION_FAILED", "cursor is not valid");
  }
  return std::nullopt;
}

class Api {
 public:
  explicit Api(const ApiDeps& deps) : d_(deps), tickets_(deps.ticket_secret) {
    for (CheckInOutcome outcome : {CheckInOutcome::kAdmitted, CheckInOutcome::kAlreadyCheckedIn,
                                   CheckInOutcome::kVoid, CheckInOutcome::kUnknown}) {
      checkins_[static_cast<size_t>(outcome)] = &d_.metrics->GetCounter(
          "boxoffice_checkins_total", "Ticket scans at the door by outcome.",
          std::string("outcome=\"") + CheckInOutcomeName(outcome) + "\"");
    }
    wrong_showtime_ =
        &d_.metrics->GetCounter("boxoffice_checkins_total", "Ticket scans at the door by outcome.",
                                "outcome=\"WRONG_SHOWTIME\"");
  }

  // The customer behind the bearer token, or the 401 to send.
  std::variant<Principal, Response> Authenticate(const Request& req) const {
    const std::string* header = req.headers.Find("Authorization");
    if (!header) return Unauthenticated("missing bearer token");
    constexpr std::string_view kBearer = "Bearer ";
    if (header->size() <= kBearer.size() ||
        strncasecmp(header->c_str(), kBearer.data(), kBearer.size()) != 0) {
      return Unauthenticated("missing bearer token");
    }
    auto who =
        VerifyJwt(std::string_view(*header).substr(kBearer.size()), d_.jwt_secret, d_.clock->Now());
    if (!who.ok()) return Unauthenticated(who.status().message());
    return who.value();
  }

  // The same, for a token whose scope grants `scope` (Principal::admin or ::door), or the
  // 401 or 403 to send.
  std::variant<Principal, Response> Authorize(const Request& req, bool Principal::*scope,
                                              const char* name) const {
    auto who = Authenticate(req);
    if (auto* p = std::get_if<Principal>(&who); p && !((*p).*scope)) {
      return ErrorResponse(403, "FORBIDDEN", std::string(name) + " scope required");
    }
    return who;
  }

  Response Healthz(Request&) { return Json(200, R"({"status":"ok"})"); }

  // On the I/O thread: both round trips are awaited (a balancer polls this often).
  // With shards, the instance is ready while any shard answers (it sells that shard's
  // showtimes; the others answer 503), and the body names each shard's state.
  io::asio::awaitable<Response> Readyz(Request&) {
    std::string shards;  // ,"shards":{...} when sharded
    if (d_.store->Databases().size() > 1) {
      auto pings = co_await d_.store->PingDatabasesAsync(Store::kPingDeadline);
      std::vector<std::string> down;
      nlohmann::json states = nlohmann::json::object();
      for (auto& [number, status] : pings) {
        states[std::to_string(number)] = status.ok() ? "ok" : "down";
        if (!status.ok()) down.push_back(std::to_string(number));
      }
      if (down.size() == pings.size()) {
        co_return ErrorResponse(503, "UNAVAILABLE", "database: every shard is down");
      }
      shards = ",\"database\":\"" + std::string(down.empty() ? "ok" : "degraded") +
               "\",\"shards\":" + states.dump();
    } else {
      Status s = co_await d_.store->PingAsync();
      if (!s.ok()) co_return ErrorResponse(503, "UNAVAILABLE", "database: " + s.message());
      shards = ",\"database\":\"ok\"";
    }
    if (!d_.gate) co_return Json(200, "{\"status\":\"ready\"" + shards + "}");
    // Holds still work without Redis (slower, through the store alone), but API.md asks
    // readiness of both: a balancer prefers instances whose gate works.
    if (Status r = co_await d_.gate->PingAsync(); !r.ok()) {
      co_return ErrorResponse(503, "UNAVAILABLE", "redis: " + r.message());
    }
    co_return Json(200, "{\"status\":\"ready\"" + shards + ",\"redis\":\"ok\"}");
  }

  Response MetricsText(Request&) {
    Response r;
    r.content_type = "text/plain; version=0.0.4; charset=utf-8";
    r.body = d_.metrics->Render();
    return r;
  }

  Response OpenApi(Request&) {
    Response r;
    r.content_type = "application/yaml";
    r.body = std::string(OpenApiYaml());
    return r;
  }

  // GET /showtimes's query, one more than asked for (it tells whether there is a next
  // page), or the 400 that refuses it.
  // Without `from`, what has not started yet (API.md).
  static std::variant<ShowtimeQuery, Response> ListQueryOf(Request& req, Instant now) {
    ShowtimeQuery q;
    q.limit = kDefaultListLimit;
    q.from = now;
    if (auto from = req.QueryParam("from")) {
      q.from = ParseRfc3339(*from);
      if (!q.from) return ErrorResponse(400, "VALIDATION_FAILED", "from must be an RFC 3339 time");
    }
    if (auto to = req.QueryParam("to")) {
      q.to = ParseRfc3339(*to);
      if (!q.to) return ErrorResponse(400, "VALIDATION_FAILED", "to must be an RFC 3339 time");
    }
    if (auto cinema = req.QueryParam("cinema")) q.cinema = *cinema;
    if (auto refused = PageParams(req, kMaxListLimit, &q.limit, &q.after)) return *refused;
    if (auto seats_left = req.QueryParam("seatsLeft")) {
      if (*seats_left != "true" && *seats_left != "false") {
        return ErrorResponse(400, "VALIDATION_FAILED", "seatsLeft must be true or false");
      }
      q.seats_left = *seats_left == "true";
      if (q.seats_left && q.limit > kMaxSeatsLeftListLimit) {
        return ErrorResponse(400, "VALIDATION_FAILED",
                             "seatsLeft=true lists at most " +
                                 std::to_string(kMaxSeatsLeftListLimit) + " showtimes a page");
      }
    }
    q.limit += 1;
    return q;
  }

  io::asio::awaitable<Response> ListShowtimes(Request& req) {
    auto of = ListQueryOf(req, d_.clock->Now());
    if (auto* refused = std::get_if<Response>(&of)) co_return std::move(*refused);
    ShowtimeQuery q = std::get<ShowtimeQuery>(std::move(of));
    const int limit = q.limit - 1;
    auto list = co_await d_.store->ListShowtimesAsync(std::move(q));
    if (!list.ok()) co_return StatusResponse(list.status());
    std::string next;
    if (list->size() > static_cast<size_t>(limit)) {
      list->resize(static_cast<size_t>(limit));
      next = EncodeCursor(list->back().starts_at, list->back().id);
    }
    co_return Json(200, ShowtimeListJson(list.value(), next));
  }

  io::asio::awaitable<Response> GetShowtime(Request& req) {
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    auto s = co_await d_.store->GetShowtimeAsync(*id);
    if (!s.ok()) co_return StatusResponse(s.status());
    // Whether a waiting room is on: the seat picker puts the customer in line before the map.
    const bool room = d_.admission && d_.admission->RoomOf(*id).has_value();
    co_return Json(200, ShowtimeJson(s.value(), room));
  }

  // A map not fresh in the cache: loaded (or another reader's load shared) on the loop.
  io::asio::awaitable<Response> GetSeats(Request& req) {
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    auto map = co_await d_.seat_maps->GetAsync(*id);
    if (!map.ok()) co_return StatusResponse(map.status());
    co_return SeatMapResponse(req, *map.value());
  }

  // On the I/O thread: a fresh cached map is answered at once, without a worker.
  std::optional<Response> GetSeatsCached(Request& req) {
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) return std::nullopt;
    auto entry = d_.seat_maps->Peek(*id);
    if (!entry) return std::nullopt;
    return SeatMapResponse(req, *entry);
  }

  // The map in the coding the client prefers (gzip or br, compressed once per version),
  // else as it is; its tag names the coding, and If-None-Match hits only the tag of the
  // coding chosen (RFC 9110 13.1.2), so a cache never takes a 304 for bytes it lacks.
  static Response SeatMapResponse(const Request& req, const SeatMapCache::Entry& map) {
    http::Encoding coding = http::PreferredEncoding(req.headers.Find("Accept-Encoding"));
    if (req.headers.Count("Accept-Encoding") > 1) {  // one list (RFC 9110 5.3)
      std::string all;
      for (const auto& [name, value] : req.headers.items()) {
        if (EqualsNoCase(name, "Accept-Encoding")) all.append(all.empty() ? "" : ", ").append(value);
      }
      coding = http::PreferredEncoding(&all);
    }
    const SeatMapCache::Entry::Representation* form = map.In(coding);
    if (!form) form = map.In(http::Encoding::kIdentity);  // the coding does not pay
    BOX_ASSERT(form != nullptr);  // identity is always made
    Response r;
    if (const std::string* inm = req.headers.Find("If-None-Match");
        inm && http::IfNoneMatchHits(*inm, form->tag)) {
      r.status = 304;
      r.fields = form->fields_304;
      return r;
    }
    r.fields = form->fields_200;
    r.shared_body = form->body;
    return r;
  }

  // Server-Sent Events of the showtime's seat changes from now on (API.md).
  // On the I/O thread: the map's load, if any, is awaited (SeatMapCache::GetAsync).
  io::asio::awaitable<Response> StreamSeats(Request& req) {
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    // The cache answers whether the showtime exists, mostly without the store.
    auto map = co_await d_.seat_maps->GetAsync(*id);
    if (!map.ok()) co_return StatusResponse(map.status());
    auto stream = d_.seat_streams->Open(*id);
    if (!stream.ok()) co_return StatusResponse(stream.status());
    Response r;
    r.content_type = "text/event-stream";
    r.Header("Cache-Control", "no-store").Header("X-Accel-Buffering", "no");
    r.stream = std::move(stream.value());
    co_return r;
  }

  // On the I/O thread: Redis and the store are awaited, never waited for.
  io::asio::awaitable<Response> CreateHold(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    const Principal who = std::get<Principal>(auth);
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    std::vector<std::string> seats;
    std::optional<BestAvailable> best;
    if (auto e = ParseHoldBody(req.body, &seats, &best)) co_return BadBody(*e);
    // A showtime cancelled is refused before the gate, whose keys may still stand (the
    // store refuses it inside its decision too).
    auto terms = co_await SaleTermsOf(*id);
    if (terms.ok() && terms->cancelled) co_return StatusResponse(ShowtimeCancelled(*id));
    const std::string* admission = req.headers.Find("X-Admission-Token");
    Result<Hold> hold = Status(Code::kInternal, "hold not decided");
    if (best) {
      hold = co_await d_.holds->HoldBestAsync(*id, who.customer_id, std::move(*best), admission);
    } else {
      hold = co_await d_.holds->HoldSeatsAsync(*id, who.customer_id, std::move(seats), admission);
    }
    if (!hold.ok()) co_return StatusResponse(hold.status());
    co_return Json(201, HoldCreatedJson(hold.value()))
        .Header("Location", "/holds/" + hold->hold_id);
  }

  // The customer and hold id of an authenticated request on a well-formed hold id, or the
  // answer that refuses it.
  std::variant<std::pair<int64_t, std::string>, Response> HoldOf(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) return std::move(*denied);
    auto hold_id = HoldIdOf(req.params["holdId"]);
    if (!hold_id) return ErrorResponse(404, "NOT_FOUND", "hold not found");
    return std::pair<int64_t, std::string>(std::get<Principal>(auth).customer_id,
                                           std::move(*hold_id));
  }

  // On the I/O thread: one statement each, awaited (on PostgreSQL the loop's pipeline).
  io::asio::awaitable<Response> GetHold(Request& req) {
    auto of = HoldOf(req);
    if (auto* denied = std::get_if<Response>(&of)) co_return std::move(*denied);
    auto [customer, hold_id] = std::get<0>(std::move(of));
    auto hold = co_await d_.holds->GetHoldAsync(std::move(hold_id), customer);
    co_return hold.ok() ? Json(200, HoldJson(hold.value())) : StatusResponse(hold.status());
  }

  io::asio::awaitable<Response> DeleteHold(Request& req) {
    auto of = HoldOf(req);
    if (auto* denied = std::get_if<Response>(&of)) co_return std::move(*denied);
    auto [customer, hold_id] = std::get<0>(std::move(of));
    Status s = co_await d_.holds->ReleaseHoldAsync(std::move(hold_id), customer);
    if (!s.ok()) co_return StatusResponse(s);
    Response r;
    r.status = 204;
    co_return r;
  }

  io::asio::awaitable<Response> ExtendHold(Request& req) {
    auto of = HoldOf(req);
    if (auto* denied = std::get_if<Response>(&of)) co_return std::move(*denied);
    auto [customer, hold_id] = std::get<0>(std::move(of));
    auto hold = co_await d_.holds->ExtendHoldAsync(std::move(hold_id), customer);
    if (!hold.ok()) co_return StatusResponse(hold.status());
    co_return Json(200, nlohmann::json{{"holdId", hold->hold_id},
                                       {"expiresAt", FormatRfc3339(hold->expires_at)}}
                            .dump());
  }

  // On the I/O thread: the store's phases on the blocking pool, the gateway awaited.
  io::asio::awaitable<Response> Checkout(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto hold_id = HoldIdOf(req.params["holdId"]);
    if (!hold_id) co_return ErrorResponse(404, "NOT_FOUND", "hold not found");
    const std::string* key = req.headers.Find("Idempotency-Key");
    if (!key || key->empty()) {
      co_return ErrorResponse(400, "IDEMPOTENCY_KEY_REQUIRED",
                              "checkout needs an Idempotency-Key header");
    }
    if (!IsValidIdempotencyKey(*key)) {
      co_return ErrorResponse(400, "VALIDATION_FAILED",
                              "Idempotency-Key must be 1 to 255 printable ASCII characters");
    }
    // Where the tickets go: the body's email, else the token's (API.md "Checkout").
    std::string email = std::get<Principal>(auth).email;
    if (auto e = ParseCheckoutBody(req.body, &email)) co_return BadBody(*e);
    auto r = co_await d_.checkout->CheckoutAsync(std::get<Principal>(auth).customer_id, *key,
                                                 *hold_id, std::move(email));
    if (!r.ok()) co_return StatusResponse(r.status());
    Response response = Json(r->status, r->body);
    if (r->replayed) response.Header("Idempotent-Replayed", "true");
    co_return response;
  }

  // On the I/O thread: customers poll this while they pay.
  io::asio::awaitable<Response> GetBooking(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto id = ParseId(req.params["bookingId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "booking not found");
    auto booking = co_await d_.store->GetBookingAsync(*id, std::get<Principal>(auth).customer_id);
    if (!booking.ok()) co_return StatusResponse(booking.status());
    co_return Json(200, BookingJson(booking.value()));
  }

  // POST /bookings/{id}/cancel (the booking's customer): refunded once, the seats for sale
  // again at once (the gate's keys gone before the answer; maps and live streams told).
  io::asio::awaitable<Response> CancelBooking(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto id = ParseId(req.params["bookingId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "booking not found");
    if (req.body.find_first_not_of(" \t\r\n") != std::string::npos && req.body != "{}") {
      co_return ErrorResponse(400, "VALIDATION_FAILED", "a cancel takes no body");
    }
    const int64_t customer = std::get<Principal>(auth).customer_id;
    auto cancel = co_await d_.store->CancelBookingAsync(*id, customer);
    if (!cancel.ok()) co_return StatusResponse(cancel.status());
    // Only the call that refunded it frees its seats: by a second click they may be another
    // customer's, or the showtime cancelled.
    if (cancel->refunded_now) {
      if (d_.holds) co_await d_.holds->BookingCancelled(cancel->booking);
      LogInfo("booking cancelled",
              {{"bookingId", *id}, {"customerId", customer}, {"requestId", req.request_id}});
    }
    co_return Json(200, BookingJson(cancel->booking));
  }

  // The gateway's signed callback: verified before anything is parsed, then settled by the
  // payments service (once per payment id: late, twice, unknown; see Store::SettlePayment).
  io::asio::awaitable<Response> PaymentCallback(Request& req) {
    const std::string* signature = req.headers.Find("X-Gateway-Signature");
    Status verified = d_.gateway_secret.empty()
                          ? Status(Code::kInvalid, "payment callbacks are not configured")
                          : VerifyGatewaySignature(signature ? *signature : "", req.body,
                                                   d_.gateway_secret, d_.clock->Now());
    if (!verified.ok()) {
      LogWarn("payment callback refused",
              {{"reason", verified.message()}, {"requestId", req.request_id}});
      co_return ErrorResponse(401, "UNAUTHENTICATED", "bad or missing gateway signature");
    }
    PaymentReport report;
    if (auto e = ParsePaymentReport(req.body, &report)) co_return BadBody(*e);
    std::string via = "callback";
    auto settled = co_await d_.payments->SettleAsync(std::move(report), via, req.request_id);
    if (!settled.ok()) co_return StatusResponse(settled.status());
    const char* outcome = SettlementName(settled.value());
    co_return Json(200, nlohmann::json{{"received", true}, {"outcome", outcome}}.dump());
  }

  // An admin's request on a showtime: the admin (as the trail names them) and the showtime,
  // or the answer that refuses it.
  struct AdminOnShowtime {
    int64_t actor = 0;
    int64_t showtime_id = 0;
  };
  std::variant<AdminOnShowtime, Response> AdminShowtime(Request& req) {
    auto auth = Authorize(req, &Principal::admin, "admin");
    if (auto* denied = std::get_if<Response>(&auth)) return std::move(*denied);
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    return AdminOnShowtime{std::get<Principal>(auth).customer_id, *id};
  }

  // On the I/O thread: the store's write is awaited.
  io::asio::awaitable<Response> SetWaitingRoom(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    WaitingRoomConfig config;
    if (auto e = ParseWaitingRoom(req.body, &config)) co_return BadBody(*e);
    Status s = co_await d_.admission->ConfigureAsync(id, config);
    if (!s.ok()) co_return StatusResponse(s);
    LogInfo("waiting room set", {{"showtimeId", id},
                                 {"enabled", config.enabled},
                                 {"activeLimit", config.active_limit},
                                 {"requestId", req.request_id}});
    co_return Json(200, WaitingRoomJson(id, config));
  }

  // POST /admin/showtimes/{id}/cancel: one short transaction on the showtime's database
  // (AdminStore::CancelShowtime); the refunds reach the gateway through the refund worker.
  io::asio::awaitable<Response> CancelShowtime(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    std::string reason;
    if (auto e = ParseCancelBody(req.body, &reason)) co_return BadBody(*e);
    auto done = co_await d_.store->CancelShowtimeAsync(id, reason, actor);
    if (!done.ok()) co_return StatusResponse(done.status());
    {
      MutexLock lock(close_times_mu_);
      close_times_.erase(id);
    }
    if (!done->already) {
      // This instance's map and line know at once; the other instances' caches and the
      // live streams hear every seat BOOKED.
      if (d_.seat_maps) d_.seat_maps->Invalidate(id);
      auto map = co_await d_.store->GetSeatMapAsync(id);
      if (map.ok() && d_.holds) {
        std::vector<std::string> seats;
        for (const SeatView& seat : map->seats) seats.push_back(seat.code);
        d_.holds->AnnounceCancelled(id, std::move(seats));
      }
      LogInfo("showtime cancelled", {{"showtimeId", id},
                                     {"actor", actor},
                                     {"bookingsRefunded", done->bookings_refunded},
                                     {"bookingsPending", done->bookings_pending},
                                     {"requestId", req.request_id}});
    }
    co_return Json(202, ShowtimeCancelJson(id, done.value()));
  }

  // An empty list of an unknown showtime is a 404 (API.md Conventions), not an empty page.
  io::asio::awaitable<Status> ShowtimeKnown(int64_t showtime_id) {
    auto showtime = co_await d_.store->GetShowtimeAsync(showtime_id);
    co_return showtime.status();
  }

  // GET /admin/showtimes/{id}/sales: one read of the showtime's database.
  io::asio::awaitable<Response> ShowtimeSalesOf(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    auto sales = co_await d_.store->GetShowtimeSalesAsync(id);
    if (!sales.ok()) co_return StatusResponse(sales.status());
    co_return Json(200, ShowtimeSalesJson(id, sales.value())).Header("Cache-Control", "no-store");
  }

  // GET /admin/showtimes/{id}/bookings?status=&cursor=&limit=: in booking-id order.
  static constexpr int kMaxAdminBookingsPage = 500;
  io::asio::awaitable<Response> ShowtimeBookingsOf(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    ShowtimeBookingsQuery q;
    q.showtime_id = id;
    std::optional<std::pair<Instant, int64_t>> cursor;
    if (auto refused = PageParams(req, kMaxAdminBookingsPage, &q.limit, &cursor)) {
      co_return std::move(*refused);
    }
    if (cursor) q.after_id = cursor->second;
    if (auto status = req.QueryParam("status")) {
      q.status = ParseBookingStatus(*status);
      if (!q.status) {
        co_return ErrorResponse(400, "VALIDATION_FAILED",
                                "status must be PENDING, CONFIRMED, FAILED or REFUNDED");
      }
    }
    const int limit = q.limit;
    q.limit += 1;  // one more tells whether there is a next page
    auto list = co_await d_.store->ListShowtimeBookingsAsync(std::move(q));
    if (!list.ok()) co_return StatusResponse(list.status());
    if (list->empty()) {
      Status known = co_await ShowtimeKnown(id);
      if (!known.ok()) co_return StatusResponse(known);
    }
    std::string next;
    if (list->size() > static_cast<size_t>(limit)) {
      list->resize(static_cast<size_t>(limit));
      next = EncodeCursor(Instant{}, list->back().id);
    }
    co_return Json(200, AdminBookingsJson(list.value(), next)).Header("Cache-Control", "no-store");
  }

  // PATCH /admin/showtimes/{id}: one transaction on the showtime's database.
  io::asio::awaitable<Response> EditShowtime(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    ShowtimeEdit edit;
    if (auto e = ParseShowtimeEdit(req.body, &edit)) co_return BadBody(*e);
    if (edit.starts_at && *edit.starts_at <= d_.clock->Now()) {
      co_return ErrorResponse(400, "VALIDATION_FAILED", "startsAt must lie in the future");
    }
    auto edited = co_await d_.store->EditShowtimeAsync(id, std::move(edit), actor);
    if (!edited.ok()) co_return StatusResponse(edited.status());
    if (d_.holds) d_.holds->ShowtimeEdited(id);  // its start may have moved
    MutexLock lock(close_times_mu_);
    close_times_.erase(id);
    co_return Json(200, ShowtimeJson(edited.value()));
  }

  // GET /admin/showtimes/{id}/changes: the showtime's admin trail, newest first.
  io::asio::awaitable<Response> AdminChanges(Request& req) {
    auto on = AdminShowtime(req);
    if (auto* denied = std::get_if<Response>(&on)) co_return std::move(*denied);
    const auto [actor, id] = std::get<AdminOnShowtime>(on);
    auto changes = co_await d_.store->ListAdminChangesAsync(id, kMaxAdminChanges);
    if (!changes.ok()) co_return StatusResponse(changes.status());
    if (changes->empty()) {
      Status known = co_await ShowtimeKnown(id);
      if (!known.ok()) co_return StatusResponse(known);
    }
    co_return Json(200, AdminChangesJson(changes.value())).Header("Cache-Control", "no-store");
  }
  static constexpr int kMaxAdminChanges = 500;

  // The stock behind a line (API.md "Waiting room and stock"), from the cached seat map (at
  // most its max-age old, this instance's own changes at once): the seats AVAILABLE, and
  // whether every seat is BOOKED. nullopt when the map cannot be read now.
  struct Stock {
    int64_t seats_left = 0;
    bool sold_out = false;
  };
  io::asio::awaitable<std::optional<Stock>> StockOf(int64_t showtime_id) {
    if (!d_.seat_maps) co_return std::nullopt;
    auto entry = co_await d_.seat_maps->GetAsync(showtime_id);
    if (!entry.ok() || !entry.value() || !entry.value()->map) co_return std::nullopt;
    Stock stock;
    bool all_booked = true;
    for (const SeatView& seat : entry.value()->map->seats) {
      if (seat.status == SeatStatus::kAvailable) ++stock.seats_left;
      if (seat.status != SeatStatus::kBooked) all_booked = false;
    }
    stock.sold_out = all_booked;
    co_return stock;
  }

  static Response QueueResponse(int status, const QueueView& view,
                                const std::optional<Stock>& stock) {
    nlohmann::json body{{"queueToken", view.queue_token},
                        {"position", view.place.position},
                        {"admitted", view.place.admitted},
                        {"estimatedWaitSeconds", view.estimated_wait_seconds}};
    if (stock) {
      body["seatsLeft"] = stock->seats_left;
      body["soldOut"] = stock->sold_out;
    }
    if (view.place.admitted) {
      body["admissionToken"] = view.admission_token;
      body["admissionExpiresAt"] = FormatRfc3339(view.place.admitted_until);
    }
    return Json(status, body.dump()).Header("Cache-Control", "no-store");
  }

  // On the I/O thread: the waiting room's one script call awaited.
  io::asio::awaitable<Response> JoinQueue(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    // No line for a showtime whose sales have closed: nobody it admits could hold a seat.
    auto terms = co_await SaleTermsOf(*id);
    if (!terms.ok()) co_return StatusResponse(terms.status());
    if (terms->cancelled) co_return StatusResponse(ShowtimeCancelled(*id));
    if (d_.clock->Now() >= terms->closes) co_return StatusResponse(SalesClosed(*id));
    // No line for a showtime sold out: nobody it admits could find a seat.
    const std::optional<Stock> stock = co_await StockOf(*id);
    if (stock && stock->sold_out) {
      co_return ErrorResponse(409, "SOLD_OUT",
                              "every seat of showtime " + std::to_string(*id) + " is sold");
    }
    auto view = co_await d_.admission->JoinAsync(*id, std::get<Principal>(auth).customer_id);
    if (!view.ok()) co_return StatusResponse(view.status());
    co_return QueueResponse(201, view.value(), stock);
  }

  io::asio::awaitable<Response> QueueStatus(Request& req) {
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    // Those waiting are told at their next poll that the showtime was cancelled or its sales
    // closed, as a join would be (the terms are cached: no read per poll).
    auto terms = co_await SaleTermsOf(*id);
    if (!terms.ok()) co_return StatusResponse(terms.status());
    if (terms->cancelled) co_return StatusResponse(ShowtimeCancelled(*id));
    if (d_.clock->Now() >= terms->closes) co_return StatusResponse(SalesClosed(*id));
    auto view = co_await d_.admission->FindAsync(*id, req.params["queueToken"]);
    if (!view.ok()) co_return StatusResponse(view.status());
    // Everyone waiting is told once the last seat is booked (their next poll), instead of
    // waiting for a turn that can never come.
    const std::optional<Stock> stock = co_await StockOf(*id);
    co_return QueueResponse(200, view.value(), stock);
  }

  // On the I/O thread: the showtime, its prices and seats are one statement, awaited.
  io::asio::awaitable<Response> CreateShowtime(Request& req) {
    auto auth = Authorize(req, &Principal::admin, "admin");
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    NewShowtime showtime;
    if (auto e = ParseNewShowtime(req.body, &showtime)) co_return BadBody(*e);
    if (showtime.starts_at <= d_.clock->Now()) {
      co_return ErrorResponse(400, "VALIDATION_FAILED", "startsAt must lie in the future");
    }
    auto id = co_await d_.store->CreateShowtimeAsync(std::move(showtime));
    if (!id.ok()) co_return StatusResponse(id.status());
    LogInfo("showtime created", {{"showtimeId", id.value()}, {"requestId", req.request_id}});
    co_return Json(201, nlohmann::json{{"showtimeId", id.value()}}.dump())
        .Header("Location", "/showtimes/" + std::to_string(id.value()));
  }

  // The caller's bookings, newest first (API.md "Tickets and the door").
  io::asio::awaitable<Response> MyBookings(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    CustomerBookingsQuery q;
    q.customer_id = std::get<Principal>(auth).customer_id;
    if (auto refused = PageParams(req, kMaxCustomerBookingsPage, &q.limit, &q.before)) {
      co_return std::move(*refused);
    }
    const int limit = q.limit;
    q.limit += 1;  // one more tells whether there is a next page
    auto list = co_await d_.store->ListCustomerBookingsAsync(std::move(q));
    if (!list.ok()) co_return StatusResponse(list.status());
    std::string next;
    if (list->size() > static_cast<size_t>(limit)) {
      list->resize(static_cast<size_t>(limit));
      next = EncodeCursor(list->back().booking.created_at, list->back().booking.id);
    }
    co_return Json(200, CustomerBookingsJson(list.value(), next))
        .Header("Cache-Control", "no-store");
  }

  // One signed code per seat of a confirmed booking (core/ticket_code.h).
  io::asio::awaitable<Response> Tickets(Request& req) {
    auto auth = Authenticate(req);
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto id = ParseId(req.params["bookingId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "booking not found");
    auto booking = co_await d_.store->GetBookingAsync(*id, std::get<Principal>(auth).customer_id);
    if (!booking.ok()) co_return StatusResponse(booking.status());
    if (booking->status != BookingStatus::kConfirmed) {
      co_return ErrorResponse(
          409, "BOOKING_NOT_CONFIRMED",
          std::string("the booking is ") + BookingStatusName(booking->status) +
              ", not CONFIRMED: no tickets",
          nlohmann::json{{"status", BookingStatusName(booking->status)}}.dump());
    }
    // In the hall's order (F9 before F10), as a customer reads them.
    std::vector<std::string> seats = booking->seats;
    std::sort(seats.begin(), seats.end(), [](const std::string& a, const std::string& b) {
      const auto sa = ParseSeatCode(a), sb = ParseSeatCode(b);
      if (!sa || !sb) return a < b;
      if (sa->row != sb->row) return RowLess(sa->row, sb->row);
      return sa->number < sb->number;
    });
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& seat : seats) {
      const std::string code = tickets_.Sign(Ticket{booking->showtime_id, booking->id, seat});
      list.push_back({{"seat", seat}, {"code", code}, {"qr", "/tickets/" + code + ".svg"}});
    }
    co_return Json(200, nlohmann::json{{"bookingId", booking->id},
                                       {"showtimeId", booking->showtime_id},
                                       {"tickets", std::move(list)}}
                            .dump())
        .Header("Cache-Control", "no-store");
  }

  // GET /tickets/{code}.svg and .png: public, on the I/O thread (no store: the code's
  // signature says whether it is ours). An image never changes, so it may be cached.
  Response TicketImage(Request& req) {
    const std::string& file = req.params["file"];
    const bool svg = file.size() > 4 && file.compare(file.size() - 4, 4, ".svg") == 0;
    const bool png = file.size() > 4 && file.compare(file.size() - 4, 4, ".png") == 0;
    if (!svg && !png) {
      return ErrorResponse(404, "NOT_FOUND", "ticket images are CODE.svg or CODE.png");
    }
    const std::string code = file.substr(0, file.size() - 4);
    if (!tickets_.Verify(code)) return ErrorResponse(404, "TICKET_UNKNOWN", "no such ticket");
    auto qr = EncodeQr(code);
    if (!qr) return ErrorResponse(500, "INTERNAL", "the QR code could not be drawn");
    Response r;
    r.content_type = svg ? "image/svg+xml" : "image/png";
    r.body = svg ? QrSvg(*qr) : QrPng(*qr);
    if (r.body.empty()) return ErrorResponse(500, "INTERNAL", "the QR code could not be drawn");
    r.Header("Cache-Control", "public, max-age=86400, immutable")
        .Header("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'");
    return r;
  }

  // A scan at the door: the code's signature first (a forgery never reaches the store),
  // then its showtime, then the store's one conditional write.
  io::asio::awaitable<Response> CheckIn(Request& req) {
    auto auth = Authorize(req, &Principal::door, "door");
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    CheckInBody body;
    if (auto e = ParseCheckInBody(req.body, &body)) co_return BadBody(*e);
    const std::optional<Ticket> ticket = tickets_.Verify(body.code);
    if (!ticket) co_return Refused(CheckInOutcome::kUnknown);
    if (ticket->showtime_id != body.showtime_id) {
      auto other = co_await d_.store->GetShowtimeAsync(ticket->showtime_id);
      if (!other.ok()) {
        if (other.status().code() == Code::kNotFound) co_return Refused(CheckInOutcome::kUnknown);
        co_return StatusResponse(other.status());
      }
      wrong_showtime_->Inc();
      co_return ErrorResponse(422, "WRONG_SHOWTIME",
                              "this ticket is for another showtime: " + other->title,
                              nlohmann::json{{"showtimeId", other->id},
                                             {"title", other->title},
                                             {"startsAt", FormatRfc3339(other->starts_at)},
                                             {"seat", ticket->seat},
                                             {"bookingId", ticket->booking_id}}
                                  .dump());
    }
    // (Named first: g++ 12 destroys a temporary in a co_await expression twice.)
    // A nonce is the scanning door's own: kept with its staff member's id, so another door
    // that happens to send the same one is a later scan, not the same one.
    std::string nonce = body.nonce.empty() ? ""
                                           : std::to_string(std::get<Principal>(auth).customer_id) +
                                                 ":" + body.nonce;
    CheckInRequest scan{ticket->showtime_id, ticket->booking_id, ticket->seat, std::move(nonce)};
    auto result = co_await d_.store->CheckInAsync(std::move(scan));
    if (!result.ok()) co_return StatusResponse(result.status());
    const nlohmann::json about{{"showtimeId", ticket->showtime_id},
                               {"seat", ticket->seat},
                               {"bookingId", ticket->booking_id}};
    switch (result->outcome) {
      case CheckInOutcome::kAdmitted: {
        checkins_[static_cast<size_t>(CheckInOutcome::kAdmitted)]->Inc();
        nlohmann::json body_json = about;
        body_json["status"] = "ADMITTED";
        body_json["checkedInAt"] = FormatRfc3339(result->checked_in_at);
        co_return Json(200, body_json.dump()).Header("Cache-Control", "no-store");
      }
      case CheckInOutcome::kAlreadyCheckedIn: {
        checkins_[static_cast<size_t>(CheckInOutcome::kAlreadyCheckedIn)]->Inc();
        nlohmann::json detail = about;
        detail["checkedInAt"] = FormatRfc3339(result->checked_in_at);
        co_return ErrorResponse(
            409, "ALREADY_CHECKED_IN",
            "this ticket was admitted at " + FormatRfc3339(result->checked_in_at), detail.dump());
      }
      case CheckInOutcome::kVoid:
        checkins_[static_cast<size_t>(CheckInOutcome::kVoid)]->Inc();
        co_return ErrorResponse(410, "TICKET_VOID",
                                "this ticket is void: its booking was refunded or cancelled",
                                about.dump());
      case CheckInOutcome::kUnknown:
        break;
    }
    co_return Refused(CheckInOutcome::kUnknown);
  }

  // GET /showtimes/{id}/checkins (door): seats sold and admitted, for the door page.
  io::asio::awaitable<Response> DoorCountOf(Request& req) {
    auto auth = Authorize(req, &Principal::door, "door");
    if (auto* denied = std::get_if<Response>(&auth)) co_return std::move(*denied);
    auto id = ParseId(req.params["showtimeId"]);
    if (!id) co_return ErrorResponse(404, "NOT_FOUND", "showtime not found");
    auto count = co_await d_.store->CountAtDoorAsync(*id);
    if (!count.ok()) co_return StatusResponse(count.status());
    co_return Json(
        200,
        nlohmann::json{{"showtimeId", *id}, {"sold", count->sold}, {"admitted", count->admitted}}
            .dump())
        .Header("Cache-Control", "no-store");
  }

 private:
  Response Refused(CheckInOutcome outcome) {
    checkins_[static_cast<size_t>(outcome)]->Inc();
    BOX_ASSERT(outcome == CheckInOutcome::kUnknown);
    return ErrorResponse(404, "TICKET_UNKNOWN", "not a ticket of this cinema");
  }

  // When a showtime's sales close and whether it was cancelled, read from the store at most
  // once per kCloseTimeMaxAge per showtime: a premiere's line is joined, and its seats held,
  // by everyone at once. (The store decides every hold and checkout itself; this only keeps
  // a line from forming and a cancelled showtime's holds away from the gate.)
  static constexpr Millis kCloseTimeMaxAge{5'000};
  static constexpr size_t kMaxCloseTimes = 100'000;  // then the table starts afresh
  struct SaleTerms {
    Instant closes;
    bool cancelled = false;
  };
  io::asio::awaitable<Result<SaleTerms>> SaleTermsOf(int64_t showtime_id) {
    const auto now = std::chrono::steady_clock::now();
    {
      MutexLock lock(close_times_mu_);
      if (auto it = close_times_.find(showtime_id);
          it != close_times_.end() && now - it->second.second < kCloseTimeMaxAge) {
        co_return it->second.first;
      }
    }
    auto showtime = co_await d_.store->GetShowtimeAsync(showtime_id);
    if (!showtime.ok()) co_return showtime.status();
    const SaleTerms terms{showtime->sales_close_at(), showtime->cancelled};
    MutexLock lock(close_times_mu_);
    if (close_times_.size() >= kMaxCloseTimes) close_times_.clear();
    close_times_[showtime_id] = {terms, now};
    co_return terms;
  }

  ApiDeps d_;
  TicketSigner tickets_;
  std::array<Counter*, 4> checkins_{};  // by CheckInOutcome
  Counter* wrong_showtime_ = nullptr;
  Mutex close_times_mu_;  // a leaf
  std::unordered_map<int64_t, std::pair<SaleTerms, std::chrono::steady_clock::time_point>>
      close_times_ BOX_GUARDED_BY(close_times_mu_);
};

}  // namespace

Response StatusResponse(const Status& s) {
  switch (s.code()) {
    case Code::kOk:
      return Json(200, "{}");
    case Code::kInvalid:
      return ErrorResponse(400, "VALIDATION_FAILED", s.message());
    case Code::kNotFound:
      return ErrorResponse(404, "NOT_FOUND", s.message());
    case Code::kConflict:
      return ErrorResponse(409, "SEATS_UNAVAILABLE", s.message(), SeatsDetail(s));
    case Code::kSingleSeatGap:
      return ErrorResponse(409, "SINGLE_SEAT_GAP", s.message(), SeatsDetail(s));
    case Code::kUnknownSeats:
      return ErrorResponse(400, "UNKNOWN_SEATS", s.message(), SeatsDetail(s));
    case Code::kCheckoutExists:
      return ErrorResponse(409, "CHECKOUT_EXISTS", "a checkout of this hold is already pending",
                           nlohmann::json{{"bookingId", s.id()}}.dump());
    case Code::kKeyReused:
      return ErrorResponse(422, "IDEMPOTENCY_KEY_REUSED", s.message());
    case Code::kInProgress:
      return ErrorResponse(409, "IDEMPOTENCY_IN_PROGRESS", s.message()).Header("Retry-After", "1");
    case Code::kRateLimited:
      return ErrorResponse(429, "RATE_LIMITED", s.message())
          .Header("Retry-After",
                  std::to_string(std::max<int64_t>(1, (s.retry_after_ms() + 999) / 1000)));
    case Code::kHoldLimit:
      return ErrorResponse(
          409, "HOLD_LIMIT", s.message(),
          nlohmann::json{{"held", s.id()}, {"limit", kMaxSeatsPerCustomer}}.dump());
    case Code::kNotAdmitted:
      return ErrorResponse(403, "NOT_ADMITTED", s.message());
    case Code::kSalesClosed:
      return ErrorResponse(409, "SALES_CLOSED", s.message());
    case Code::kShowtimeCancelled:
      return ErrorResponse(410, "SHOWTIME_CANCELLED", s.message());
    case Code::kNotRefundable:
      return ErrorResponse(409, "NOT_REFUNDABLE", s.message());
    case Code::kSalesStarted:
      return ErrorResponse(409, "SALES_STARTED", s.message());
    case Code::kNotActive:
      return ErrorResponse(409, "HOLD_NOT_ACTIVE", "the hold is no longer active: " + s.message());
    case Code::kUnavailable:
      LogWarn("dependency unavailable", {{"error", s.message()}});
      return ErrorResponse(503, "UNAVAILABLE", "temporarily unavailable, retry shortly")
          .Header("Retry-After", "1");
    case Code::kInternal:
      LogError("internal error", {{"error", s.message()}});
      return ErrorResponse(500, "INTERNAL", "internal error");
  }
  return ErrorResponse(500, "INTERNAL", "internal error");
}

void RegisterRoutes(http::Router* router, const ApiDeps& deps) {
  auto api = std::make_shared<Api>(deps);
  auto bind = [api](Response (Api::*method)(Request&)) {
    return [api, method](Request& r) { return ((*api).*method)(r); };
  };
  auto bind_async = [api](io::asio::awaitable<Response> (Api::*method)(Request&)) {
    return [api, method](Request& r) { return ((*api).*method)(r); };
  };
  router->Add("GET", "/healthz", bind(&Api::Healthz), /*blocking=*/false);
  router->AddAsync("GET", "/readyz", bind_async(&Api::Readyz));
  router->Add("GET", "/metrics", bind(&Api::MetricsText), /*blocking=*/false);
  router->Add("GET", "/openapi.yaml", bind(&Api::OpenApi), /*blocking=*/false);
  router->AddAsync("GET", "/showtimes", bind_async(&Api::ListShowtimes));
  router->AddAsync("GET", "/showtimes/{showtimeId}", bind_async(&Api::GetShowtime));
  router->AddAsyncWithFastPath(
      "GET", "/showtimes/{showtimeId}/seats", [api](Request& r) { return api->GetSeatsCached(r); },
      bind_async(&Api::GetSeats));
  router->AddAsync("GET", "/showtimes/{showtimeId}/seats/stream", bind_async(&Api::StreamSeats));
  router->AddAsync("POST", "/showtimes/{showtimeId}/holds",
                   [api](Request& r) { return api->CreateHold(r); });
  router->AddAsync("GET", "/holds/{holdId}", bind_async(&Api::GetHold));
  router->AddAsync("DELETE", "/holds/{holdId}", bind_async(&Api::DeleteHold));
  router->AddAsync("POST", "/holds/{holdId}/extend", bind_async(&Api::ExtendHold));
  router->AddAsync("POST", "/admin/showtimes", bind_async(&Api::CreateShowtime));
  router->AddAsync("PUT", "/admin/showtimes/{showtimeId}/waiting-room",
                   bind_async(&Api::SetWaitingRoom));
  router->AddAsync("PATCH", "/admin/showtimes/{showtimeId}", bind_async(&Api::EditShowtime));
  router->AddAsync("POST", "/admin/showtimes/{showtimeId}/cancel",
                   bind_async(&Api::CancelShowtime));
  router->AddAsync("GET", "/admin/showtimes/{showtimeId}/changes", bind_async(&Api::AdminChanges));
  router->AddAsync("GET", "/admin/showtimes/{showtimeId}/sales", bind_async(&Api::ShowtimeSalesOf));
  router->AddAsync("GET", "/admin/showtimes/{showtimeId}/bookings",
                   bind_async(&Api::ShowtimeBookingsOf));
  router->AddAsync("POST", "/showtimes/{showtimeId}/queue", bind_async(&Api::JoinQueue));
  router->AddAsync("GET", "/showtimes/{showtimeId}/queue/{queueToken}",
                   bind_async(&Api::QueueStatus));
  // Checkout awaits the payment gateway without a thread (API.md: a slow gateway never slows
  // holds, seat maps or other customers' requests).
  router->AddAsync("POST", "/holds/{holdId}/checkout",
                   [api](Request& r) { return api->Checkout(r); });
  router->AddAsync("GET", "/bookings/{bookingId}",
                   [api](Request& r) { return api->GetBooking(r); });
  router->AddAsync("POST", "/bookings/{bookingId}/cancel", bind_async(&Api::CancelBooking));
  router->AddAsync("GET", "/me/bookings", bind_async(&Api::MyBookings));
  router->AddAsync("GET", "/bookings/{bookingId}/tickets", bind_async(&Api::Tickets));
  router->Add("GET", "/tickets/{file}", bind(&Api::TicketImage), /*blocking=*/false);
  router->AddAsync("POST", "/checkin", bind_async(&Api::CheckIn));
  router->AddAsync("GET", "/showtimes/{showtimeId}/checkins", bind_async(&Api::DoorCountOf));
  // A confirmation is one statement awaited on the loop (Store::TryConfirmPaymentAsync).
  router->AddAsync("POST", "/payments/callback",
                   [api](Request& r) { return api->PaymentCallback(r); });
}

}  // namespace boxoffice::api
