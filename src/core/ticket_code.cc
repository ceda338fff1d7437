#include "core/ticket_code.h"

#include <openssl/sha.h>

#include "core/crypto.h"
#include "core/seats.h"
#include "core/status.h"

namespace boxoffice {
namespace {

constexpr std::string_view kTagLabel = "boxoffice-ticket-v1";
constexpr size_t kTagBytes = 12;
constexpr int kMaxVarintBytes = 9;  // a positive int64 has at most 63 bits

void PutVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

// A varint of at most kMaxVarintBytes in canonical form (no trailing zero groups: each
// value has one spelling, so a code is one string per ticket).
std::optional<uint64_t> GetVarint(std::string_view* in) {
  uint64_t v = 0;
  for (int i = 0; i < kMaxVarintBytes && i < static_cast<int>(in->size()); ++i) {
    const auto byte = static_cast<uint8_t>((*in)[static_cast<size_t>(i)]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (byte == 0 && i > 0) return std::nullopt;
      in->remove_prefix(static_cast<size_t>(i) + 1);
      return v;
    }
  }
  return std::nullopt;
}

// "F5" → 6·1000 + 5; "AA12" → 27·1000 + 12.
uint64_t SeatNumberOf(const SeatCode& seat) {
  uint64_t row = 0;
  for (char c : seat.row) row = row * 26 + static_cast<uint64_t>(c - 'A' + 1);
  return row * 1000 + static_cast<uint64_t>(seat.number);
}

std::optional<std::string> SeatOfNumber(uint64_t value) {
  const uint64_t number = value % 1000;
  uint64_t row = value / 1000;
  if (number == 0 || row == 0) return std::nullopt;
  std::string letters;
  while (row > 0 && letters.size() <= kMaxRowLabelLength) {
    --row;
    letters.insert(letters.begin(), static_cast<char>('A' + row % 26));
    row /= 26;
  }
  if (row > 0 || letters.size() > kMaxRowLabelLength) return std::nullopt;
  return letters + std::to_string(number);
}

std::string Sha256(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  return std::string(reinterpret_cast<const char*>(digest), sizeof digest);
}

}  // namespace

TicketSigner::TicketSigner(std::string secret) : secret_(std::move(secret)) {
  BOX_ASSERT(secret_.size() >= kMinTicketSecretLength);
  key_id_ = static_cast<uint8_t>(Sha256(secret_)[0]);
}

std::string TicketSigner::Sign(const Ticket& ticket) const {
  BOX_ASSERT(ticket.showtime_id > 0 && ticket.booking_id > 0);
  const auto seat = ParseSeatCode(ticket.seat);
  BOX_ASSERT(seat.has_value());
  std::string body(1, static_cast<char>(key_id_));
  PutVarint(&body, static_cast<uint64_t>(ticket.showtime_id));
  PutVarint(&body, static_cast<uint64_t>(ticket.booking_id));
  PutVarint(&body, SeatNumberOf(*seat));
  const std::string tag = HmacSha256(secret_, std::string(kTagLabel) + body);
  std::string code = Base64UrlEncode(body + tag.substr(0, kTagBytes));
  BOX_ASSERT(code.size() <= kMaxTicketCodeLength);
  return code;
}

std::optional<Ticket> TicketSigner::Verify(std::string_view code) const {
  if (code.empty() || code.size() > kMaxTicketCodeLength) return std::nullopt;
  auto raw = Base64UrlDecode(code);
  if (!raw || raw->size() < 1 + 3 + kTagBytes) return std::nullopt;
  // One spelling per code: base64url's unused low bits must be zero.
  if (Base64UrlEncode(*raw) != code) return std::nullopt;
  const std::string_view body = std::string_view(*raw).substr(0, raw->size() - kTagBytes);
  const std::string_view tag = std::string_view(*raw).substr(body.size());
  if (static_cast<uint8_t>(body[0]) != key_id_) return std::nullopt;
  const std::string expected = HmacSha256(secret_, std::string(kTagLabel) + std::string(body));
  if (!ConstantTimeEquals(tag, std::string_view(expected).substr(0, kTagBytes))) {
    return std::nullopt;
  }
  // Signed by us, so well-formed; it is parsed as strictly anyway (a leaked secret must not
  // reach an assertion either).
  std::string_view rest = body.substr(1);
  const auto showtime = GetVarint(&rest);
  const auto booking = showtime ? GetVarint(&rest) : std::nullopt;
  const auto seat_number = booking ? GetVarint(&rest) : std::nullopt;
  if (!seat_number || !rest.empty()) return std::nullopt;
  constexpr uint64_t kMaxId = uint64_t{1} << 63;
  if (*showtime == 0 || *showtime >= kMaxId || *booking == 0 || *booking >= kMaxId) {
    return std::nullopt;
  }
  auto seat = SeatOfNumber(*seat_number);
  if (!seat || !ParseSeatCode(*seat)) return std::nullopt;
  return Ticket{static_cast<int64_t>(*showtime), static_cast<int64_t>(*booking), *seat};
}

std::string TicketSigner::DeriveSecret(std::string_view jwt_secret) {
  return HexEncode(HmacSha256(jwt_secret, "boxoffice ticket secret v1"));
}

}  // namespace boxoffice
