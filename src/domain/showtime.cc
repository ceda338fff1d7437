#include "domain/showtime.h"

#include <algorithm>

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

Status SalesClosed(int64_t showtime_id) {
  return Status(Code::kSalesClosed,
                "sales for showtime " + std::to_string(showtime_id) + " have closed");
}

Status ShowtimeCancelled(int64_t showtime_id) {
  return Status(Code::kShowtimeCancelled,
                "showtime " + std::to_string(showtime_id) + " was cancelled");
}

void CloseSeatMap(SeatMap& map) {
  if (!map.cancelled) return;
  for (SeatView& seat : map.seats) seat.status = SeatStatus::kBooked;
}

bool IsLayoutSeat(const std::vector<int>& numbers, int number) {
  return std::find(numbers.begin(), numbers.end(), number) != numbers.end();
}

SeatStatus ParseSeatStatus(std::string_view stored) {
  if (stored == "HELD") return SeatStatus::kHeld;
  if (stored == "BOOKED") return SeatStatus::kBooked;
  return SeatStatus::kAvailable;
}

}  // namespace boxoffice
