#include "store/pg_rows.h"

#include "store/pg_sql.h"

namespace boxoffice {

std::vector<Showtime> ReadShowtimes(const PGresult* r) {
  std::vector<Showtime> out(static_cast<size_t>(PQntuples(r)));
  for (int row = 0; row < PQntuples(r); ++row) {
    Showtime& s = out[static_cast<size_t>(row)];
    s.id = Int(r, row, 0);
    s.title = Text(r, row, 1);
    s.cinema = Text(r, row, 2);
    s.hall = Text(r, row, 3);
    s.starts_at = FromEpochMs(Int(r, row, 4));
    s.seat_count = static_cast<int>(Int(r, row, 5));
    s.forbid_single_seat_gaps = Text(r, row, 6) == "forbid";
    s.time_zone = Text(r, row, 7);
    s.sales_close_minutes = static_cast<int>(Int(r, row, 8));
    s.cancelled = Text(r, row, 9) == "CANCELLED";
    if (!PQgetisnull(r, row, 10)) s.refund_until_minutes = static_cast<int>(Int(r, row, 10));
    s.cancel_reason = Text(r, row, 11);
  }
  return out;
}

Hold ReadHold(const PGresult* r, int first) {
  Hold h;
  h.hold_id = Text(r, 0, first);
  h.showtime_id = Int(r, 0, first + 1);
  h.customer_id = Int(r, 0, first + 2);
  h.seats = ParseArray(Text(r, 0, first + 3));
  h.created_at = FromEpochMs(Int(r, 0, first + 5));
  h.expires_at = FromEpochMs(Int(r, 0, first + 6));
  h.state = DeriveHoldState(PQgetvalue(r, 0, first + 4), Bool(r, 0, first + 7));
  return h;
}

Param PriceIds(const std::vector<Showtime>& list) {
  std::vector<int64_t> ids;
  for (const auto& s : list) ids.push_back(s.id);
  return IntArrayLiteral(ids);
}

void ApplyPrices(const PGresult* r, std::vector<Showtime>* list) {
  for (int i = 0; i < PQntuples(r); ++i) {
    const int64_t id = Int(r, i, 0);
    for (auto& s : *list) {
      if (s.id == id) s.prices[Text(r, i, 1)] = Price{Int(r, i, 2), Text(r, i, 3)};
    }
  }
}

Status LoadPrices(PgConnection& c, std::vector<Showtime>* list) {
  if (list->empty()) return Status::Ok();
  auto res = c.Exec(kSelectPrices, {PriceIds(*list)});
  if (!res.ok()) return res.status();
  ApplyPrices(res.value().get(), list);
  return Status::Ok();
}

std::vector<Param> ListParams(const ShowtimeQuery& q, Param now) {
  return {OptMs(q.from),
          OptMs(q.to),
          q.cinema ? P(*q.cinema) : Param(),
          q.after ? P(ToEpochMs(q.after->first)) : Param(),
          q.after ? P(q.after->second) : Param(),
          P(int64_t{q.limit}),
          std::move(now),
          P(std::string(q.seats_left ? "true" : "false"))};
}

std::vector<Showtime> ReadListedShowtimes(const PGresult* r) {
  std::vector<Showtime> out = ReadShowtimes(r);
  BOX_ASSERT(PQnfields(r) == 13);  // kListShowtimes: the showtime's columns and seats left
  for (int row = 0; row < PQntuples(r); ++row) {
    if (PQgetisnull(r, row, 12)) continue;  // not asked for
    out[static_cast<size_t>(row)].seats_left = static_cast<int>(Int(r, row, 12));
  }
  return out;
}

Booking ReadBooking(const PGresult* r, int row, int first) {
  auto col = [first](int c) { return first + c; };
  Booking b;
  b.id = Int(r, row, col(0));
  b.hold_id = Text(r, row, col(1));
  b.showtime_id = Int(r, row, col(2));
  b.customer_id = Int(r, row, col(3));
  b.seats = ParseArray(Text(r, row, col(4)));
  b.status = ParseBookingStatus(Text(r, row, col(5))).value_or(BookingStatus::kFailed);
  b.amount = Price{Int(r, row, col(6)), Text(r, row, col(7))};
  b.session_id = Text(r, row, col(8));
  b.payment_url = Text(r, row, col(9));
  if (!PQgetisnull(r, row, col(10))) b.payment_expires_at = FromEpochMs(Int(r, row, col(10)));
  b.payment_id = Text(r, row, col(11));
  b.created_at = FromEpochMs(Int(r, row, col(12)));
  return b;
}

std::vector<OutboxEvent> ReadOutboxEvents(const PGresult* r) {
  std::vector<OutboxEvent> out;
  for (int i = 0; i < PQntuples(r); ++i) {
    out.push_back(OutboxEvent{Int(r, i, 0), Text(r, i, 1), Text(r, i, 2), Text(r, i, 3),
                              Text(r, i, 4), FromEpochMs(Int(r, i, 5))});
  }
  return out;
}

}  // namespace boxoffice
