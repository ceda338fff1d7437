#include "store/store.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/seats.h"
#include "core/time_format.h"

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
  return Status(Code::kSalesClosed, "sales for showtime " + std::to_string(showtime_id) +
                                        " have closed");
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

bool IsLayoutSeat(const std::vector<int>& numbers, int number) {
  return std::find(numbers.begin(), numbers.end(), number) != numbers.end();
}

SeatStatus ParseSeatStatus(std::string_view stored) {
  if (stored == "HELD") return SeatStatus::kHeld;
  if (stored == "BOOKED") return SeatStatus::kBooked;
  return SeatStatus::kAvailable;
}

HoldState DeriveHoldState(std::string_view stored, bool expired) {
  if (stored == "RELEASED") return HoldState::kReleased;
  if (stored == "BOOKED") return HoldState::kBooked;
  return expired ? HoldState::kExpired : HoldState::kHeld;
}

Status BookingNotFound(int64_t booking_id) {
  return Status(Code::kNotFound, "booking " + std::to_string(booking_id) + " not found");
}

const char* BookingStatusName(BookingStatus s) {
  switch (s) {
    case BookingStatus::kPending:
      return "PENDING";
    case BookingStatus::kConfirmed:
      return "CONFIRMED";
    case BookingStatus::kFailed:
      return "FAILED";
    case BookingStatus::kRefunded:
      return "REFUNDED";
  }
  return "?";
}

std::optional<BookingStatus> ParseBookingStatus(std::string_view text) {
  for (auto s : {BookingStatus::kPending, BookingStatus::kConfirmed, BookingStatus::kFailed,
                 BookingStatus::kRefunded}) {
    if (text == BookingStatusName(s)) return s;
  }
  return std::nullopt;
}

const char* KeyPhaseName(KeyPhase phase) {
  switch (phase) {
    case KeyPhase::kStarted:
      return "STARTED";
    case KeyPhase::kBookingCreated:
      return "BOOKING_CREATED";
    case KeyPhase::kFinished:
      return "FINISHED";
  }
  return "?";
}

std::optional<KeyPhase> ParseKeyPhase(std::string_view text) {
  for (auto p : {KeyPhase::kStarted, KeyPhase::kBookingCreated, KeyPhase::kFinished}) {
    if (text == KeyPhaseName(p)) return p;
  }
  return std::nullopt;
}

const char* SettlementName(Settlement s) {
  switch (s) {
    case Settlement::kDuplicate:
      return "duplicate";
    case Settlement::kConfirmed:
      return "confirmed";
    case Settlement::kLateRefunded:
      return "late_refunded";
    case Settlement::kMismatchRefunded:
      return "mismatch_refunded";
    case Settlement::kPaymentFailed:
      return "payment_failed";
    case Settlement::kNotPendingRefunded:
      return "not_pending_refunded";
    case Settlement::kUnknownRecorded:
      return "unknown_recorded";
    case Settlement::kOtherSession:
      return "other_session_refunded";
  }
  return "?";
}

std::string BookingEventJson(const std::string& event_id, const std::string& type, const Booking& b,
                             Instant occurred_at) {
  return nlohmann::json{{"id", event_id},
                        {"type", type},
                        {"bookingId", b.id},
                        {"showtimeId", b.showtime_id},
                        {"seats", b.seats},
                        {"amount", {{"amount", b.amount.amount}, {"currency", b.amount.currency}}},
                        {"occurredAt", FormatRfc3339(occurred_at)}}
      .dump();
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
