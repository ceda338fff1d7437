// PgStore's AdminStore role: a showtime's cancel (one transaction under the lock order of
// docs/payments.md) and its admin trail.
#include "store/pg_store_impl.h"

namespace boxoffice {

Result<ShowtimeCancel> PgStore::CancelShowtime(int64_t showtime_id, const std::string& reason,
                                               int64_t actor) {
  return impl_->InTx<ShowtimeCancel>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return CancelShowtimeIn(tx, showtime_id, reason, actor);
  });
}

Result<BookingCancel> PgStore::CancelBooking(int64_t booking_id, int64_t customer_id) {
  return impl_->InTx<BookingCancel>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return CancelBookingIn(tx, booking_id, customer_id);
  });
}

Result<Showtime> PgStore::EditShowtime(int64_t showtime_id, const ShowtimeEdit& edit,
                                       int64_t actor) {
  return impl_->InTx<Showtime>(&retried_, [&](PgConnection& c) {
    PgMoneyTx tx(c, impl_->Now());
    return EditShowtimeIn(tx, showtime_id, edit, actor);
  });
}

Result<ShowtimeSales> PgStore::GetShowtimeSales(int64_t showtime_id) {
  return impl_->Run<ShowtimeSales>(&retried_, [&](PgConnection& c) -> Result<ShowtimeSales> {
    auto res = c.Exec(kShowtimeSales, {impl_->Now(), P(showtime_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (PQntuples(r) != 1 || PQgetisnull(r, 0, 10)) return ShowtimeNotFound(showtime_id);
    ShowtimeSales sales;
    sales.seats_available = Int(r, 0, 0);
    sales.seats_held = Int(r, 0, 1);
    sales.seats_booked = Int(r, 0, 2);
    sales.bookings = {{BookingStatus::kPending, Int(r, 0, 3)},
                      {BookingStatus::kConfirmed, Int(r, 0, 4)},
                      {BookingStatus::kFailed, Int(r, 0, 5)},
                      {BookingStatus::kRefunded, Int(r, 0, 6)}};
    sales.revenue = Price{Int(r, 0, 7), Text(r, 0, 8)};
    sales.checked_in = Int(r, 0, 9);
    sales.cancelled = Bool(r, 0, 10);
    sales.refunds = RefundProgress{Int(r, 0, 11), Int(r, 0, 12), Int(r, 0, 13)};
    return sales;
  });
}

Result<std::vector<Booking>> PgStore::ListShowtimeBookings(const ShowtimeBookingsQuery& query) {
  return impl_->Run<std::vector<Booking>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Booking>> {
        auto res =
            c.Exec(kShowtimeBookings,
                   {P(query.showtime_id),
                    query.status ? Param(std::string(BookingStatusName(*query.status))) : Param(),
                    P(query.after_id), P(int64_t{query.limit})});
        if (!res.ok()) return res.status();
        std::vector<Booking> out;
        for (int i = 0; i < PQntuples(res.value().get()); ++i) {
          out.push_back(ReadBooking(res.value().get(), i));
        }
        return out;
      });
}

Result<std::vector<AdminChange>> PgStore::ListAdminChanges(int64_t showtime_id, int limit) {
  return impl_->Run<std::vector<AdminChange>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<AdminChange>> {
        auto res = c.Exec(kListAdminChanges, {P(showtime_id), P(int64_t{limit})});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<AdminChange> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(AdminChange{Int(r, i, 0), Int(r, i, 1), Int(r, i, 2), Text(r, i, 3),
                                    Text(r, i, 4), Text(r, i, 5), FromEpochMs(Int(r, i, 6))});
        }
        return out;
      });
}

}  // namespace boxoffice
