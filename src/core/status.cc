#include "core/status.h"

#include "core/log.h"

namespace boxoffice {

const char* CodeName(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kInvalid:
      return "INVALID";
    case Code::kNotFound:
      return "NOT_FOUND";
    case Code::kConflict:
      return "CONFLICT";
    case Code::kUnknownSeats:
      return "UNKNOWN_SEATS";
    case Code::kNotActive:
      return "NOT_ACTIVE";
    case Code::kCheckoutExists:
      return "CHECKOUT_EXISTS";
    case Code::kKeyReused:
      return "KEY_REUSED";
    case Code::kInProgress:
      return "IN_PROGRESS";
    case Code::kRateLimited:
      return "RATE_LIMITED";
    case Code::kSingleSeatGap:
      return "SINGLE_SEAT_GAP";
    case Code::kHoldLimit:
      return "HOLD_LIMIT";
    case Code::kNotAdmitted:
      return "NOT_ADMITTED";
    case Code::kSalesClosed:
      return "SALES_CLOSED";
    case Code::kShowtimeCancelled:
      return "SHOWTIME_CANCELLED";
    case Code::kNotRefundable:
      return "NOT_REFUNDABLE";
    case Code::kSalesStarted:
      return "SALES_STARTED";
    case Code::kUnavailable:
      return "UNAVAILABLE";
    case Code::kInternal:
      return "INTERNAL";
  }
  return "?";
}

Status BrokenAfterCommit(const char* expr, const char* file, int line) {
  LogError("invariant broken after a commit",
           {{"expr", expr}, {"at", std::string(file) + ":" + std::to_string(line)}});
  return Status(Code::kInternal, std::string("invariant broken after a commit: ") + expr);
}

void AssertFail(const char* expr, const char* file, int line) {
  FlushLogs();  // the lines that led here first
  std::fprintf(
      stderr,
      "{\"level\":\"fatal\",\"msg\":\"assertion failed\",\"expr\":\"%s\",\"at\":\"%s:%d\"}\n", expr,
      file, line);
  std::abort();
}

}  // namespace boxoffice
