#include "store/sqlite_rows.h"

#include <nlohmann/json.hpp>

#include "store/sqlite_sql.h"

namespace boxoffice::sqlite {

std::string SeatsJson(const std::vector<std::string>& seats) {
  return nlohmann::json(seats).dump();
}

std::string JoinComma(const std::vector<std::string>& seats) {
  std::string out;
  for (const auto& s : seats) {
    if (!out.empty()) out += ',';
    out += s;
  }
  return out;
}

std::vector<std::string> SplitComma(const std::string& text) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    out.push_back(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

Showtime ReadShowtime(Query& q) {
  Showtime s;
  s.id = q.Int(0);
  s.title = q.Text(1);
  s.cinema = q.Text(2);
  s.hall = q.Text(3);
  s.starts_at = FromEpochMs(q.Int(4));
  s.seat_count = static_cast<int>(q.Int(5));
  s.forbid_single_seat_gaps = q.Text(6) == "forbid";
  s.time_zone = q.Text(7);
  s.sales_close_minutes = static_cast<int>(q.Int(8));
  s.cancelled = q.Text(9) == "CANCELLED";
  if (!q.IsNull(10)) s.refund_until_minutes = static_cast<int>(q.Int(10));
  s.cancel_reason = q.IsNull(11) ? "" : q.Text(11);
  return s;
}

Hold ReadHold(Query& q, Instant now) {
  Hold h;
  h.hold_id = q.Text(0);
  h.showtime_id = q.Int(1);
  h.customer_id = q.Int(2);
  h.seats = SplitComma(q.Text(3));
  h.created_at = FromEpochMs(q.Int(5));
  h.expires_at = FromEpochMs(q.Int(6));
  h.state = DeriveHoldState(q.Text(4), h.expires_at < now);
  return h;
}

// The hold if it exists and belongs to customer_id; kNotFound otherwise.
Result<Hold> LoadHold(SqliteConnection& conn, const std::string& hold_id, int64_t customer_id,
                      Instant now) {
  Query q(conn, kSelectHold, {hold_id, customer_id});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return HoldNotFound(hold_id);
  }
  return ReadHold(q, now);
}

Status LoadPrices(SqliteConnection& conn, Showtime* s) {
  Query q(conn, kSelectPrices, {s->id});
  while (q.Next()) s->prices[q.Text(0)] = Price{q.Int(1), q.Text(2)};
  return q.status();
}

Booking ReadBooking(Query& q) {
  Booking b;
  b.id = q.Int(0);
  b.hold_id = q.Text(1);
  b.showtime_id = q.Int(2);
  b.customer_id = q.Int(3);
  b.seats = SplitComma(q.Text(4));
  b.status = ParseBookingStatus(q.Text(5)).value_or(BookingStatus::kFailed);
  b.amount = Price{q.Int(6), q.Text(7)};
  b.session_id = q.Text(8);
  b.payment_url = q.Text(9);
  if (!q.IsNull(10)) b.payment_expires_at = FromEpochMs(q.Int(10));
  b.payment_id = q.Text(11);
  b.created_at = FromEpochMs(q.Int(12));
  return b;
}

Result<std::optional<Booking>> LoadBooking(SqliteConnection& c, int64_t booking_id) {
  Query q(c, kSelectBooking, {booking_id});
  if (!q.Next()) {
    if (!q.status().ok()) return q.status();
    return std::optional<Booking>();
  }
  return std::optional<Booking>(ReadBooking(q));
}

Value OptMs(const std::optional<Instant>& t) { return t ? Value(ToEpochMs(*t)) : Value(nullptr); }
std::optional<Instant> ReadOptMs(Query& q, int col) {
  if (q.IsNull(col)) return std::nullopt;
  return FromEpochMs(q.Int(col));
}

Result<std::vector<OutboxEvent>> ReadOutboxEvents(Query& q) {
  std::vector<OutboxEvent> out;
  while (q.Next()) {
    out.push_back(
        OutboxEvent{q.Int(0), q.Text(1), q.Text(2), q.Text(3), q.Text(4), FromEpochMs(q.Int(5))});
  }
  if (!q.status().ok()) return q.status();
  return out;
}

}  // namespace boxoffice::sqlite
