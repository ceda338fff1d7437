// The default bodies of the store roles' virtual methods: the asynchronous forms run the
// blocking ones on the loop's blocking pool.
#include "store/store.h"

namespace boxoffice {

io::asio::awaitable<Result<Hold>> HoldStore::HoldSeatsAsync(HoldRequest request) {
  // (Named first: g++ 12 destroys a lambda temporary in a co_await expression twice.)
  auto work = [this, request = std::move(request)] { return HoldSeats(request); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<Hold>> HoldStore::HoldActionAsync(HoldAction action, std::string hold_id,
                                                             int64_t customer_id, Millis ttl,
                                                             Millis max_lifetime) {
  auto work = [this, action, hold_id = std::move(hold_id), customer_id, ttl,
               max_lifetime]() -> Result<Hold> {
    switch (action) {
      case HoldAction::kRead:
        return GetHold(hold_id, customer_id);
      case HoldAction::kRelease:
        return ReleaseHold(hold_id, customer_id);
      case HoldAction::kExtend:
        return ExtendHold(hold_id, customer_id, ttl, max_lifetime);
    }
    AssertFail("unknown hold action", __FILE__, __LINE__);
  };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<int64_t>> ShowtimeStore::CreateShowtimeAsync(NewShowtime showtime) {
  auto work = [this, showtime = std::move(showtime)] { return CreateShowtime(showtime); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Status> AdmissionStore::SetWaitingRoomAsync(int64_t showtime_id,
                                                                WaitingRoomConfig config) {
  auto work = [this, showtime_id, config] { return SetWaitingRoom(showtime_id, config); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<ShowtimeCancel>> AdminStore::CancelShowtimeAsync(int64_t showtime_id,
                                                                            std::string reason,
                                                                            int64_t actor) {
  auto work = [this, showtime_id, reason = std::move(reason), actor] {
    return CancelShowtime(showtime_id, reason, actor);
  };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<std::vector<AdminChange>>> AdminStore::ListAdminChangesAsync(
    int64_t showtime_id, int limit) {
  auto work = [this, showtime_id, limit] { return ListAdminChanges(showtime_id, limit); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<Showtime>> AdminStore::EditShowtimeAsync(int64_t showtime_id,
                                                                    ShowtimeEdit edit,
                                                                    int64_t actor) {
  auto work = [this, showtime_id, edit = std::move(edit), actor] {
    return EditShowtime(showtime_id, edit, actor);
  };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<ShowtimeSales>> AdminStore::GetShowtimeSalesAsync(int64_t showtime_id) {
  auto work = [this, showtime_id] { return GetShowtimeSales(showtime_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<std::vector<Booking>>> AdminStore::ListShowtimeBookingsAsync(
    ShowtimeBookingsQuery query) {
  auto work = [this, query] { return ListShowtimeBookings(query); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<BookingCancel>> PaymentStore::CancelBookingAsync(int64_t booking_id,
                                                                            int64_t customer_id) {
  auto work = [this, booking_id, customer_id] { return CancelBooking(booking_id, customer_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Status> Store::PingAsync() {
  auto work = [this] { return Ping(); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<Showtime>> ShowtimeStore::GetShowtimeAsync(int64_t showtime_id) {
  auto work = [this, showtime_id] { return GetShowtime(showtime_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<SeatMap>> ShowtimeStore::GetSeatMapAsync(int64_t showtime_id) {
  auto work = [this, showtime_id] { return GetSeatMap(showtime_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<std::vector<Showtime>>> ShowtimeStore::ListShowtimesAsync(
    ShowtimeQuery query) {
  auto work = [this, query = std::move(query)] { return ListShowtimes(query); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<Booking>> CheckoutStore::GetBookingAsync(int64_t booking_id,
                                                                    int64_t customer_id) {
  auto work = [this, booking_id, customer_id] { return GetBooking(booking_id, customer_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<bool>> CheckoutStore::FinishCheckoutAsync(
    KeyLock lock, std::string session_id, std::string url, Instant expires_at, int response_status,
    std::string response_body, std::string email) {
  auto work = [this, lock = std::move(lock), session_id = std::move(session_id),
               url = std::move(url), expires_at, response_status,
               response_body = std::move(response_body), email = std::move(email)] {
    return FinishCheckout(lock, session_id, url, expires_at, response_status, response_body, email);
  };
  co_return co_await io::Offload(std::move(work), /*may_refuse=*/false);
}

io::asio::awaitable<Result<std::vector<CustomerBooking>>> TicketStore::ListCustomerBookingsAsync(
    CustomerBookingsQuery query) {
  auto work = [this, query] { return ListCustomerBookings(query); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<CheckInResult>> TicketStore::CheckInAsync(CheckInRequest request) {
  auto work = [this, request = std::move(request)] { return CheckIn(request); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<DoorCount>> TicketStore::CountAtDoorAsync(int64_t showtime_id) {
  auto work = [this, showtime_id] { return CountAtDoor(showtime_id); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<bool>> CheckoutStore::TryBeginCheckoutAsync(IdempotencyKey, std::string,
                                                                       Millis, Millis, Millis,
                                                                       CheckoutBegun*) {
  co_return false;
}

io::asio::awaitable<Result<std::optional<Settlement>>> PaymentStore::TryConfirmPaymentAsync(
    PaymentReport, Booking*) {
  co_return std::optional<Settlement>();
}

Result<bool> ShowtimeStore::SeedBatch(const std::string&, const std::vector<NewShowtime>& showtimes,
                                      int64_t) {
  for (const NewShowtime& showtime : showtimes) {
    auto id = CreateShowtime(showtime);
    if (!id.ok()) return id.status();
  }
  return true;
}

io::asio::awaitable<std::vector<std::pair<int, Status>>> Store::PingDatabasesAsync(Millis) {
  std::vector<std::pair<int, Status>> out;
  out.emplace_back(0, co_await PingAsync());
  co_return out;
}

Result<int64_t> Store::SizeOnDisk() {
  return Status(Code::kInvalid, "not measured for this store");
}

}  // namespace boxoffice
