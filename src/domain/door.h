// The door's value types: a customer's bookings as their list shows them, a scan at the
// door and what the store decided about it (docs/tickets.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "domain/booking.h"

namespace boxoffice {

// A booking with its showtime's title and start, for GET /me/bookings.
struct CustomerBooking {
  Booking booking;
  std::string title;
  Instant starts_at;
};

// A customer's bookings, newest first: (created_at, booking id) descending, after the
// cursor (the last row of the previous page).
struct CustomerBookingsQuery {
  int64_t customer_id = 0;
  std::optional<std::pair<Instant, int64_t>> before;
  int limit = 20;
};
inline constexpr int kMaxCustomerBookingsPage = 100;

// A scan of a ticket whose code verified (core/ticket_code.h): its showtime is the one the
// door admits to (a ticket of another showtime never reaches the store).
struct CheckInRequest {
  int64_t showtime_id = 0;
  int64_t booking_id = 0;
  std::string seat;
  std::string nonce;  // empty: none; else the door's id, ':' and its nonce (at most 84 bytes)
};
inline constexpr size_t kMaxCheckInNonceLength = 64;  // as the door sends it (API.md)

enum class CheckInOutcome {
  kAdmitted,          // this scan admitted the ticket (or repeats the scan that did)
  kAlreadyCheckedIn,  // an earlier scan admitted it: checked_in_at says when
  kVoid,              // its booking is not (or no longer) confirmed
  kUnknown,           // no such booking, seat or showtime (a code signed with a leaked key)
};
const char* CheckInOutcomeName(CheckInOutcome outcome);

struct CheckInResult {
  CheckInOutcome outcome = CheckInOutcome::kUnknown;
  Instant checked_in_at;  // kAdmitted, kAlreadyCheckedIn: the admitting scan's time
};

// A booking as its e-mail tells of it: where its tickets go and its showtime.
struct MailBooking {
  Booking booking;
  std::string email;  // empty: none was given at checkout
  std::string title;
  std::string cinema;
  std::string hall;
  Instant starts_at;
  std::string time_zone = "UTC";  // the cinema's IANA zone
};

// The door's count for a showtime: seats of confirmed bookings, and of those admitted.
struct DoorCount {
  int64_t sold = 0;
  int64_t admitted = 0;
};

}  // namespace boxoffice
