// Fuzz target: the JSON bodies of every route (holds, the admin layout, the gateway's
// callback, the waiting room, checkout's body, a scan at the door). The first byte picks the
// parser, the rest is the body. Whatever the input: no crash, and what a parser accepts obeys
// API.md (clean text, bounded prices and layouts, one currency).
#include <cstdint>
#include <cstdlib>
#include <string>

#include "api/json_io.h"
#include "core/seats.h"
#include "core/text.h"
#include "fuzz/fuzz_support.h"

using namespace boxoffice;

using boxoffice::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string body(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0: {
      std::vector<std::string> seats;
      std::optional<BestAvailable> best;
      if (!api::ParseHoldBody(body, &seats, &best)) {
        Require(seats.size() <= kMaxSeatsPerHold);
        Require(!best || (seats.empty() && best->count >= 1 && best->count <= kMaxSeatsPerHold &&
                          !best->category.empty() && IsCleanText(best->category)));
        for (const auto& s : seats) Require(IsCleanText(s));
        if (auto valid = ValidateHoldSeats(seats); valid.ok()) {
          for (const auto& s : valid.value()) Require(ParseSeatCode(s).has_value());
        }
      }
      break;
    }
    case 1: {
      NewShowtime showtime;
      if (!api::ParseNewShowtime(body, &showtime)) {
        Require(IsCleanText(showtime.title) && IsCleanText(showtime.cinema) &&
                IsCleanText(showtime.hall));
        int seats = 0;
        for (const auto& row : showtime.rows) {
          Require(IsValidRowLabel(row.row) && showtime.prices.count(row.category));
          seats += row.seats;
        }
        Require(seats >= 1 && seats <= api::kMaxSeatsPerShowtime);
        const std::string& currency = showtime.prices.begin()->second.currency;
        for (const auto& [category, price] : showtime.prices) {
          Require(price.amount >= 0 && price.amount <= api::kMaxPriceAmount);
          Require(price.currency == currency);
        }
      }
      break;
    }
    case 2: {
      PaymentReport report;
      if (!api::ParsePaymentReport(body, &report)) {
        Require(!report.payment_id.empty() && !report.session_id.empty());
        Require(IsCleanText(report.payment_id) && IsCleanText(report.session_id) &&
                IsCleanText(report.reference));
        Require(report.amount >= 0);
      }
      break;
    }
    case 3: {
      WaitingRoomConfig config;
      (void)api::ParseWaitingRoom(body, &config);
      break;
    }
    case 4: {
      // Checkout's body: whatever it accepts names no address or one we can send to.
      std::string email;
      if (!api::ParseCheckoutBody(body, &email)) {
        Require(body.find('\0') == std::string::npos);
        Require(email.empty() || IsValidEmail(email));
      }
      break;
    }
    case 5: {
      // A scan: an accepted body has a code, a positive showtime and a printable nonce.
      api::CheckInBody scan;
      if (!api::ParseCheckInBody(body, &scan)) {
        Require(!scan.code.empty() && scan.code.size() <= api::kMaxScanLength);
        Require(scan.showtime_id > 0 && scan.nonce.size() <= kMaxCheckInNonceLength);
        for (char c : scan.nonce) Require(c >= 0x20 && c < 0x7f);
      }
      break;
    }
    case 6: {
      // A cancel's reason: at most kMaxCancelReason bytes, the column's bound.
      std::string reason;
      if (!api::ParseCancelBody(body, &reason)) Require(reason.size() <= kMaxCancelReason);
      break;
    }
    case 7: {
      // An edit: at least one field; prices in bounds and one currency; refund terms bounded.
      ShowtimeEdit edit;
      if (!api::ParseShowtimeEdit(body, &edit)) {
        Require(!edit.empty());
        if (edit.prices) {
          Require(!edit.prices->empty());
          for (const auto& [category, price] : *edit.prices) {
            Require(price.amount >= 0 && price.amount <= api::kMaxPriceAmount);
            Require(price.currency == edit.prices->begin()->second.currency);
          }
        }
        if (edit.refund_until_minutes && *edit.refund_until_minutes) {
          Require(**edit.refund_until_minutes >= 0 &&
                  **edit.refund_until_minutes <= kMaxRefundUntilMinutes);
        }
      }
      break;
    }
  }
  return 0;
}
