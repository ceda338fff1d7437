// The booking e-mail's text (tickets/ticket_mail.h): money in its currency's decimals, the
// start in the cinema's zone, headers that no title can break, one Message-ID per event.
#include "tickets/ticket_mail.h"

#include <gtest/gtest.h>

#include "core/crypto.h"
#include "core/time_format.h"

namespace boxoffice {
namespace {

MailBooking Sample() {
  MailBooking b;
  b.booking.id = 15;
  b.booking.showtime_id = 42;
  b.booking.seats = {"F5", "F6"};
  b.booking.amount = Price{2500, "EUR"};
  b.email = "ana@example.com";
  b.title = "Amélie\r\nBcc: victim@example.com";
  b.cinema = "Pathé Wepler";
  b.hall = "Salle 1";
  b.starts_at = *ParseRfc3339("2099-12-18T19:30:00.000Z");
  b.time_zone = "Europe/Paris";
  return b;
}

// The text/plain part of a composed mail, decoded from its base64 lines.
std::string PlainText(const std::string& data) {
  const std::string head =
      "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
  const size_t from = data.find(head);
  if (from == std::string::npos) return "";
  const size_t begin = from + head.size();
  std::string encoded;
  for (char c : data.substr(begin, data.find("\r\n--", begin) - begin)) {
    if (c == '+')
      encoded += '-';
    else if (c == '/')
      encoded += '_';
    else if (c != '\r' && c != '\n' && c != '=')
      encoded += c;
  }
  return Base64UrlDecode(encoded).value_or("");
}

TEST(TicketMail, MoneyHasItsCurrencysDecimals) {
  EXPECT_EQ(FormatMoney(Price{1250, "EUR"}), "12.50 EUR");
  EXPECT_EQ(FormatMoney(Price{5, "GBP"}), "0.05 GBP");
  EXPECT_EQ(FormatMoney(Price{1800, "JPY"}), "1800 JPY");
  EXPECT_EQ(FormatMoney(Price{12345, "KWD"}), "12.345 KWD");
}

TEST(TicketMail, TheStartIsInTheCinemasZone) {
  const Instant t = *ParseRfc3339("2099-12-18T19:30:00.000Z");
  EXPECT_EQ(FormatLocalTime(t, "Europe/Paris"), "Fri 18 Dec 2099, 20:30 (Europe/Paris)");
  EXPECT_EQ(FormatLocalTime(t, "Asia/Tokyo"), "Sat 19 Dec 2099, 04:30 (Asia/Tokyo)");
  EXPECT_EQ(FormatLocalTime(t, "Not/AZone"), "Fri 18 Dec 2099, 19:30 (UTC)");
}

TEST(TicketMail, AConfirmedBookingsMailCarriesItsTicketsAndNoTitleBreaksAHeader) {
  const TicketSigner signer("ticket-mail-test-secret-0123456789");
  const OutboxEvent event{
      7, "0b7c1f0e-5a8e-4a7e-9d57-3b1f3a1c2d4e", "BookingConfirmed", "15", "{}", Instant()};
  auto mail = ComposeBookingMail(event, Sample(), signer,
                                 MailSettings{"tickets@cinema.example", "https://box.example"},
                                 *ParseRfc3339("2026-12-04T13:55:00.000Z"));
  ASSERT_TRUE(mail.has_value());
  EXPECT_EQ(mail->to, "ana@example.com");
  EXPECT_EQ(mail->message_id, "<0b7c1f0e-5a8e-4a7e-9d57-3b1f3a1c2d4e@cinema.example>");
  const std::string& d = mail->data;
  EXPECT_NE(d.find("\r\nMessage-ID: " + mail->message_id + "\r\n"), std::string::npos);
  EXPECT_NE(d.find("\r\nDate: Fri, 04 Dec 2026 13:55:00 +0000\r\n"), std::string::npos);
  EXPECT_NE(d.find("\r\nSubject: =?UTF-8?B?"), std::string::npos) << "an encoded word";
  EXPECT_EQ(d.find("\r\nBcc:"), std::string::npos) << "the title's CRLF stayed inside the word";
  EXPECT_EQ(d.find("\nBcc:"), std::string::npos);
  // Two inline images, one per seat, named by the HTML.
  size_t images = 0;
  for (size_t at = 0; (at = d.find("Content-Type: image/png", at)) != std::string::npos; ++at) {
    ++images;
  }
  EXPECT_EQ(images, 2u);
  EXPECT_NE(d.find("Content-ID: <ticket-F5.15@cinema.example>"), std::string::npos);
  // The order reference the booking page shows (web/format.js orderRef), not the raw id.
  EXPECT_NE(PlainText(d).find("Your booking 000-00F is confirmed."), std::string::npos)
      << PlainText(d);
  for (size_t start = 0, end; (end = d.find("\r\n", start)) != std::string::npos; start = end + 2) {
    EXPECT_LE(end - start, 998u) << "RFC 5322's line limit";
  }
}

// The same vectors are checked for the page's orderRef (tests/browser/design.test.js).
TEST(TicketMail, AnOrderReferenceIsTheIdInCrockfordsBase32AndReadsBack) {
  EXPECT_EQ(OrderReference(0), "000-000");
  EXPECT_EQ(OrderReference(15), "000-00F");
  EXPECT_EQ(OrderReference(32), "000-010");
  EXPECT_EQ(OrderReference(123456789), "3NQ-K8N");
  EXPECT_EQ(OrderReference(1LL << 30), "1-000-000");
  EXPECT_EQ(OrderReference(INT64_MAX), "7-ZZZ-ZZZ-ZZZ-ZZZ");
  for (int64_t id :
       {int64_t{0}, int64_t{1}, int64_t{15}, int64_t{99999}, int64_t{1} << 40, INT64_MAX}) {
    EXPECT_EQ(ParseOrderReference(OrderReference(id)), id);
  }
  EXPECT_EQ(ParseOrderReference("3nq k8n"), 123456789);
  EXPECT_EQ(ParseOrderReference("OOO-OOF"), 15);            // O read as 0
  EXPECT_EQ(ParseOrderReference("000-00U"), std::nullopt);  // U is not a digit
  EXPECT_EQ(ParseOrderReference("--"), std::nullopt);
  EXPECT_EQ(ParseOrderReference("8-000-000-000-000"), std::nullopt);  // past INT64_MAX
}

TEST(TicketMail, ALongOrOddTitleIsFoldedIntoEncodedWordsOfAtMost75Characters) {
  const TicketSigner signer("ticket-mail-test-secret-0123456789");
  const OutboxEvent event{7, "e", "BookingConfirmed", "15", "{}", Instant()};
  MailBooking b = Sample();
  for (const std::string& title : {std::string(60, 'x') + "é" + std::string(150, 'y'),
                                   std::string("Vertical\x0bTab"), std::string(200, 'z')}) {
    b.title = title;
    auto mail =
        ComposeBookingMail(event, b, signer, MailSettings{"t@c.example", "https://b"}, Instant());
    ASSERT_TRUE(mail);
    const std::string& d = mail->data;
    const size_t start = d.find("\r\nSubject: ") + 2;
    size_t end = start;  // the header ends at a CRLF not followed by folding white space
    while ((end = d.find("\r\n", end)) != std::string::npos && d[end + 2] == ' ') end += 2;
    const std::string subject = d.substr(start, end - start);
    for (size_t at = 0, line_end; at < subject.size(); at = line_end + 2) {
      line_end = std::min(subject.find("\r\n", at), subject.size());
      EXPECT_LE(line_end - at, 78u) << subject;
    }
    for (size_t at = 0; (at = subject.find("=?", at)) != std::string::npos;) {
      const size_t word_end = subject.find("?=", at + 10);
      ASSERT_NE(word_end, std::string::npos) << subject;
      EXPECT_LE(word_end + 2 - at, 75u) << subject;
      at = word_end + 2;
    }
    for (char c : subject) {
      EXPECT_TRUE(c == '\r' || c == '\n' || (c >= 0x20 && c < 0x7f)) << "raw byte in " << subject;
    }
  }
}

TEST(TicketMail, OnlyBookingEventsWithAnAddressSendMail) {
  const TicketSigner signer("ticket-mail-test-secret-0123456789");
  const MailSettings settings{"tickets@cinema.example", "https://box.example"};
  MailBooking b = Sample();
  OutboxEvent event{7, "e", "SeatsReleased", "15", "{}", Instant()};
  EXPECT_FALSE(ComposeBookingMail(event, b, signer, settings, Instant()));
  event.type = "BookingRefunded";
  auto refunded = ComposeBookingMail(event, b, signer, settings, Instant());
  ASSERT_TRUE(refunded);
  EXPECT_EQ(refunded->data.find("image/png"), std::string::npos);
  b.email.clear();
  EXPECT_FALSE(ComposeBookingMail(event, b, signer, settings, Instant()));
}

}  // namespace
}  // namespace boxoffice
