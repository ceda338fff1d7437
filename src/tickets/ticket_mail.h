// The e-mail a booking's events send (API.md "Tickets and the door", docs/tickets.md): for
// BookingConfirmed the tickets (each seat with its code in the text, its QR code inline in
// the HTML), for BookingFailed and BookingRefunded a note that says so and that any money
// taken goes back. Written here as one RFC 5322 message (MIME: multipart/alternative of
// text/plain and a multipart/related HTML with its PNG images), sent by jobs/mailer.h.
#pragma once

#include <optional>
#include <string>

#include "core/ticket_code.h"
#include "domain/booking.h"
#include "domain/door.h"

namespace boxoffice {

struct MailSettings {
  std::string from;        // the sender's address (IsValidEmail)
  std::string public_url;  // the service's base URL: the booking page's link starts with it
};

struct MailMessage {
  std::string from;
  std::string to;
  std::string message_id;  // "<EVENT-ID@DOMAIN>": a resend of one event has the same
  std::string data;        // the whole message, CRLF line ends
};

// The mail for an outbox event of booking b, or nullopt when the event sends none (another
// type, or no address was given at checkout). now: the Date header.
std::optional<MailMessage> ComposeBookingMail(const OutboxEvent& event, const MailBooking& b,
                                              const TicketSigner& tickets,
                                              const MailSettings& settings, Instant now);

// "12.50 EUR", "1800 JPY": an amount in minor units with its currency's decimals (ISO 4217).
std::string FormatMoney(const Price& price);
// "Thu 18 Dec 2099, 20:30 (Europe/Paris)": a time in the cinema's zone (UTC when the zone is
// not in the system's database).
std::string FormatLocalTime(Instant t, const std::string& time_zone);

}  // namespace boxoffice
