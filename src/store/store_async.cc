// The asynchronous forms of Store's methods, by default the blocking ones on the loop's
// blocking pool (kept apart from store.cc, which the clang fuzz build compiles without
// coroutines).
#include "store/store.h"

namespace boxoffice {

io::asio::awaitable<Result<Hold>> Store::HoldSeatsAsync(HoldRequest request) {
  // (Named first: g++ 12 destroys a lambda temporary in a co_await expression twice.)
  auto work = [this, request = std::move(request)] { return HoldSeats(request); };
  co_return co_await io::Offload(std::move(work));
}

io::asio::awaitable<Result<Booking>> Store::GetBookingAsync(int64_t booking_id,
                                                           int64_t customer_id) {
  auto work = [this, booking_id, customer_id] { return GetBooking(booking_id, customer_id); };
  co_return co_await io::Offload(std::move(work));
}

}  // namespace boxoffice
