// Ticket codes (core/ticket_code.h): short, one spelling per ticket, and nobody without the
// secret can make or alter one.
#include "core/ticket_code.h"

#include <gtest/gtest.h>

#include "core/crypto.h"

namespace boxoffice {
namespace {

const std::string kSecret = "ticket-secret-ticket-secret-0123";

TEST(TicketCode, ATicketRoundTrips) {
  TicketSigner signer(kSecret);
  for (const Ticket& t : {Ticket{1, 1, "A1"}, Ticket{42, 1234, "F5"}, Ticket{7, 9, "AA12"},
                          Ticket{(int64_t{1} << 40) + 5, (int64_t{1} << 40) + 77, "ZZZ999"}}) {
    const std::string code = signer.Sign(t);
    EXPECT_EQ(signer.Verify(code), t) << code;
    EXPECT_EQ(signer.Sign(t), code) << "one code per ticket";
    for (char c : code) {
      EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') << code;
    }
  }
}

TEST(TicketCode, TheLongestCodeFitsTheContract) {
  TicketSigner signer(kSecret);
  const int64_t max = INT64_MAX;
  const std::string code = signer.Sign(Ticket{max, max, "ZZZ999"});
  EXPECT_LE(code.size(), kMaxTicketCodeLength);
  EXPECT_EQ(signer.Verify(code), (Ticket{max, max, "ZZZ999"}));
}

TEST(TicketCode, EveryAlteredCharacterIsRefused) {
  TicketSigner signer(kSecret);
  const std::string code = signer.Sign(Ticket{42, 1234, "F5"});
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  for (size_t i = 0; i < code.size(); ++i) {
    for (char c : alphabet) {
      if (c == code[i]) continue;
      std::string altered = code;
      altered[i] = c;
      EXPECT_FALSE(signer.Verify(altered)) << altered;
    }
  }
  EXPECT_FALSE(signer.Verify(code.substr(0, code.size() - 1)));
  EXPECT_FALSE(signer.Verify(code + "A"));
  EXPECT_FALSE(signer.Verify(""));
  EXPECT_FALSE(signer.Verify(std::string(1000, 'A')));
}

TEST(TicketCode, AnotherSecretsCodesAreRefused) {
  TicketSigner ours(kSecret), theirs("another-secret-another-secret-01");
  EXPECT_FALSE(ours.Verify(theirs.Sign(Ticket{42, 1234, "F5"})));
}

TEST(TicketCode, AValidTagOverABodyWeNeverWriteIsRefused) {
  // A leaked secret signing a malformed body: still no ticket (no assertion reached).
  TicketSigner signer(kSecret);
  const std::string key_id = Base64UrlDecode(signer.Sign(Ticket{1, 1, "A1"})).value().substr(0, 1);
  for (const std::string& body :
       {key_id + std::string("\x01\x01", 2),                  // no seat
        key_id + std::string("\x01\x01\xe8\x07", 4),          // seat 1000: row A, number 0
        key_id + std::string("\x01\x01\xd9\xd4\xdb\x08", 6),  // row AAAA
        key_id + std::string("\x01\x01\xe9\x07\x00", 5),      // a byte after the seat
        key_id + std::string("\x81\x00\x01\xe9\x07", 5),      // showtime 1 spelt in two bytes
        key_id + std::string("\x00\x01\xe9\x07", 4)}) {       // showtime 0
    const std::string tag = HmacSha256(kSecret, "boxoffice-ticket-v1" + body).substr(0, 12);
    EXPECT_FALSE(signer.Verify(Base64UrlEncode(body + tag))) << HexEncode(body);
  }
}

TEST(TicketCode, TheDefaultSecretIsDerivedUnderItsOwnLabel) {
  const std::string jwt = "jwt-secret-jwt-secret-jwt-secret-0";
  const std::string derived = TicketSigner::DeriveSecret(jwt);
  EXPECT_GE(derived.size(), kMinTicketSecretLength);
  EXPECT_NE(derived, jwt);
  EXPECT_EQ(derived, TicketSigner::DeriveSecret(jwt));
  EXPECT_NE(derived, TicketSigner::DeriveSecret(jwt + "x"));
}

}  // namespace
}  // namespace boxoffice
