// The showtime's value types: what a showtime is, its hall's layout and its seats' state as
// read. Plain data on the domain floor (below the engines: the stores, the Redis gate and
// the event sinks all speak these types, none of them includes another's interface).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice {

struct Price {
  int64_t amount = 0;  // minor units (cents)
  std::string currency;
  bool operator==(const Price&) const = default;
};

struct RowLayout {
  std::string row;
  int seats = 0;
  std::string category;
  std::vector<int> aisles = {};      // an aisle after each of these seat numbers (1 … seats-1)
  std::vector<int> accessible = {};  // wheelchair places (1 … seats)
};

struct NewShowtime {
  std::string title;
  std::string cinema;
  std::string hall;
  Instant starts_at;
  std::vector<RowLayout> rows;
  std::map<std::string, Price> prices;      // by category
  bool forbid_single_seat_gaps = false;     // API.md "singleSeatGaps": "forbid"
  std::string time_zone = "UTC";            // API.md "timeZone": the cinema's IANA zone
  int sales_close_minutes = 0;              // API.md "salesCloseMinutesBefore"
  std::optional<int> refund_until_minutes;  // API.md "refundUntilMinutesBefore"
};

// API.md: sales close at most a week before the start.
inline constexpr int kMaxSalesCloseMinutes = 7 * 24 * 60;
// Customers may cancel at most a year before the start (the column's CHECK).
inline constexpr int kMaxRefundUntilMinutes = 365 * 24 * 60;
// An operator's reason for a cancel, in bytes (the column's CHECK).
inline constexpr size_t kMaxCancelReason = 500;

struct Showtime {
  int64_t id = 0;
  std::string title;
  std::string cinema;
  std::string hall;
  Instant starts_at;
  std::map<std::string, Price> prices;
  int seat_count = 0;
  bool forbid_single_seat_gaps = false;
  std::string time_zone = "UTC";
  int sales_close_minutes = 0;
  // API.md "status": a cancelled showtime sells nothing more and its bookings are refunded.
  bool cancelled = false;
  std::string cancel_reason;  // the operator's words, when cancelled
  // Lists only (ShowtimeStore::ListShowtimes): the seats AVAILABLE now, as the seat map
  // counts them (a hold past its expiry is free); absent where a showtime is read alone.
  std::optional<int> seats_left;
  // API.md "refundUntilMinutesBefore": customers may cancel their booking until this many
  // minutes before the start; nullopt: not at all.
  std::optional<int> refund_until_minutes;
  // When sales close: holds, checkouts and queue joins are refused from then on.
  Instant sales_close_at() const {
    return starts_at - Millis(int64_t{sales_close_minutes} * 60'000);
  }
};

// Showtimes with from <= starts_at < to, ordered by (starts_at, id), after the cursor.
struct ShowtimeQuery {
  std::optional<Instant> from;
  std::optional<Instant> to;
  std::optional<std::string> cinema;
  std::optional<std::pair<Instant, int64_t>> after;  // (starts_at, id) of the last row seen
  int limit = 100;
  // Count each listed showtime's free seats (Showtime::seats_left): a visit of every one of
  // its seats, so only when asked for (`?seatsLeft=true`, at most kMaxSeatsLeftListLimit).
  bool seats_left = false;
};

enum class SeatStatus { kAvailable, kHeld, kBooked };
const char* SeatStatusName(SeatStatus s);

struct SeatView {
  std::string code;
  std::string row;
  int number = 0;
  std::string category;
  SeatStatus status = SeatStatus::kAvailable;
  bool accessible = false;   // a wheelchair place
  bool aisle_after = false;  // an aisle follows this seat in its row
};

struct SeatMap {
  int64_t showtime_id = 0;
  Instant as_of;
  std::vector<SeatView> seats;  // in hall order: row, then number
  // The showtime was cancelled: no seat reads AVAILABLE (the stores read unsold seats as
  // BOOKED), and the map says so.
  bool cancelled = false;
};

// A seat of a showtime.
struct SeatRef {
  int64_t showtime_id = 0;
  std::string code;
};

// Who owns a seat right now, for operators and tests; never shown to customers.
struct SeatOwner {
  std::string code;
  SeatStatus status = SeatStatus::kAvailable;  // lazy expiry applied
  std::string hold_id;                         // empty when AVAILABLE
  int64_t customer_id = 0;
};

// A showtime's waiting room (API.md): at most active_limit customers admitted at once,
// each for admission_ttl.
struct WaitingRoomConfig {
  bool enabled = false;
  int active_limit = 500;
  Millis admission_ttl{900'000};
  bool operator==(const WaitingRoomConfig&) const = default;
};

// The Statuses every store reports the same way, with the seeds' messages.
Status ShowtimeNotFound(int64_t showtime_id);
// kSalesClosed: the showtime's sales closed at sales_close_at().
Status SalesClosed(int64_t showtime_id);
// kShowtimeCancelled: the showtime was cancelled; nothing more is sold.
Status ShowtimeCancelled(int64_t showtime_id);

// The rules both stores apply to the rows they read, written once so they cannot drift.
// A cancelled showtime's map: no seat reads AVAILABLE (unsold seats read BOOKED).
void CloseSeatMap(SeatMap& map);
// A seat's stored status: "HELD", "BOOKED", anything else AVAILABLE (lazy expiry is the
// query's: an expired hold is read as AVAILABLE).
SeatStatus ParseSeatStatus(std::string_view stored);
// Whether seat `number` is among a row's layout numbers (RowLayout::aisles or accessible).
bool IsLayoutSeat(const std::vector<int>& numbers, int number);

}  // namespace boxoffice
