// A hold's value types: the request (seats by hand or best available, with the single-seat
// gap guards), the one pick check every engine applies, and the hold as read.
#pragma once

#include "domain/showtime.h"

namespace boxoffice {

// The single-seat gap rule as a check on one neighbour of a pick (holds/seat_rules.h builds
// them from the hall's layout, which never changes): `seat`, not in the pick, must not be
// left alone. The pick would strand it when `seat` is free and `beyond` (the next seat
// outward in its row, before any aisle) is not, or when `beyond` is empty (an aisle or the
// row's end, or a seat of the pick itself). Every store, and the Redis gate, apply exactly
// this rule (CheckPick) on the seats' state inside the step that decides the hold.
struct SeatGuard {
  std::string seat;
  std::string beyond;
  bool operator==(const SeatGuard&) const = default;
};

// Seats to hold together (sorted, distinct) and the guards the hold must respect.
struct SeatPick {
  std::vector<std::string> seats;
  std::vector<SeatGuard> guards;
  bool operator==(const SeatPick&) const = default;
};

struct HoldRequest {
  std::string hold_id;  // a fresh UUID chosen by the caller
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  // Picked by hand: validated, sorted, distinct (core/seats.h). Empty for best available.
  std::vector<std::string> seats;
  Millis ttl{0};
  // Picked by hand on a showtime that forbids single-seat gaps: the neighbours `seats`
  // must not strand (kSingleSeatGap naming them otherwise).
  std::vector<SeatGuard> guards = {};
  // Best available: the blocks to try, best first, in the same decision; the first whose
  // seats are all free and whose guards hold is held (kConflict with no seats when none).
  // Shared: a layout's ranked blocks are worked out once (HallLayout::Best).
  std::shared_ptr<const std::vector<SeatPick>> best = nullptr;
  bool is_best() const { return seats.empty(); }
  const std::vector<SeatPick>& picks() const {
    static const std::vector<SeatPick> kNone;
    return best ? *best : kNone;
  }
};

// How a pick fares on the seats' state at the moment of the decision. `free` says whether
// a code is a seat of the showtime that nobody holds (an expired hold counting as free) or
// has booked. taken: the pick's seats that are not free; stranded: the guards' seats it
// would leave alone (only looked at when nothing is taken). Both in the pick's order.
struct PickCheck {
  std::vector<std::string> taken;
  std::vector<std::string> stranded;
  bool ok() const { return taken.empty() && stranded.empty(); }
};
template <class Free>
PickCheck CheckPick(const std::vector<std::string>& seats, const std::vector<SeatGuard>& guards,
                    const Free& free) {
  PickCheck check;
  for (const auto& seat : seats) {
    if (!free(seat)) check.taken.push_back(seat);
  }
  if (!check.taken.empty()) return check;
  for (const auto& g : guards) {
    if (free(g.seat) && (g.beyond.empty() || !free(g.beyond))) check.stranded.push_back(g.seat);
  }
  return check;
}

enum class HoldState { kHeld, kExpired, kReleased, kBooked };
const char* HoldStateName(HoldState s);

struct Hold {
  std::string hold_id;
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  std::vector<std::string> seats;
  HoldState state = HoldState::kHeld;
  Instant created_at;
  Instant expires_at;
};
// The hold refusals every store and the gate report the same way, with the seeds' messages.
Status HoldNotFound(const std::string& hold_id);
// kConflict listing `taken`, with the message "Seats [F6, F7] of showtime 42 are not available".
Status SeatsUnavailable(const HoldRequest& request, std::vector<std::string> taken);
// kConflict with no seats: best available found no block free.
Status NoBlockAvailable(const HoldRequest& request);
// kSingleSeatGap naming the seats the hold would leave alone.
Status SingleSeatGap(const HoldRequest& request, std::vector<std::string> stranded);
// kUnknownSeats listing the requested codes missing from `found`.
Status UnknownSeats(const HoldRequest& request, const std::vector<std::string>& found);
// kHoldLimit: the customer already holds `held` live seats of the showtime, and the request
// would take them past kMaxSeatsPerCustomer.
Status HoldLimit(const HoldRequest& request, int64_t held);
// A hold refused because some requested codes are not seats of the showtime (`found` are
// the ones that are): kNotFound when none is and the showtime does not exist, else
// kUnknownSeats.
Status ExplainUnknownSeats(const HoldRequest& request, const std::vector<std::string>& found,
                           bool showtime_exists);
// A hold's state from its stored status: RELEASED and BOOKED as stored; a HELD hold whose
// time has passed (`expired`, judged on the store's clock) is EXPIRED.
HoldState DeriveHoldState(std::string_view stored, bool expired);

}  // namespace boxoffice
