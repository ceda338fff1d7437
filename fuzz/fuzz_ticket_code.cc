// Fuzz target: the ticket code verifier (core/ticket_code.h), the door's input. Whatever a
// scanner types: no crash, and a code that verifies is the one spelling of its ticket (it
// signs back to itself), of a positive showtime and booking and a canonical seat. The input
// is also read as a ticket's fields, signed, verified and altered in one byte: the ticket
// comes back, the altered code never verifies.
#include <cstdint>
#include <cstring>
#include <string>

#include "core/seats.h"
#include "core/ticket_code.h"
#include "fuzz/fuzz_support.h"

using namespace boxoffice;
using boxoffice::fuzz::Require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const TicketSigner signer("fuzz-ticket-secret-fuzz-ticket-01");
  const std::string text(reinterpret_cast<const char*>(data), size);
  if (auto ticket = signer.Verify(text)) {
    Require(ticket->showtime_id > 0 && ticket->booking_id > 0);
    Require(ParseSeatCode(ticket->seat).has_value());
    Require(signer.Sign(*ticket) == text);
  }
  // The input as fields: two ids, a seat and the byte to alter.
  if (size < 18) return 0;
  int64_t showtime = 0, booking = 0;
  std::memcpy(&showtime, data, 8);
  std::memcpy(&booking, data + 8, 8);
  const std::string seat(reinterpret_cast<const char*>(data) + 17, size - 17);
  if (showtime <= 0 || booking <= 0 || !ParseSeatCode(seat)) return 0;
  const Ticket t{showtime, booking, seat};
  const std::string code = signer.Sign(t);
  Require(code.size() <= kMaxTicketCodeLength);
  Require(signer.Verify(code) == t);
  std::string altered = code;
  const size_t at = data[16] % altered.size();
  altered[at] = altered[at] == 'A' ? 'B' : 'A';
  Require(!signer.Verify(altered).has_value());
  return 0;
}
