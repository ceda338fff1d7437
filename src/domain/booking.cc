#include "domain/booking.h"

#include <nlohmann/json.hpp>

#include "core/time_format.h"
#include "domain/door.h"

namespace boxoffice {

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

namespace {
constexpr std::string_view kCrockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
constexpr size_t kReferenceDigits = 6;
}  // namespace

std::string OrderReference(int64_t booking_id) {
  BOX_ASSERT(booking_id >= 0);  // ids come from the database's sequences
  std::string digits;
  for (auto n = static_cast<uint64_t>(booking_id); n > 0 || digits.size() < kReferenceDigits;
       n /= 32) {
    digits.insert(digits.begin(), kCrockford[n % 32]);
  }
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += '-';
    grouped += digits[i];
  }
  return grouped;
}

std::optional<int64_t> ParseOrderReference(std::string_view text) {
  uint64_t n = 0;
  size_t digits = 0;
  for (char c : text) {
    if (c == '-' || c == ' ') continue;
    c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    if (c == 'O') c = '0';
    if (c == 'I' || c == 'L') c = '1';
    const size_t v = kCrockford.find(c);
    if (v == std::string_view::npos) return std::nullopt;
    if (n > (static_cast<uint64_t>(INT64_MAX) - v) / 32) return std::nullopt;
    n = n * 32 + v;
    ++digits;
  }
  if (digits == 0) return std::nullopt;
  return static_cast<int64_t>(n);
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
                             Instant occurred_at, const std::string& reason) {
  nlohmann::json event{{"id", event_id},
                       {"type", type},
                       {"bookingId", b.id},
                       {"showtimeId", b.showtime_id},
                       {"seats", b.seats},
                       {"amount", {{"amount", b.amount.amount}, {"currency", b.amount.currency}}},
                       {"occurredAt", FormatRfc3339(occurred_at)}};
  if (!reason.empty()) event["reason"] = reason;
  return event.dump();
}

}  // namespace boxoffice

namespace boxoffice {

const char* CheckInOutcomeName(CheckInOutcome outcome) {
  switch (outcome) {
    case CheckInOutcome::kAdmitted:
      return "ADMITTED";
    case CheckInOutcome::kAlreadyCheckedIn:
      return "ALREADY_CHECKED_IN";
    case CheckInOutcome::kVoid:
      return "TICKET_VOID";
    case CheckInOutcome::kUnknown:
      return "TICKET_UNKNOWN";
  }
  return "?";
}

}  // namespace boxoffice
