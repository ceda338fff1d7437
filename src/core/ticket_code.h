// Ticket codes: what a QR code on a ticket says, and how the door knows it is ours.
//
// A code names one seat of one booking of one showtime and is signed, so the door decides
// "ours or not" before any lookup, and nobody can make a code for a seat they did not buy
// or change the seat of one they did (docs/tickets.md). Layout, before base64url (no
// padding):
//
//   key id (1 byte) | showtime id (varint) | booking id (varint) | seat (varint) | tag (12 bytes)
//
// The ids are positive 63-bit integers (at most 9 varint bytes each); the seat is its row
// in bijective base 26 (A = 1 … ZZZ = 18,278) times 1000 plus its number (at most 4 bytes).
// The tag is HMAC-SHA256 under the ticket secret over "boxoffice-ticket-v1" and the bytes
// before it, cut to 96 bits: a forger's guess is right once in 2^96. The key id is the first
// byte of the secret's SHA-256, so a door running with another secret says "unknown"
// rather than "forged" in its log. The longest code is 35 bytes, 47 characters.
//
// A code carries nothing a customer could misuse: a copy admits one person once, like a
// paper ticket, and it opens nothing else (not the booking, which needs the owner's token).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace boxoffice {

inline constexpr size_t kMaxTicketCodeLength = 48;  // API.md
inline constexpr size_t kMinTicketSecretLength = 32;

struct Ticket {
  int64_t showtime_id = 0;
  int64_t booking_id = 0;
  std::string seat;  // a canonical seat code (core/seats.h)
  bool operator==(const Ticket&) const = default;
};

class TicketSigner {
 public:
  // secret: at least kMinTicketSecretLength bytes (the caller checked it: a flag's value).
  explicit TicketSigner(std::string secret);

  // The code of a ticket whose ids are positive and whose seat is canonical (BOX_ASSERTed:
  // tickets are made of bookings the store wrote).
  std::string Sign(const Ticket& ticket) const;
  // The ticket a code names, or nullopt when it is not a code signed with this secret
  // (any length, any bytes: the input of a door scanner).
  std::optional<Ticket> Verify(std::string_view code) const;

  // The default ticket secret: derived from the JWT secret under its own label, so the two
  // keys differ and a ticket tag can never stand in for a token signature.
  static std::string DeriveSecret(std::string_view jwt_secret);

 private:
  std::string secret_;
  uint8_t key_id_ = 0;
};

}  // namespace boxoffice
