// PgStore's ShowtimeStore and AdmissionStore roles: showtimes, seat maps and waiting rooms.
#include "store/pg_store_impl.h"

namespace boxoffice {

namespace {

// kCreateShowtime's parameters: the showtime, its prices, its seats row by row.
std::vector<Param> CreateShowtimeParams(const NewShowtime& st) {
  int64_t seat_count = 0;
  for (const auto& r : st.rows) seat_count += r.seats;
  std::vector<std::string> categories, currencies;
  std::vector<int64_t> amounts;
  for (const auto& [category, price] : st.prices) {
    categories.push_back(category);
    amounts.push_back(price.amount);
    currencies.push_back(price.currency);
  }
  BOX_ASSERT(amounts.size() == categories.size() && currencies.size() == categories.size());
  std::vector<std::string> codes, rows, seat_categories, accessible, aisle_after;
  std::vector<int64_t> numbers, orders;
  for (const auto& row : st.rows) {
    for (int n = 1; n <= row.seats; ++n) {
      orders.push_back(static_cast<int64_t>(codes.size()));
      codes.push_back(row.row + std::to_string(n));
      rows.push_back(row.row);
      numbers.push_back(n);
      seat_categories.push_back(row.category);
      accessible.push_back(IsLayoutSeat(row.accessible, n) ? "t" : "f");
      aisle_after.push_back(IsLayoutSeat(row.aisles, n) ? "t" : "f");
    }
  }
  BOX_ASSERT(static_cast<int64_t>(codes.size()) == seat_count);
  BOX_ASSERT(rows.size() == codes.size() && numbers.size() == codes.size() &&
             orders.size() == codes.size() && seat_categories.size() == codes.size() &&
             accessible.size() == codes.size() && aisle_after.size() == codes.size());
  return {st.title,
          st.cinema,
          st.hall,
          P(ToEpochMs(st.starts_at)),
          P(seat_count),
          ArrayLiteral(categories),
          IntArrayLiteral(amounts),
          ArrayLiteral(currencies),
          ArrayLiteral(codes),
          ArrayLiteral(rows),
          IntArrayLiteral(numbers),
          IntArrayLiteral(orders),
          ArrayLiteral(seat_categories),
          ArrayLiteral(accessible),
          ArrayLiteral(aisle_after),
          std::string(st.forbid_single_seat_gaps ? "forbid" : "allow"),
          st.time_zone,
          P(int64_t{st.sales_close_minutes}),
          st.refund_until_minutes ? P(int64_t{*st.refund_until_minutes}) : Param()};
}

// kSetWaitingRoom's parameters, and what its answer means.
std::vector<Param> WaitingRoomParams(Param now, int64_t showtime_id,
                                     const WaitingRoomConfig& config) {
  return {std::move(now), P(showtime_id), config.enabled ? "true" : "false",
          P(int64_t{config.active_limit}), P(config.admission_ttl.count())};
}
Status WaitingRoomSet(const PGresult* r, int64_t showtime_id) {
  if (std::atoi(PQcmdTuples(const_cast<PGresult*>(r))) == 0) return ShowtimeNotFound(showtime_id);
  return Status::Ok();
}

}  // namespace

Result<int64_t> PgStore::CreateShowtime(const NewShowtime& st) {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCreateShowtime, CreateShowtimeParams(st));
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

io::asio::awaitable<Result<int64_t>> PgStore::CreateShowtimeAsync(NewShowtime showtime) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return CreateShowtime(showtime);  // off the loops
  std::vector<Param> params = CreateShowtimeParams(showtime);
  auto res = co_await loop->pipelines.Exec(kCreateShowtime, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return Int(res->get(), 0, 0);
}

Result<Showtime> PgStore::GetShowtime(int64_t showtime_id) {
  return impl_->Run<Showtime>(&retried_, [&](PgConnection& c) -> Result<Showtime> {
    auto res = c.Exec(kSelectShowtime, {P(showtime_id)});
    if (!res.ok()) return res.status();
    std::vector<Showtime> one = ReadShowtimes(res.value().get());
    if (one.empty()) return ShowtimeNotFound(showtime_id);
    if (Status s = LoadPrices(c, &one); !s.ok()) return s;
    return one[0];
  });
}

Result<std::vector<Showtime>> PgStore::ListShowtimes(const ShowtimeQuery& q) {
  return impl_->Run<std::vector<Showtime>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<Showtime>> {
        auto res = c.Exec(kListShowtimes, ListParams(q, impl_->Now()));
        if (!res.ok()) return res.status();
        std::vector<Showtime> out = ReadListedShowtimes(res.value().get());
        if (Status s = LoadPrices(c, &out); !s.ok()) return s;
        return out;
      });
}

io::asio::awaitable<Result<Showtime>> PgStore::GetShowtimeAsync(int64_t showtime_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetShowtime(showtime_id);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  // (Parameters named first: g++ 12 cannot initialise them inside a co_await expression.)
  std::vector<Param> id{P(showtime_id)};
  auto shown = co_await loop->pipelines.Exec(kSelectShowtime, std::move(id));
  if (!shown.ok()) co_return shown.status();
  std::vector<Showtime> one = ReadShowtimes(shown->get());
  if (one.empty()) co_return ShowtimeNotFound(showtime_id);
  // (Written with the showtime, in its creating transaction, and never changed: a second
  // statement cannot see other prices than the first one's snapshot would have.)
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> ids{PriceIds(one)};
  auto priced = co_await loop->pipelines.Exec(kSelectPrices, std::move(ids));
  if (!priced.ok()) co_return priced.status();
  ApplyPrices(priced->get(), &one);
  co_return std::move(one[0]);
}

io::asio::awaitable<Result<std::vector<Showtime>>> PgStore::ListShowtimesAsync(
    ShowtimeQuery query) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return ListShowtimes(query);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> params = ListParams(query, impl_->Now());
  auto listed = co_await loop->pipelines.Exec(kListShowtimes, std::move(params));
  if (!listed.ok()) co_return listed.status();
  std::vector<Showtime> out = ReadListedShowtimes(listed->get());
  if (out.empty()) co_return out;
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> ids{PriceIds(out)};
  auto priced = co_await loop->pipelines.Exec(kSelectPrices, std::move(ids));
  if (!priced.ok()) co_return priced.status();
  ApplyPrices(priced->get(), &out);
  co_return out;
}

Result<int64_t> PgStore::CountShowtimes() {
  return impl_->Run<int64_t>(&retried_, [&](PgConnection& c) -> Result<int64_t> {
    auto res = c.Exec(kCountShowtimes, {});
    if (!res.ok()) return res.status();
    return Int(res.value().get(), 0, 0);
  });
}

Status PgStore::SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) {
  return impl_
      ->Run<bool>(&retried_,
                  [&](PgConnection& c) -> Result<bool> {
                    auto res = c.Exec(kSetWaitingRoom,
                                      WaitingRoomParams(impl_->Now(), showtime_id, config));
                    if (!res.ok()) return res.status();
                    if (Status s = WaitingRoomSet(res.value().get(), showtime_id); !s.ok()) {
                      return s;
                    }
                    return true;
                  })
      .status();
}

io::asio::awaitable<Status> PgStore::SetWaitingRoomAsync(int64_t showtime_id,
                                                         WaitingRoomConfig config) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return SetWaitingRoom(showtime_id, config);  // off the loops
  std::vector<Param> params = WaitingRoomParams(impl_->Now(), showtime_id, config);
  auto res = co_await loop->pipelines.Exec(kSetWaitingRoom, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return WaitingRoomSet(res->get(), showtime_id);
}

Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> PgStore::EnabledWaitingRooms() {
  using Rooms = std::vector<std::pair<int64_t, WaitingRoomConfig>>;
  return impl_->Run<Rooms>(&retried_, [&](PgConnection& c) -> Result<Rooms> {
    auto res = c.Exec(kEnabledWaitingRooms, {});
    if (!res.ok()) return res.status();
    const PGresult* r = res.value().get();
    Rooms out;
    for (int i = 0; i < PQntuples(r); ++i) {
      out.emplace_back(Int(r, i, 0), WaitingRoomConfig{true, static_cast<int>(Int(r, i, 1)),
                                                       Millis(Int(r, i, 2))});
    }
    return out;
  });
}

namespace {

// kSelectSeatMap's rows: the map, or NOT_FOUND when the showtime has no seats.
Result<SeatMap> SeatMapOf(const PGresult* r, int64_t showtime_id) {
  if (PQntuples(r) == 0) return ShowtimeNotFound(showtime_id);
  SeatMap map;
  map.showtime_id = showtime_id;
  map.as_of = FromEpochMs(Int(r, 0, 5));
  map.cancelled = Bool(r, 0, 8);
  map.seats.reserve(static_cast<size_t>(PQntuples(r)));
  for (int i = 0; i < PQntuples(r); ++i) {
    map.seats.push_back(SeatView{Text(r, i, 0), Text(r, i, 1), static_cast<int>(Int(r, i, 2)),
                                 Text(r, i, 3), ParseSeatStatus(PQgetvalue(r, i, 4)),
                                 Text(r, i, 6) == "t", Text(r, i, 7) == "t"});
  }
  CloseSeatMap(map);
  return map;
}

}  // namespace

Result<SeatMap> PgStore::GetSeatMap(int64_t showtime_id) {
  return impl_->Run<SeatMap>(&retried_, [&](PgConnection& c) -> Result<SeatMap> {
    auto res = c.Exec(kSelectSeatMap, {impl_->Now(), P(showtime_id)});
    if (!res.ok()) return res.status();
    return SeatMapOf(res.value().get(), showtime_id);
  });
}

io::asio::awaitable<Result<SeatMap>> PgStore::GetSeatMapAsync(int64_t showtime_id) {
  Impl::LoopState* loop = impl_->Loop();
  if (!loop) co_return GetSeatMap(showtime_id);  // off the loops
  impl_->showtime_reads.statements.fetch_add(1, std::memory_order_relaxed);
  std::vector<Param> params{impl_->Now(), P(showtime_id)};
  auto res = co_await loop->pipelines.Exec(kSelectSeatMap, std::move(params));
  if (!res.ok()) co_return res.status();
  co_return SeatMapOf(res->get(), showtime_id);
}

Result<std::vector<SeatOwner>> PgStore::GetSeatOwners(int64_t showtime_id) {
  return impl_->Run<std::vector<SeatOwner>>(
      &retried_, [&](PgConnection& c) -> Result<std::vector<SeatOwner>> {
        auto res = c.Exec(kSelectSeatOwners, {impl_->Now(), P(showtime_id)});
        if (!res.ok()) return res.status();
        const PGresult* r = res.value().get();
        std::vector<SeatOwner> out;
        for (int i = 0; i < PQntuples(r); ++i) {
          out.push_back(SeatOwner{Text(r, i, 0), ParseSeatStatus(PQgetvalue(r, i, 2)),
                                  PQgetisnull(r, i, 3) ? "" : Text(r, i, 3),
                                  PQgetisnull(r, i, 4) ? 0 : Int(r, i, 4)});
        }
        return out;
      });
}

}  // namespace boxoffice
