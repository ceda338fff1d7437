// TicketStore: what the customer's booking list and the door read and write: the bookings
// of a customer, and check-ins (docs/tickets.md). A role of Store. On shards a check-in
// lives on its showtime's shard (with the booking it admits); a customer's bookings are
// read from every shard and merged.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/status.h"
#include "domain/door.h"
#include "io/loop.h"

namespace boxoffice {

class TicketStore {
 public:
  virtual ~TicketStore() = default;

  // The customer's bookings, newest first, at most query.limit.
  virtual Result<std::vector<CustomerBooking>> ListCustomerBookings(
      const CustomerBookingsQuery& query) = 0;
  // Admits a ticket once, decided by one conditional write (PostgreSQL: one statement,
  // SQLite: its writer): the first scan of a seat of a CONFIRMED booking of that showtime
  // admits it, every later scan reads the first one's time, and a later scan carrying the
  // admitting scan's nonce gets its answer again (kAdmitted). Concurrent scans of one ticket
  // admit it exactly once.
  virtual Result<CheckInResult> CheckIn(const CheckInRequest& request) = 0;
  // The showtime's seats sold and admitted; kNotFound for an unknown showtime.
  virtual Result<DoorCount> CountAtDoor(int64_t showtime_id) = 0;
  // A booking with where its tickets go and its showtime, for its e-mail; nullopt when there
  // is no such booking.
  virtual Result<std::optional<MailBooking>> BookingForMail(int64_t booking_id) = 0;

  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<std::vector<CustomerBooking>>> ListCustomerBookingsAsync(
      CustomerBookingsQuery query);
  virtual io::asio::awaitable<Result<CheckInResult>> CheckInAsync(CheckInRequest request);
  virtual io::asio::awaitable<Result<DoorCount>> CountAtDoorAsync(int64_t showtime_id);
};

}  // namespace boxoffice
