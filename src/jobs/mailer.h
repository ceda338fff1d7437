// Mailer: the booking events' e-mail (API.md "Tickets and the door", docs/tickets.md).
//
// A consumer of each database's outbox with its own mark on each row (mail_pending,
// migration 0030), never part of the transaction that decided a booking: a mail server
// that is down delays mail, never a booking. Each round takes (or renews) the lease "mail",
// so one mailer at a time reads a database's events, reads the rows not yet marked and, for
// each, sends the booking's mail (ComposeBookingMail; none without an address) and only
// then marks the row, fenced by the lease. A crash or a lost lease resends at most the mail
// in flight, with the same Message-ID (the event id's), so a resend is recognisable. A mark
// per row rather than a position: rows commit out of id order.
//
// A transport error or a refusal that would refuse every message (4xx, or a 5xx to the
// sender, the login or the connection) stops the round; the next waits a backoff
// (kFirstRetry doubling up to kMaxRetry): the events wait in the outbox, counted by
// boxoffice_mail_backlog. A 5xx to the recipient (no such mailbox) is counted in
// boxoffice_mail_failed_total, logged, and passed over, so one bad address never holds up
// everyone else's tickets.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/metrics.h"
#include "domain/booking.h"
#include "jobs/periodic.h"
#include "store/outbox_store.h"
#include "store/ticket_store.h"
#include "tickets/ticket_mail.h"

namespace boxoffice {

// Where mail goes: an SMTP server (SmtpTransport), or a test's stand-in.
class MailTransport {
 public:
  virtual ~MailTransport() = default;
  // kOk once the server accepted the message; kInvalid when the server refused its
  // recipient for good (5xx to RCPT); kUnavailable for anything else (no answer, 4xx, a
  // 5xx that would refuse every message).
  virtual Status Send(const MailMessage& message) = 0;
};

// SMTP through libcurl: smtp://HOST:PORT (or smtps://).
class SmtpTransport final : public MailTransport {
 public:
  static constexpr Millis kConnectTimeout{5'000};
  static constexpr Millis kMaxTimeout{30'000};  // a whole message, tickets' images included
  // url: as IsSmtpUrl accepts it. A message that takes longer than timeout (at most
  // kMaxTimeout) is abandoned and sent again later.
  SmtpTransport(std::string url, Millis timeout);
  Status Send(const MailMessage& message) override;
  // smtp://HOST:PORT or smtps://HOST:PORT, nothing else (the --smtp flag).
  static bool IsSmtpUrl(const std::string& url);

 private:
  std::string url_;
  Millis timeout_;
};

struct MailerOptions {
  Millis interval{1'000};  // how soon an event's mail goes out when all is well
  int batch_limit = 50;    // events read per round
  // The lease "mail", renewed before every message: another instance's mailer takes over
  // this long after this one died. A message's send must end within it (SmtpTransport's
  // timeout: two thirds of it), or two mailers could send at once.
  Millis lease{45'000};
  // Mail not sent this long after its event (the mail server was down, or --smtp was set
  // only later) is dropped unsent and counted: tickets are on the booking's page.
  Millis max_age{24 * 3'600'000};
};

class Mailer {
 public:
  static constexpr const char* kConsumer = "mail";
  static constexpr Millis kFirstRetry{1'000};
  static constexpr Millis kMaxRetry{60'000};
  // Messages refused for good one after another: then the server is taken to refuse every
  // message, whatever it says, and the round ends (the rest wait, with their backoff).
  static constexpr int kMaxRefusedInARow = 5;
  static constexpr int kExpireBatch = 1'000;  // rows dropped per round, at most

  // metric_labels: the backlog gauge's labels (`shard="1"` when each shard has a mailer).
  Mailer(OutboxStore* outbox, TicketStore* bookings, MailTransport* transport,
         std::string ticket_secret, MailSettings settings, MailerOptions options, Metrics* metrics,
         const Clock* clock, const std::string& metric_labels = "");
  ~Mailer();  // stops, joins and gives up the lease

  // One round now (backoff or not): mails sent, or the error that stopped the round.
  // Rounds and Stop run on one thread at a time (the periodic thread, or the caller's).
  Result<int> RunOnce();
  void Start();
  void Stop();

 private:
  Result<int> Round();

  OutboxStore* outbox_;
  TicketStore* bookings_;
  MailTransport* transport_;
  TicketSigner tickets_;
  MailSettings settings_;
  MailerOptions options_;
  const Clock* clock_;
  const std::string owner_;  // this mailer's name in the lease
  Counter& sent_;
  Counter& failed_;
  Counter& expired_;
  std::shared_ptr<std::atomic<int64_t>> backlog_;  // as of the last round, for the gauge
  int failures_ = 0;                               // in a row: the backoff's exponent
  bool full_batch_ = false;                        // the last round read a full batch
  Instant next_attempt_;
  Periodic periodic_;
};

}  // namespace boxoffice
