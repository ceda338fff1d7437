// AdminStore: running a cinema (API.md "Running a cinema (admin)"): cancelling a showtime,
// its sales and bookings, and its admin trail. A role of Store (store/store.h), implemented by
// every engine; on shards each call goes to the showtime's shard.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "domain/booking.h"
#include "io/loop.h"

namespace boxoffice {

class AdminStore {
 public:
  virtual ~AdminStore() = default;

  // Cancels the showtime in one short transaction (docs/payments.md "Cancelling a
  // showtime"): marked CANCELLED with the reason, every CONFIRMED booking REFUNDED with its
  // refund intent (reason SHOWTIME_CANCELLED) and BookingRefunded event, every PENDING one
  // left PENDING (its payment, if it comes, is refused and refunded), every seat freed, the change
  // appended to the trail under `actor`. A showtime cancelled before is left as it is
  // (ShowtimeCancel::already). kNotFound for an unknown showtime. The refunds themselves go to the
  // gateway through the refund worker.
  virtual Result<ShowtimeCancel> CancelShowtime(int64_t showtime_id, const std::string& reason,
                                                int64_t actor) = 0;
  // Changes title, start, refund terms and (before sales start, else kSalesStarted) prices
  // in one transaction, appended to the trail under `actor`; returns the showtime as it now
  // is. kShowtimeCancelled for a cancelled showtime; kInvalid for prices that do not name
  // exactly its categories.
  virtual Result<Showtime> EditShowtime(int64_t showtime_id, const ShowtimeEdit& edit,
                                        int64_t actor) = 0;
  virtual io::asio::awaitable<Result<Showtime>> EditShowtimeAsync(int64_t showtime_id,
                                                                  ShowtimeEdit edit, int64_t actor);
  // The showtime's sales now (one read of its database). kNotFound for an unknown showtime.
  virtual Result<ShowtimeSales> GetShowtimeSales(int64_t showtime_id) = 0;
  // The showtime's bookings (customer ids included), in id order, a page at a time.
  virtual Result<std::vector<Booking>> ListShowtimeBookings(const ShowtimeBookingsQuery& query) = 0;
  // The showtime's admin trail, newest first, at most `limit` entries.
  virtual Result<std::vector<AdminChange>> ListAdminChanges(int64_t showtime_id, int limit) = 0;

  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<ShowtimeCancel>> CancelShowtimeAsync(int64_t showtime_id,
                                                                          std::string reason,
                                                                          int64_t actor);
  virtual io::asio::awaitable<Result<std::vector<AdminChange>>> ListAdminChangesAsync(
      int64_t showtime_id, int limit);
  virtual io::asio::awaitable<Result<ShowtimeSales>> GetShowtimeSalesAsync(int64_t showtime_id);
  virtual io::asio::awaitable<Result<std::vector<Booking>>> ListShowtimeBookingsAsync(
      ShowtimeBookingsQuery query);
};

}  // namespace boxoffice
