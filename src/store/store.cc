#include "store/store.h"

namespace boxoffice {

const char* SeatStatusName(SeatStatus s) {
  switch (s) {
    case SeatStatus::kAvailable: return "AVAILABLE";
    case SeatStatus::kHeld: return "HELD";
    case SeatStatus::kBooked: return "BOOKED";
  }
  return "?";
}

const char* HoldStateName(HoldState s) {
  switch (s) {
    case HoldState::kHeld: return "HELD";
    case HoldState::kExpired: return "EXPIRED";
    case HoldState::kReleased: return "RELEASED";
    case HoldState::kBooked: return "BOOKED";
  }
  return "?";
}

}  // namespace boxoffice
