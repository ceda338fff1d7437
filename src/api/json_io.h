// JSON in and out for the API: the field names of API.md, camelCase, times in RFC 3339.
// Parsers return kInvalid with a message fit for the client; a body that is not JSON at
// all is reported apart (BadJson) because API.md gives it its own code.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "domain/booking.h"
#include "domain/door.h"
#include "domain/hold.h"
#include "domain/showtime.h"
#include "holds/seat_rules.h"

namespace boxoffice::api {

// Limits of the admin layout (API.md: at most 1,000 seats per showtime).
inline constexpr int kMaxSeatsPerShowtime = 1000;
inline constexpr size_t kMaxRowsPerShowtime = 200;
inline constexpr size_t kMaxTextField = 200;  // title, cinema, hall
inline constexpr size_t kMaxCategoryLength = 32;
// API.md: prices from 0 to 10,000,000 minor units, so 8 seats' sum always fits exactly.
inline constexpr int64_t kMaxPriceAmount = 10'000'000;

// waiting_room: the showtime's waiting room is on ("waitingRoom": true; absent when off).
std::string ShowtimeJson(const Showtime& s, bool waiting_room = false);
std::string ShowtimeListJson(const std::vector<Showtime>& list, const std::string& next_cursor);
// The seat map body and its ETag (which depends on the seats' states only, not on asOf).
std::string SeatMapJson(const SeatMap& map);
std::string SeatMapEtag(const SeatMap& map);
std::string HoldJson(const Hold& hold);         // GET /holds/{id}
std::string HoldCreatedJson(const Hold& hold);  // 201 of POST …/holds

// Result of parsing a request body.
struct ParseError {
  bool bad_json = false;  // not JSON at all: BAD_JSON; else VALIDATION_FAILED
  std::string message;
};

// {"seats": ["F5", "F6"]} → the raw list (ValidateHoldSeats checks the codes), or
// {"best": {"count": 2, "category": "standard"}} → *best (count 1 … kMaxSeatsPerHold).
std::optional<ParseError> ParseHoldBody(const std::string& body, std::vector<std::string>* seats,
                                        std::optional<BestAvailable>* best);
std::optional<ParseError> ParseNewShowtime(const std::string& body, NewShowtime* out);
// Whether name is a time zone of the system's IANA database (Debian's tzdata), spelled as
// the database spells it ("Europe/London", "UTC").
bool IsTimeZoneName(const std::string& name);

// The gateway's callback body: paymentId, sessionId, reference, status, amount, currency.
std::optional<ParseError> ParsePaymentReport(const std::string& body, PaymentReport* out);
// PUT /admin/showtimes/{id}/waiting-room: {"enabled", "activeLimit"?, "admissionTtlSeconds"?}
// (defaults 500 and 900); ranges are checked by Admission::Configure.
std::optional<ParseError> ParseWaitingRoom(const std::string& body, WaitingRoomConfig* out);
std::string WaitingRoomJson(int64_t showtime_id, const WaitingRoomConfig& config);
// GET /bookings/{id}.
std::string BookingJson(const Booking& booking);

// Checkout's body: empty, {} or {"email": "…"} (an address IsValidEmail accepts); *email
// is left as it was without one.
std::optional<ParseError> ParseCheckoutBody(const std::string& body, std::string* email);
// GET /me/bookings: {"bookings": [booking + "title", "startsAt"], "nextCursor": …|null}.
std::string CustomerBookingsJson(const std::vector<CustomerBooking>& bookings,
                                 const std::string& next_cursor);
// POST /checkin: {"code": "…", "showtimeId": 42, "nonce"?: "…"}. The code is not verified
// here (any string of 1–kMaxScanLength characters: a scanner's input), the nonce is 1–64
// printable ASCII characters.
inline constexpr size_t kMaxScanLength = 512;
struct CheckInBody {
  std::string code;
  int64_t showtime_id = 0;
  std::string nonce;
};
std::optional<ParseError> ParseCheckInBody(const std::string& body, CheckInBody* out);

// PATCH /admin/showtimes/{id}: {"title"?, "startsAt"?, "prices"?, "refundUntilMinutesBefore"?}
// (at least one; prices as the creation takes them; nothing else).
std::optional<ParseError> ParseShowtimeEdit(const std::string& body, ShowtimeEdit* out);
// POST /admin/showtimes/{id}/cancel: empty, {} or {"reason": "…"} (at most
// kMaxCancelReason bytes).
std::optional<ParseError> ParseCancelBody(const std::string& body, std::string* reason);
// The cancel's answer: {"showtimeId", "status": "CANCELLED", "alreadyCancelled",
// "bookingsRefunded", "bookingsPending"}.
std::string ShowtimeCancelJson(int64_t showtime_id, const ShowtimeCancel& cancel);
// GET /admin/showtimes/{id}/changes: {"changes": [{"id", "actor", "action", "before",
// "after", "at"}]}, newest first.
std::string AdminChangesJson(const std::vector<AdminChange>& changes);

// GET /admin/showtimes/{id}/sales (API.md).
std::string ShowtimeSalesJson(int64_t showtime_id, const ShowtimeSales& sales);
// GET /admin/showtimes/{id}/bookings: {"bookings": [booking + "customerId", "createdAt"],
// "nextCursor": …|null}.
std::string AdminBookingsJson(const std::vector<Booking>& bookings, const std::string& next_cursor);

// Opaque list cursors: base64url of "startsAtMs:showtimeId".
std::string EncodeCursor(Instant starts_at, int64_t id);
std::optional<std::pair<Instant, int64_t>> DecodeCursor(const std::string& cursor);

}  // namespace boxoffice::api
