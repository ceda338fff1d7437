#include "domain/hold.h"

#include <algorithm>

#include "core/seats.h"

namespace boxoffice {

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

Status NoBlockAvailable(const HoldRequest& request) {
  const size_t n = request.picks().empty() ? 0 : request.picks().front().seats.size();
  return Status(Code::kConflict, "No " + std::to_string(n) + " adjacent seats of showtime " +
                                     std::to_string(request.showtime_id) + " are available");
}

Status SingleSeatGap(const HoldRequest& request, std::vector<std::string> stranded) {
  std::sort(stranded.begin(), stranded.end());
  stranded.erase(std::unique(stranded.begin(), stranded.end()), stranded.end());
  std::string message = "Seats " + JoinSeats(request.seats) + " of showtime " +
                        std::to_string(request.showtime_id) + " would leave " +
                        JoinSeats(stranded) + " alone";  // (before stranded is moved)
  return Status(Code::kSingleSeatGap, std::move(message), std::move(stranded));
}

Status UnknownSeats(const HoldRequest& request, const std::vector<std::string>& found) {
  std::vector<std::string> unknown;
  for (const auto& s : request.seats) {
    if (std::find(found.begin(), found.end(), s) == found.end()) unknown.push_back(s);
  }
  // The message first: an argument moved from in the same call may be moved before the
  // others are evaluated (the order is unspecified), which once named no seat at all.
  std::string message = "Seats " + JoinSeats(unknown) + " do not exist in showtime " +
                        std::to_string(request.showtime_id);
  return Status(Code::kUnknownSeats, std::move(message), std::move(unknown));
}

Status HoldLimit(const HoldRequest& request, int64_t held) {
  return Status(Code::kHoldLimit, "customer " + std::to_string(request.customer_id) +
                                      " already holds " + std::to_string(held) +
                                      " seats of showtime " + std::to_string(request.showtime_id) +
                                      "; at most " + std::to_string(kMaxSeatsPerCustomer) +
                                      " at once")
      .WithId(held);
}

Status ExplainUnknownSeats(const HoldRequest& request, const std::vector<std::string>& found,
                           bool showtime_exists) {
  if (found.empty() && !showtime_exists) return ShowtimeNotFound(request.showtime_id);
  return UnknownSeats(request, found);
}

HoldState DeriveHoldState(std::string_view stored, bool expired) {
  if (stored == "RELEASED") return HoldState::kReleased;
  if (stored == "BOOKED") return HoldState::kBooked;
  return expired ? HoldState::kExpired : HoldState::kHeld;
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
