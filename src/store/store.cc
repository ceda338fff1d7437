#include "store/store.h"

#include <algorithm>

#include "core/seats.h"

namespace boxoffice {

const char* SeatStatusName(SeatStatus s) {
  switch (s) {
    case SeatStatus::kAvailable:
      return "AVAILABLE";
    case SeatStatus::kHeld:
      return "HELD";
    case SeatStatus::kBooked:
      return "BOOKED";
  }
  return "?";
}

Status ShowtimeNotFound(int64_t showtime_id) {
  return Status(Code::kNotFound, "showtime " + std::to_string(showtime_id) + " not found");
}

Status HoldNotFound(const std::string& hold_id) {
  return Status(Code::kNotFound, "hold " + hold_id + " not found");
}

Status SeatsUnavailable(const HoldRequest& request, std::vector<std::string> taken) {
  std::sort(taken.begin(), taken.end());
  return Status(Code::kConflict,
                "Seats " + JoinSeats(request.seats) + " of showtime " +
                    std::to_string(request.showtime_id) + " are not available",
                std::move(taken));
}

Status UnknownSeats(const HoldRequest& request, const std::vector<std::string>& found) {
  std::vector<std::string> unknown;
  for (const auto& s : request.seats) {
    if (std::find(found.begin(), found.end(), s) == found.end()) unknown.push_back(s);
  }
  return Status(Code::kUnknownSeats,
                "Seats " + JoinSeats(unknown) + " do not exist in showtime " +
                    std::to_string(request.showtime_id),
                std::move(unknown));
}

const char* HoldStateName(HoldState s) {
  switch (s) {
    case HoldState::kHeld:
      return "HELD";
    case HoldState::kExpired:
      return "EXPIRED";
    case HoldState::kReleased:
      return "RELEASED";
    case HoldState::kBooked:
      return "BOOKED";
  }
  return "?";
}

}  // namespace boxoffice
