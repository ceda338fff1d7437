#include "tickets/ticket_mail.h"

#include <date/tz.h>
#include <openssl/evp.h>

#include <array>
#include <cstdio>

#include "core/text.h"
#include "tickets/qr_code.h"

namespace boxoffice {
namespace {

constexpr size_t kMimeLine = 76;  // RFC 2045: encoded lines of at most 76 characters

// Standard base64 with padding, in lines of kMimeLine (RFC 2045).
std::string MimeBase64(std::string_view bytes) {
  std::string flat(4 * ((bytes.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(flat.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  flat.resize(static_cast<size_t>(n));
  std::string out;
  for (size_t i = 0; i < flat.size(); i += kMimeLine) {
    out.append(flat, i, kMimeLine);
    out.append("\r\n");
  }
  return out;
}

// Printable ASCII only (no control character, nothing of 8 bits).
bool IsPlain(std::string_view s) {
  for (char c : s)
    if (c < 0x20 || c >= 0x7f) return false;
  return true;
}

constexpr size_t kHeaderLine = 78;  // RFC 5322 2.1.1: lines of at most 78 characters
constexpr size_t kWordBytes = 42;   // 42 bytes: 56 of base64, a 68-character encoded word

// A header's value, folded (CRLF and a space) into lines of at most kHeaderLine: as is when
// it is short printable ASCII, else RFC 2047 encoded words of UTF-8 in base64, each at most
// 75 characters and never splitting a character. Nothing in it can end the header.
std::string HeaderText(std::string_view text, size_t name_length) {
  // (Plain text that contains "=?" would read as an encoded word: encoded too.)
  if (IsPlain(text) && text.find("=?") == std::string_view::npos &&
      name_length + 2 + text.size() <= kHeaderLine) {
    return std::string(text);
  }
  const std::string clean = CleanTextPrefix(text, 400);
  std::string out;
  for (size_t at = 0; at < clean.size();) {
    size_t n = std::min(kWordBytes, clean.size() - at);
    // Back to the start of a character (UTF-8 continuation bytes are 10xxxxxx).
    while (n > 0 && at + n < clean.size() &&
           (static_cast<unsigned char>(clean[at + n]) & 0xc0) == 0x80)
      --n;
    if (n == 0) n = std::min(kWordBytes, clean.size() - at);
    std::string b64 = MimeBase64(std::string_view(clean).substr(at, n));
    std::string word = "=?UTF-8?B?";
    for (char c : b64)
      if (c != '\r' && c != '\n') word.push_back(c);
    word += "?=";
    out += (out.empty() ? "" : "\r\n ") + word;
    at += n;
  }
  return out;
}

// "Fri, 04 Dec 2026 13:55:00 +0000" (RFC 5322 3.3).
std::string MailDate(Instant t) {
  const auto seconds = std::chrono::time_point_cast<std::chrono::seconds>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ToEpochMs(t))));
  return date::format("%a, %d %b %Y %H:%M:%S +0000", seconds);
}

int CurrencyDecimals(const std::string& currency) {
  static constexpr std::array<const char*, 16> kNone = {"BIF", "CLP", "DJF", "GNF", "ISK", "JPY",
                                                        "KMF", "KRW", "PYG", "RWF", "UGX", "VND",
                                                        "VUV", "XAF", "XOF", "XPF"};
  static constexpr std::array<const char*, 6> kThree = {"BHD", "IQD", "JOD", "KWD", "OMR", "TND"};
  for (const char* c : kNone)
    if (currency == c) return 0;
  for (const char* c : kThree)
    if (currency == c) return 3;
  return 2;
}

std::string Domain(const std::string& address) {
  const size_t at = address.rfind('@');
  return at == std::string::npos ? "boxoffice" : address.substr(at + 1);
}

struct Part {
  std::string headers;  // without the blank line
  std::string body;     // encoded, CRLF line ends
};

std::string Multipart(const std::string& boundary, const std::vector<Part>& parts) {
  std::string out;
  for (const Part& p : parts) {
    out += "--" + boundary + "\r\n" + p.headers + "\r\n\r\n" + p.body;
    if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
  }
  out += "--" + boundary + "--\r\n";
  return out;
}

}  // namespace

std::string FormatMoney(const Price& price) {
  const int decimals = CurrencyDecimals(price.currency);
  int64_t scale = 1;
  for (int i = 0; i < decimals; ++i) scale *= 10;
  const int64_t units = price.amount / scale;
  std::string out = std::to_string(units);
  if (decimals > 0) {
    std::string fraction = std::to_string(price.amount % scale);
    fraction.insert(0, static_cast<size_t>(decimals) - fraction.size(), '0');
    out += "." + fraction;
  }
  return out + " " + price.currency;
}

std::string FormatLocalTime(Instant t, const std::string& time_zone) {
  const auto at = std::chrono::time_point_cast<std::chrono::minutes>(
      std::chrono::sys_time<std::chrono::milliseconds>(std::chrono::milliseconds(ToEpochMs(t))));
  try {
    const date::time_zone* zone = date::locate_zone(time_zone);
    return date::format("%a %d %b %Y, %H:%M", date::make_zoned(zone, at)) + " (" + time_zone + ")";
  } catch (const std::exception&) {
    return date::format("%a %d %b %Y, %H:%M", at) + " (UTC)";
  }
}

std::optional<MailMessage> ComposeBookingMail(const OutboxEvent& event, const MailBooking& b,
                                              const TicketSigner& tickets,
                                              const MailSettings& settings, Instant now) {
  if (b.email.empty() || !IsValidEmail(b.email)) return std::nullopt;
  const bool confirmed = event.type == "BookingConfirmed";
  const bool failed = event.type == "BookingFailed";
  const bool refunded = event.type == "BookingRefunded";
  if (!confirmed && !failed && !refunded) return std::nullopt;

  const Booking& booking = b.booking;
  const std::string id = std::to_string(booking.id);
  const std::string ref = OrderReference(booking.id);  // what the page shows too
  const std::string link = settings.public_url + "/#/bookings/" + id;
  const std::string when = FormatLocalTime(b.starts_at, b.time_zone);
  const std::string where = b.cinema + ", " + b.hall;
  std::string subject, text, html;
  std::vector<Part> images;
  if (confirmed) {
    subject = "Your tickets: " + b.title + ", " + when;
    text = "Your booking " + ref + " is confirmed.\r\n\r\n" + b.title + "\r\n" + when + "\r\n" +
           where + "\r\nPaid: " + FormatMoney(booking.amount) +
           "\r\n\r\nYour tickets (show the QR " + "code at the door, or give the code):\r\n";
    html = "<p>Your booking " + ref + " is confirmed.</p><h1>" + HtmlEscape(b.title) + "</h1><p>" +
           HtmlEscape(when) + "<br>" + HtmlEscape(where) +
           "<br>Paid: " + HtmlEscape(FormatMoney(booking.amount)) + "</p>";
    for (const std::string& seat : booking.seats) {
      const std::string code = tickets.Sign(Ticket{booking.showtime_id, booking.id, seat});
      text += "  Seat " + seat + ": " + code + "\r\n";
      const std::string cid = "ticket-" + seat + "." + id + "@" + Domain(settings.from);
      html += "<div style=\"margin:24px 0\"><h2>Seat " + HtmlEscape(seat) +
              "</h2><img src=\"cid:" + cid +
              "\" width=\"264\" height=\"264\" alt=\"QR code of ticket " + code +
              "\"><p style=\"font-family:monospace\">" + code + "</p></div>";
      auto qr = EncodeQr(code);
      const std::string png = qr ? QrPng(*qr) : std::string();
      if (!png.empty()) {
        images.push_back(
            Part{"Content-Type: image/png\r\nContent-Transfer-Encoding: base64\r\n"
                 "Content-ID: <" +
                     cid +
                     ">\r\nContent-Disposition: inline; "
                     "filename=\"ticket-" +
                     seat + ".png\"",
                 MimeBase64(png)});
      }
    }
  } else {
    subject = "Your booking " + ref + " for " + b.title +
              (failed ? " was not completed" : " was refunded");
    const std::string why =
        failed
            ? "Your booking " + ref + " could not be completed. Any money taken for it is refunded."
            : "Your booking " + ref + " was refunded: " + FormatMoney(booking.amount) +
                  " go back to you. Its tickets are no longer valid.";
    text = why + "\r\n\r\n" + b.title + "\r\n" + when + "\r\n" + where + "\r\n";
    html = "<p>" + HtmlEscape(why) + "</p><h1>" + HtmlEscape(b.title) + "</h1><p>" +
           HtmlEscape(when) + "<br>" + HtmlEscape(where) + "</p>";
  }
  text += "\r\nYour booking: " + link + "\r\n";
  html = "<!doctype html><html><body style=\"font-family:sans-serif\">" + html + "<p><a href=\"" +
         HtmlEscape(link) + "\">Your booking</a></p></body></html>";

  MailMessage m;
  m.from = settings.from;
  m.to = b.email;
  m.message_id = "<" + event.event_id + "@" + Domain(settings.from) + ">";
  const std::string boundary = "boxoffice-" + event.event_id;
  const Part text_part{
      "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64",
      MimeBase64(text)};
  std::vector<Part> related = {
      Part{"Content-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: base64",
           MimeBase64(html)}};
  related.insert(related.end(), images.begin(), images.end());
  const Part html_part{"Content-Type: multipart/related; boundary=\"" + boundary + "-r\"",
                       Multipart(boundary + "-r", related)};
  m.data = "From: boxoffice <" + settings.from + ">\r\nTo: <" + b.email +
           ">\r\nSubject: " + HeaderText(subject, std::string_view("Subject").size()) +
           "\r\nDate: " + MailDate(now) + "\r\nMessage-ID: " + m.message_id +
           "\r\nMIME-Version: 1.0\r\nContent-Type: multipart/alternative; boundary=\"" + boundary +
           "-a\"\r\n\r\n" + Multipart(boundary + "-a", {text_part, html_part});
  return m;
}

}  // namespace boxoffice
