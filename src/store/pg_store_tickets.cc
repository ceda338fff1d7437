// PgStore's TicketStore role: a customer's bookings, check-ins (one statement, migration
// 0029) and the door's count.
#include "store/pg_store_impl.h"

namespace boxoffice {

namespace {

Result<CheckInResult> CheckInOf(const PGresult* r) {
  if (PQntuples(r) != 1) return Status(Code::kInternal, "check-in returned no outcome");
  const std::string outcome = Text(r, 0, 0);
  CheckInResult result;
  if (outcome == "unknown") return result;
  if (outcome == "void") {
    result.outcome = CheckInOutcome::kVoid;
    return result;
  }
  if (outcome != "admitted" && outcome != "already") {
    return Status(Code::kInternal, "check-in returned an unknown outcome");
  }
  result.outcome =
      outcome == "admitted" ? CheckInOutcome::kAdmitted : CheckInOutcome::kAlreadyCheckedIn;
  result.checked_in_at = FromEpochMs(Int(r, 0, 1));
  return result;
}

std::vector<Param> CheckInParams(Param now, const CheckInRequest& request) {
  return {std::move(now), P(request.showtime_id), P(request.booking_id), request.seat,
          request.nonce.empty() ? Param() : Param(request.nonce)};
}

}  // namespace

Result<std::vector<CustomerBooking>> PgStore::ListCustomerBookings(
    const CustomerBookingsQuery& query) {
  return impl_->Run<std::vector<CustomerBooking>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<CustomerBooking>> {
        Param before_ms, before_id;
        if (query.before) {
          before_ms = P(ToEpochMs(query.before->first));
          before_id = P(query.before->second);
        }
        auto res = c.Exec(kCustomerBookings,
                          {P(query.customer_id), before_ms, before_id, P(int64_t{query.limit})});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<CustomerBooking> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(
              CustomerBooking{ReadBooking(r, i, 0), Text(r, i, 13), FromEpochMs(Int(r, i, 14))});
        }
        return out;
      });
}

Result<CheckInResult> PgStore::CheckIn(const CheckInRequest& request) {
  return impl_->Run<CheckInResult>(&retried_, [&](PgConnection& c) -> Result<CheckInResult> {
    auto res = c.Exec(kCheckIn, CheckInParams(impl_->Now(), request));
    if (!res.ok()) return res.status();
    return CheckInOf(res.value().get());
  });
}

// On an I/O loop: the one statement through the loop's pipeline (a door scans often).
io::asio::awaitable<Result<CheckInResult>> PgStore::CheckInAsync(CheckInRequest request) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return CheckIn(request);  // off the loops
  // (Named first: g++ 12 destroys a temporary in a co_await expression twice.)
  std::vector<Param> params = CheckInParams(impl_->Now(), request);
  auto res = co_await loop->pipelines.Exec(kCheckIn, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return CheckInOf(res->get());
}

Result<DoorCount> PgStore::CountAtDoor(int64_t showtime_id) {
  return impl_->Run<DoorCount>(&retried_, [&](PgConnection& c) -> Result<DoorCount> {
    auto res = c.Exec(kCountAtDoor, {P(showtime_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (PQntuples(r) == 0) return ShowtimeNotFound(showtime_id);
    return DoorCount{Int(r, 0, 0), Int(r, 0, 1)};
  });
}

Result<std::optional<MailBooking>> PgStore::BookingForMail(int64_t booking_id) {
  using Found = std::optional<MailBooking>;
  return impl_->Run<Found>(&retried_, [&](PgConnection& c) -> Result<Found> {
    auto b = c.Exec(kSelectBooking, {P(booking_id)});
    if (!b.ok()) return b.status();
    if (PQntuples(b.value().get()) == 0) return Found();
    auto res = c.Exec(kBookingForMail, {P(booking_id)});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    if (PQntuples(r) == 0) return Found();
    return Found(MailBooking{ReadBooking(b.value().get()), Text(r, 0, 0), Text(r, 0, 1),
                             Text(r, 0, 2), Text(r, 0, 3), FromEpochMs(Int(r, 0, 4)),
                             Text(r, 0, 5)});
  });
}

Result<std::vector<OutboxEvent>> PgStore::PendingMail(int limit) {
  return impl_->Run<std::vector<OutboxEvent>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<OutboxEvent>> {
        auto res = c.Exec(kPendingMail, {P(int64_t{limit})});
        if (!res.ok()) return res.status();
        return ReadOutboxEvents(res.value().get());
      });
}

Result<int64_t> PgStore::CountPendingMail() {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCountPendingMail, {});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

Status PgStore::MarkMailDone(int64_t id, const std::string& lease_name, const std::string& owner) {
  auto r = impl_->Run<bool>(&retried_, [&](PgConnection& c) -> Result<bool> {
    auto res = c.Exec(kMarkMailDone, {impl_->Now(), lease_name, owner, P(id)});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0) == 1;
  });
  if (!r.ok()) return r.status();
  if (!r.value()) return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
  return Status::Ok();
}

Result<int64_t> PgStore::ExpirePendingMail(Millis older_than, int limit,
                                           const std::string& lease_name,
                                           const std::string& owner) {
  using Counts = std::pair<int64_t, int64_t>;  // (lease held, rows marked)
  auto r = impl_->Run<Counts>(&retried_, [&](PgConnection& c) -> Result<Counts> {
    auto res = c.Exec(kExpirePendingMail,
                      {impl_->Now(), lease_name, owner, P(older_than.count()), P(int64_t{limit})});
    if (!res.ok()) return res.status();
    return Counts{Int(res.value().get(), 0, 0), Int(res.value().get(), 0, 1)};
  });
  if (!r.ok()) return r.status();
  if (r->first != 1) return Status(Code::kNotActive, "the lease " + lease_name + " was lost");
  return r->second;
}

}  // namespace boxoffice
