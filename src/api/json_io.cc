#include "api/json_io.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "core/crypto.h"
#include "core/seats.h"
#include "core/strict_json.h"
#include "core/text.h"
#include "core/time_format.h"

namespace boxoffice::api {
namespace {

using nlohmann::json;

json PriceJson(const Price& p) { return {{"amount", p.amount}, {"currency", p.currency}}; }

json ShowtimeObject(const Showtime& s) {
  json prices = json::object();
  for (const auto& [category, price] : s.prices) prices[category] = PriceJson(price);
  return {{"showtimeId", s.id},
          {"title", s.title},
          {"cinema", s.cinema},
          {"hall", s.hall},
          {"startsAt", FormatRfc3339(s.starts_at)},
          {"prices", prices},
          {"seatCount", s.seat_count},
          {"singleSeatGaps", s.forbid_single_seat_gaps ? "forbid" : "allow"},
          {"timeZone", s.time_zone},
          {"salesCloseMinutesBefore", s.sales_close_minutes},
          {"status", s.cancelled ? "CANCELLED" : "SCHEDULED"},
          {"refundUntilMinutesBefore",
           s.refund_until_minutes ? json(*s.refund_until_minutes) : json()}};
}

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

ParseError Invalid(std::string message) { return ParseError{false, std::move(message)}; }

// Whether any string of the value (object keys included) holds U+0000. Iterative: the depth
// of a 64 KiB body is bounded only by its size.
bool HasNul(const json& root) {
  std::vector<const json*> todo{&root};
  while (!todo.empty()) {
    const json* j = todo.back();
    todo.pop_back();
    if (j->is_string()) {
      if (j->get_ref<const std::string&>().find('\0') != std::string::npos) return true;
    } else if (j->is_object()) {
      for (const auto& [key, value] : j->items()) {
        if (key.find('\0') != std::string::npos) return true;
        todo.push_back(&value);
      }
    } else if (j->is_array()) {
      for (const auto& value : *j) todo.push_back(&value);
    }
  }
  return false;
}

// API.md: a body is exactly one JSON value and nothing else (BAD_JSON: a NUL byte, a
// byte-order mark, bytes after it, a key named twice; see ParseStrictJson), and its strings
// are valid UTF-8 (the parser checks) without U+0000 (VALIDATION_FAILED).
std::optional<ParseError> ParseBody(const std::string& body, json* out) {
  std::string why;
  auto parsed = ParseStrictJson(body, &why);
  if (!parsed) return ParseError{true, "request body: " + why};
  *out = std::move(*parsed);
  if (HasNul(*out)) return Invalid("strings must not contain U+0000");
  return std::nullopt;
}

// Where the system's time zone database lies (Debian's tzdata).
constexpr const char* kZoneInfoDir = "/usr/share/zoneinfo/";
constexpr size_t kMaxTimeZoneName = 64;

}  // namespace

bool IsTimeZoneName(const std::string& name) {
  // The spelling of an IANA name ("America/Argentina/Buenos_Aires", "Etc/GMT+3", "UTC"):
  // parts of letters, digits, '_', '+' and '-', none "." or "..", so the file looked up
  // below can only be one of the database's.
  if (name.empty() || name.size() > kMaxTimeZoneName || name.front() == '/' || name.back() == '/' ||
      name.find("//") != std::string::npos) {
    return false;
  }
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '+' || c == '-' || c == '/';
    if (!ok) return false;
  }
  if (name[0] < 'A' || name[0] > 'Z') return false;  // every zone's first part is capitalised
  // Known to the time zone database: its file starts with the TZif magic.
  std::FILE* f = std::fopen((std::string(kZoneInfoDir) + name).c_str(), "rb");
  if (!f) return false;
  char magic[4] = {};
  const bool tzif = std::fread(magic, 1, 4, f) == 4 && std::string_view(magic, 4) == "TZif";
  std::fclose(f);
  return tzif;
}

namespace {

bool IsCategory(const std::string& c) {
  if (c.empty() || c.size() > kMaxCategoryLength) return false;
  for (char ch : c) {
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' || ch == '-'))
      return false;
  }
  return true;
}

bool IsCurrency(const std::string& c) {
  return c.size() == 3 &&
         std::all_of(c.begin(), c.end(), [](char ch) { return ch >= 'A' && ch <= 'Z'; });
}

std::optional<ParseError> RequireText(const json& body, const char* field, std::string* out) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_string() || it->get<std::string>().empty()) {
    return Invalid(std::string(field) + " must be a non-empty string");
  }
  *out = it->get<std::string>();
  if (out->size() > kMaxTextField) {
    return Invalid(std::string(field) + " is longer than " + std::to_string(kMaxTextField) +
                   " bytes");
  }
  return std::nullopt;
}

}  // namespace

std::string ShowtimeJson(const Showtime& s, bool waiting_room) {
  json o = ShowtimeObject(s);
  if (waiting_room) o["waitingRoom"] = true;
  return Dump(o);
}

std::string ShowtimeListJson(const std::vector<Showtime>& list, const std::string& next_cursor) {
  json items = json::array();
  for (const auto& s : list) {
    json o = ShowtimeObject(s);
    if (s.seats_left) o["seatsLeft"] = *s.seats_left;
    items.push_back(std::move(o));
  }
  return Dump(
      {{"showtimes", items}, {"nextCursor", next_cursor.empty() ? json() : json(next_cursor)}});
}

// Written directly rather than through a json tree: the map is the hottest body there is
// (rebuilt after each of this instance's holds), and this is several times faster. The
// output is the same bytes nlohmann would write (keys in its sorted order; tested).
std::string SeatMapJson(const SeatMap& map) {
  // Written directly, no JSON tree: a cached map is rendered again after each of this
  // instance's holds (SeatMapCache::Apply), hundreds of times a second in a storm.
  std::string out;
  // About 85 bytes a seat (its fields, status and category): a reserve that is rarely
  // outgrown, so the body is not left in a buffer twice its size (seat-map cache bytes).
  out.reserve(128 + map.seats.size() * 96);
  char number[16];
  auto append_number = [&out, &number](int n) {
    out.append(number, std::to_chars(number, number + sizeof number, n).ptr);
  };
  out.append("{\"asOf\":");
  AppendJsonString(&out, FormatRfc3339(map.as_of));
  // The rows in hall order, each with the seat numbers an aisle follows.
  out.append(",\"rows\":[");
  for (size_t i = 0; i < map.seats.size();) {
    const std::string& row = map.seats[i].row;
    out.append(out.back() == '[' ? "{\"aisles\":[" : ",{\"aisles\":[");
    bool first = true;
    for (; i < map.seats.size() && map.seats[i].row == row; ++i) {
      if (!map.seats[i].aisle_after) continue;
      if (!first) out.push_back(',');
      first = false;
      append_number(map.seats[i].number);
    }
    out.append("],\"row\":");
    AppendJsonString(&out, row);
    out.push_back('}');
  }
  out.append("],\"seats\":[");
  for (size_t i = 0; i < map.seats.size(); ++i) {
    const SeatView& s = map.seats[i];
    if (i) out.push_back(',');
    out.append(s.accessible ? "{\"accessible\":true,\"category\":" : "{\"category\":");
    AppendJsonString(&out, s.category);
    out.append(",\"code\":");
    AppendJsonString(&out, s.code);
    out.append(",\"number\":");
    append_number(s.number);
    out.append(",\"row\":");
    AppendJsonString(&out, s.row);
    out.append(",\"status\":\"").append(SeatStatusName(s.status)).append("\"}");
  }
  out.append("],\"showtimeId\":").append(std::to_string(map.showtime_id));
  out.append(map.cancelled ? ",\"status\":\"CANCELLED\"}" : ",\"status\":\"SCHEDULED\"}");
  return out;
}

std::string SeatMapEtag(const SeatMap& map) {
  // FNV-1a over the seats and their states: equal maps, equal tags, whatever asOf says.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
    h ^= 0xff;
    h *= 1099511628211ull;
  };
  mix("3");  // the body's format: 2 has the layout (rows, accessible), 3 the status
  mix(std::to_string(map.showtime_id));
  mix(map.cancelled ? "CANCELLED" : "SCHEDULED");
  for (const auto& s : map.seats) {
    mix(s.code);
    if (s.accessible || s.aisle_after) mix(s.accessible ? (s.aisle_after ? "ab" : "a") : "b");
    mix(s.category);
    mix(SeatStatusName(s.status));
  }
  char buf[24];
  std::snprintf(buf, sizeof buf, "\"%016llx\"", static_cast<unsigned long long>(h));
  return buf;
}

std::string HoldJson(const Hold& hold) {
  return Dump({{"holdId", hold.hold_id},
               {"showtimeId", hold.showtime_id},
               {"seats", hold.seats},
               {"status", HoldStateName(hold.state)},
               {"expiresAt", FormatRfc3339(hold.expires_at)}});
}

std::string HoldCreatedJson(const Hold& hold) {
  // Written directly, no JSON tree: every won hold answers with it.
  std::string out = "{\"expiresAt\":";
  AppendJsonString(&out, FormatRfc3339(hold.expires_at));
  out.append(",\"holdId\":");
  AppendJsonString(&out, hold.hold_id);
  out.append(",\"seats\":[");
  for (size_t i = 0; i < hold.seats.size(); ++i) {
    if (i) out.push_back(',');
    AppendJsonString(&out, hold.seats[i]);
  }
  out.append("],\"showtimeId\":").append(std::to_string(hold.showtime_id)).push_back('}');
  return out;
}

std::optional<ParseError> ParseHoldBody(const std::string& body, std::vector<std::string>* seats,
                                        std::optional<BestAvailable>* best) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  auto it = j.find("seats");
  if (auto b = j.find("best"); b != j.end()) {
    if (it != j.end()) return Invalid("give either seats or best, not both");
    if (!b->is_object()) return Invalid("best must be {count, category}");
    auto count = b->find("count");
    auto category = b->find("category");
    if (count == b->end() || !count->is_number_integer() || count->get<int64_t>() < 1 ||
        count->get<int64_t>() > static_cast<int64_t>(kMaxSeatsPerHold)) {
      return Invalid("best.count must be an integer from 1 to " + std::to_string(kMaxSeatsPerHold));
    }
    if (category == b->end() || !category->is_string() || category->get<std::string>().empty() ||
        category->get<std::string>().size() > kMaxTextField) {
      return Invalid("best.category must be a category of the showtime");
    }
    *best = BestAvailable{static_cast<size_t>(count->get<int64_t>()), category->get<std::string>()};
    return std::nullopt;
  }
  if (it == j.end()) return Invalid("seats (or best) is required");
  if (!it->is_array()) return Invalid("seats must be an array of seat codes");
  if (it->size() > kMaxSeatsPerHold) {
    return Invalid("at most " + std::to_string(kMaxSeatsPerHold) + " seats can be held at once");
  }
  for (const auto& s : *it) {
    if (!s.is_string()) return Invalid("seats must be an array of seat codes");
    seats->push_back(s.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ParseError> ParseWaitingRoom(const std::string& body, WaitingRoomConfig* out) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  auto enabled = j.find("enabled");
  if (enabled == j.end() || !enabled->is_boolean()) return Invalid("enabled must be true or false");
  out->enabled = enabled->get<bool>();
  if (auto it = j.find("activeLimit"); it != j.end()) {
    if (!it->is_number_integer()) return Invalid("activeLimit must be an integer");
    const int64_t v = it->get<int64_t>();
    out->active_limit = static_cast<int>(std::clamp<int64_t>(v, -1, 1'000'000'000));
  }
  if (auto it = j.find("admissionTtlSeconds"); it != j.end()) {
    if (!it->is_number_integer()) return Invalid("admissionTtlSeconds must be an integer");
    out->admission_ttl = Millis(std::clamp<int64_t>(it->get<int64_t>(), -1, 1'000'000'000) * 1000);
  }
  return std::nullopt;
}

std::string WaitingRoomJson(int64_t showtime_id, const WaitingRoomConfig& config) {
  return json{{"showtimeId", showtime_id},
              {"enabled", config.enabled},
              {"activeLimit", config.active_limit},
              {"admissionTtlSeconds", config.admission_ttl.count() / 1000}}
      .dump();
}

// A showtime's fields as both its creation and its edit take them.
std::optional<ParseError> ParseStartsAt(const json& value, Instant* out) {
  if (!value.is_string()) return Invalid("startsAt must be an RFC 3339 time");
  auto when = ParseRfc3339(value.get<std::string>());
  if (!when) return Invalid("startsAt must be an RFC 3339 time");
  *out = *when;
  return std::nullopt;
}

std::optional<ParseError> ParsePrices(const json& prices, std::map<std::string, Price>* out) {
  if (!prices.is_object() || prices.empty()) {
    return Invalid("prices must map each category to {amount, currency}");
  }
  out->clear();
  for (const auto& [category, price] : prices.items()) {
    if (!IsCategory(category))
      return Invalid("category \"" + category.substr(0, 40) + "\" is not a valid name");
    if (!price.is_object()) return Invalid("price of " + category + " must be {amount, currency}");
    auto amount = price.find("amount");
    auto currency = price.find("currency");
    if (amount == price.end() || !amount->is_number_integer() || amount->get<int64_t>() < 0 ||
        amount->get<int64_t>() > kMaxPriceAmount) {
      return Invalid("price of " + category + " needs an integer amount from 0 to " +
                     std::to_string(kMaxPriceAmount) + " (minor units)");
    }
    if (currency == price.end() || !currency->is_string() ||
        !IsCurrency(currency->get<std::string>())) {
      return Invalid("price of " + category + " needs a 3-letter currency code");
    }
    (*out)[category] = Price{amount->get<int64_t>(), currency->get<std::string>()};
    if (out->begin()->second.currency != currency->get<std::string>()) {
      return Invalid("all prices of a showtime must be in one currency");
    }
  }
  return std::nullopt;
}

std::optional<ParseError> ParseRefundUntil(const json& until, std::optional<int>* out) {
  if (until.is_null()) {
    out->reset();
    return std::nullopt;
  }
  if (!until.is_number_integer() || until.get<int64_t>() < 0 ||
      until.get<int64_t>() > kMaxRefundUntilMinutes) {
    return Invalid("refundUntilMinutesBefore must be null or a whole number of minutes from 0 to " +
                   std::to_string(kMaxRefundUntilMinutes));
  }
  *out = static_cast<int>(until.get<int64_t>());
  return std::nullopt;
}

std::optional<ParseError> ParseShowtimeEdit(const std::string& body, ShowtimeEdit* out) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key == "title") {
      std::string title;
      if (auto e = RequireText(j, "title", &title)) return e;
      out->title = std::move(title);
    } else if (key == "startsAt") {
      Instant when;
      if (auto e = ParseStartsAt(value, &when)) return e;
      out->starts_at = when;
    } else if (key == "prices") {
      std::map<std::string, Price> prices;
      if (auto e = ParsePrices(value, &prices)) return e;
      out->prices = std::move(prices);
    } else if (key == "refundUntilMinutesBefore") {
      std::optional<int> until;
      if (auto e = ParseRefundUntil(value, &until)) return e;
      out->refund_until_minutes = until;
    } else {
      return Invalid("unknown field " + key.substr(0, 40) +
                     ": an edit takes title, startsAt, prices and refundUntilMinutesBefore"
                     " (the layout never changes)");
    }
  }
  if (out->empty()) return Invalid("an edit names at least one field");
  return std::nullopt;
}

std::optional<ParseError> ParseNewShowtime(const std::string& body, NewShowtime* out) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  if (auto e = RequireText(j, "title", &out->title)) return e;
  if (auto e = RequireText(j, "cinema", &out->cinema)) return e;
  if (auto e = RequireText(j, "hall", &out->hall)) return e;
  auto starts = j.find("startsAt");
  if (starts == j.end()) return Invalid("startsAt must be an RFC 3339 time");
  if (auto e = ParseStartsAt(*starts, &out->starts_at)) return e;
  auto prices = j.find("prices");
  if (prices == j.end()) return Invalid("prices must map each category to {amount, currency}");
  if (auto e = ParsePrices(*prices, &out->prices)) return e;

  if (auto gaps = j.find("singleSeatGaps"); gaps != j.end()) {
    if (!gaps->is_string() || (*gaps != "allow" && *gaps != "forbid")) {
      return Invalid("singleSeatGaps must be \"allow\" or \"forbid\"");
    }
    out->forbid_single_seat_gaps = *gaps == "forbid";
  }
  if (auto zone = j.find("timeZone"); zone != j.end()) {
    if (!zone->is_string() || !IsTimeZoneName(zone->get_ref<const std::string&>())) {
      return Invalid("timeZone must be an IANA time zone name such as \"Europe/London\"");
    }
    out->time_zone = zone->get<std::string>();
  }
  if (auto close = j.find("salesCloseMinutesBefore"); close != j.end()) {
    if (!close->is_number_integer() || close->get<int64_t>() < 0 ||
        close->get<int64_t>() > kMaxSalesCloseMinutes) {
      return Invalid("salesCloseMinutesBefore must be a whole number of minutes from 0 to " +
                     std::to_string(kMaxSalesCloseMinutes));
    }
    out->sales_close_minutes = static_cast<int>(close->get<int64_t>());
  }
  if (auto until = j.find("refundUntilMinutesBefore"); until != j.end()) {
    if (auto e = ParseRefundUntil(*until, &out->refund_until_minutes)) return e;
  }

  auto rows = j.find("rows");
  if (rows == j.end() || !rows->is_array() || rows->empty())
    return Invalid("rows must list at least one row");
  if (rows->size() > kMaxRowsPerShowtime) return Invalid("too many rows");
  std::set<std::string> seen;
  int total = 0;
  for (const auto& r : *rows) {
    if (!r.is_object()) return Invalid("each row must be {row, seats, category}");
    auto label = r.find("row");
    auto seats = r.find("seats");
    auto category = r.find("category");
    if (label == r.end() || !label->is_string() || !IsValidRowLabel(label->get<std::string>())) {
      return Invalid("row must be 1-3 upper-case letters");
    }
    const std::string row = label->get<std::string>();
    if (!seen.insert(row).second) return Invalid("row " + row + " is listed twice");
    if (seats == r.end() || !seats->is_number_integer() || seats->get<int64_t>() < 1 ||
        seats->get<int64_t>() > kMaxSeatNumber) {
      return Invalid("row " + row + " must have 1 to 999 seats");
    }
    if (category == r.end() || !category->is_string())
      return Invalid("row " + row + " needs a category");
    const std::string cat = category->get<std::string>();
    if (!out->prices.count(cat)) return Invalid("category of row " + row + " has no price");
    total += static_cast<int>(seats->get<int64_t>());
    if (total > kMaxSeatsPerShowtime) {
      return Invalid("a showtime has at most " + std::to_string(kMaxSeatsPerShowtime) + " seats");
    }
    RowLayout layout{row, static_cast<int>(seats->get<int64_t>()), cat, {}, {}};
    // Optional: aisles after seats 1 … seats-1, wheelchair places 1 … seats; each once.
    auto numbers = [&](const char* field, int max,
                       std::vector<int>* target) -> std::optional<ParseError> {
      auto list = r.find(field);
      if (list == r.end()) return std::nullopt;
      const std::string what = std::string(field) + " of row " + row;
      if (!list->is_array() || list->size() > static_cast<size_t>(max))
        return Invalid(what + " must be a list of seat numbers");
      for (const auto& n : *list) {
        if (!n.is_number_integer() || n.get<int64_t>() < 1 || n.get<int64_t>() > max)
          return Invalid(what + " must be seat numbers from 1 to " + std::to_string(max));
        const int v = static_cast<int>(n.get<int64_t>());
        if (IsLayoutSeat(*target, v))
          return Invalid(what + " names seat " + std::to_string(v) + " twice");
        target->push_back(v);
      }
      return std::nullopt;
    };
    if (auto e = numbers("aisles", layout.seats - 1, &layout.aisles)) return e;
    if (auto e = numbers("accessible", layout.seats, &layout.accessible)) return e;
    out->rows.push_back(std::move(layout));
  }
  return std::nullopt;
}

std::optional<ParseError> ParsePaymentReport(const std::string& body, PaymentReport* out) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  auto text = [&](const char* field, std::string* target,
                  bool required) -> std::optional<ParseError> {
    auto it = j.find(field);
    if (it == j.end() && !required) return std::nullopt;
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty() ||
        it->get<std::string>().size() > kMaxTextField) {
      return Invalid(std::string(field) + " must be a non-empty string");
    }
    *target = it->get<std::string>();
    return std::nullopt;
  };
  if (auto e = text("paymentId", &out->payment_id, true)) return e;
  if (auto e = text("sessionId", &out->session_id, true)) return e;
  if (auto e = text("reference", &out->reference, true)) return e;
  std::string status;
  if (auto e = text("status", &status, true)) return e;
  if (status != "SUCCEEDED" && status != "FAILED")
    return Invalid("status must be SUCCEEDED or FAILED");
  out->succeeded = status == "SUCCEEDED";
  auto amount = j.find("amount");
  if (amount == j.end() || !amount->is_number_integer() || amount->get<int64_t>() < 0) {
    return Invalid("amount must be a non-negative integer");
  }
  out->amount = amount->get<int64_t>();
  if (auto e = text("currency", &out->currency, true)) return e;
  if (!IsCurrency(out->currency)) return Invalid("currency must be a 3-letter code");
  return std::nullopt;
}

namespace {

// A booking as GET /bookings/{id} has it; the lists add their fields to it.
json BookingObject(const Booking& b) {
  return {{"bookingId", b.id},
          {"holdId", b.hold_id},
          {"showtimeId", b.showtime_id},
          {"seats", b.seats},
          {"status", BookingStatusName(b.status)},
          {"amount", PriceJson(b.amount)},
          {"paymentId", b.payment_id.empty() ? json() : json(b.payment_id)}};
}

// A list's page: {"bookings": [...], "nextCursor": …|null}.
std::string BookingsPage(json list, const std::string& next_cursor) {
  return Dump({{"bookings", std::move(list)},
               {"nextCursor", next_cursor.empty() ? json() : json(next_cursor)}});
}

}  // namespace

std::string BookingJson(const Booking& b) { return Dump(BookingObject(b)); }

std::optional<ParseError> ParseCheckoutBody(const std::string& body, std::string* email) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be empty or a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "email") return Invalid("unknown field " + key + ": checkout takes only email");
    if (!value.is_string() || !IsValidEmail(value.get_ref<const std::string&>())) {
      return Invalid("email must be an e-mail address (at most 254 characters)");
    }
    *email = value.get<std::string>();
  }
  return std::nullopt;
}

std::optional<ParseError> ParseCancelBody(const std::string& body, std::string* reason) {
  if (body.find_first_not_of(" \t\r\n") == std::string::npos) return std::nullopt;
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be empty or a JSON object");
  for (const auto& [key, value] : j.items()) {
    if (key != "reason") return Invalid("unknown field " + key + ": a cancel takes only reason");
    if (!value.is_string() || value.get_ref<const std::string&>().size() > kMaxCancelReason) {
      return Invalid("reason must be a string of at most " + std::to_string(kMaxCancelReason) +
                     " bytes");
    }
    *reason = value.get<std::string>();
  }
  return std::nullopt;
}

std::string ShowtimeCancelJson(int64_t showtime_id, const ShowtimeCancel& cancel) {
  return Dump({{"showtimeId", showtime_id},
               {"status", "CANCELLED"},
               {"alreadyCancelled", cancel.already},
               {"bookingsRefunded", cancel.bookings_refunded},
               {"bookingsPending", cancel.bookings_pending}});
}

std::string ShowtimeSalesJson(int64_t showtime_id, const ShowtimeSales& s) {
  auto count = [&s](BookingStatus status) {
    auto it = s.bookings.find(status);
    return it == s.bookings.end() ? int64_t{0} : it->second;
  };
  return Dump(
      {{"showtimeId", showtime_id},
       {"status", s.cancelled ? "CANCELLED" : "SCHEDULED"},
       {"seats",
        {{"available", s.seats_available}, {"held", s.seats_held}, {"booked", s.seats_booked}}},
       {"bookings",
        {{"pending", count(BookingStatus::kPending)},
         {"confirmed", count(BookingStatus::kConfirmed)},
         {"failed", count(BookingStatus::kFailed)},
         {"refunded", count(BookingStatus::kRefunded)}}},
       {"revenue", PriceJson(s.revenue)},
       {"checkedIn", s.checked_in},
       {"refunds",
        {{"issued", s.refunds.issued},
         {"pending", s.refunds.pending},
         {"refused", s.refunds.refused}}}});
}

std::string AdminBookingsJson(const std::vector<Booking>& bookings,
                              const std::string& next_cursor) {
  json list = json::array();
  for (const Booking& b : bookings) {
    json item = BookingObject(b);
    item["customerId"] = b.customer_id;
    item["createdAt"] = FormatRfc3339(b.created_at);
    list.push_back(std::move(item));
  }
  return BookingsPage(std::move(list), next_cursor);
}

std::string AdminChangesJson(const std::vector<AdminChange>& changes) {
  json list = json::array();
  for (const AdminChange& c : changes) {
    // Written by this service as JSON objects; anything else reads as null.
    auto object = [](const std::string& text) {
      json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
      return j.is_object() ? j : json();
    };
    list.push_back({{"id", c.id},
                    {"actor", c.actor},
                    {"action", c.action},
                    {"before", object(c.before)},
                    {"after", object(c.after)},
                    {"at", FormatRfc3339(c.at)}});
  }
  return Dump({{"changes", std::move(list)}});
}

std::string CustomerBookingsJson(const std::vector<CustomerBooking>& bookings,
                                 const std::string& next_cursor) {
  json list = json::array();
  for (const CustomerBooking& b : bookings) {
    json item = BookingObject(b.booking);
    item["title"] = b.title;
    item["startsAt"] = FormatRfc3339(b.starts_at);
    list.push_back(std::move(item));
  }
  return BookingsPage(std::move(list), next_cursor);
}

std::optional<ParseError> ParseCheckInBody(const std::string& body, CheckInBody* out) {
  json j;
  if (auto e = ParseBody(body, &j)) return e;
  if (!j.is_object()) return Invalid("request body must be a JSON object");
  auto code = j.find("code");
  if (code == j.end() || !code->is_string() || code->get_ref<const std::string&>().empty() ||
      code->get_ref<const std::string&>().size() > kMaxScanLength) {
    return Invalid("code must be a non-empty string of at most " + std::to_string(kMaxScanLength) +
                   " characters");
  }
  out->code = code->get<std::string>();
  auto showtime = j.find("showtimeId");
  if (showtime == j.end() || !showtime->is_number_integer() || showtime->get<int64_t>() <= 0) {
    return Invalid("showtimeId must be a positive integer");
  }
  out->showtime_id = showtime->get<int64_t>();
  if (auto nonce = j.find("nonce"); nonce != j.end()) {
    bool ok = nonce->is_string() && !nonce->get_ref<const std::string&>().empty() &&
              nonce->get_ref<const std::string&>().size() <= kMaxCheckInNonceLength;
    if (ok) {
      for (char c : nonce->get_ref<const std::string&>()) ok = ok && c >= 0x20 && c < 0x7f;
    }
    if (!ok) return Invalid("nonce must be 1 to 64 printable ASCII characters");
    out->nonce = nonce->get<std::string>();
  }
  for (const auto& [key, value] : j.items()) {
    if (key != "code" && key != "showtimeId" && key != "nonce") {
      return Invalid("unknown field " + key);
    }
  }
  return std::nullopt;
}

std::string EncodeCursor(Instant starts_at, int64_t id) {
  return Base64UrlEncode(std::to_string(ToEpochMs(starts_at)) + ":" + std::to_string(id));
}

std::optional<std::pair<Instant, int64_t>> DecodeCursor(const std::string& cursor) {
  auto raw = Base64UrlDecode(cursor);
  if (!raw) return std::nullopt;
  const size_t colon = raw->find(':');
  if (colon == std::string::npos) return std::nullopt;
  int64_t ms = 0, id = 0;
  const char* b = raw->data();
  auto r1 = std::from_chars(b, b + colon, ms);
  auto r2 = std::from_chars(b + colon + 1, b + raw->size(), id);
  if (r1.ec != std::errc() || r1.ptr != b + colon || r2.ec != std::errc() ||
      r2.ptr != b + raw->size() || id <= 0) {
    return std::nullopt;
  }
  return std::make_pair(FromEpochMs(ms), id);
}

}  // namespace boxoffice::api
