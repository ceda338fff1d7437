#include "jobs/mailer.h"

#include <curl/curl.h>

#include <cstring>
#include <mutex>

#include "core/crypto.h"
#include "core/log.h"
#include "core/text.h"

namespace boxoffice {
namespace {

// libcurl's global state, set up once, before any transfer (curl_global_init is not safe
// to run beside other threads' transfers).
void InitCurlOnce() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Upload {
  const std::string* data;
  size_t offset = 0;
};

// What the SMTP conversation ended with: the command libcurl sent last ("RCPT", "MAIL",
// "DATA", …; libcurl ends a refused transaction with QUIT before it returns, which is not
// what was refused) and the server's last reply line. Seen through libcurl's debug
// callback; nothing of it is logged.
struct Conversation {
  std::string command;
  std::string reply;
};

int Follow(CURL*, curl_infotype type, char* data, size_t size, void* user) {
  auto* c = static_cast<Conversation*>(user);
  std::string_view line(data, size);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.remove_suffix(1);
  if (type == CURLINFO_HEADER_OUT) {
    const std::string_view verb = line.substr(0, line.find(' '));
    if (verb != "QUIT") c->command = std::string(verb);
  } else if (type == CURLINFO_HEADER_IN) {
    c->reply = std::string(line.substr(0, 200));
  }
  return 0;
}

// Whether a 5xx reply refuses this message only (so it is passed over) rather than every
// message (so it waits): a recipient the server does not have (RFC 3463 5.1.x: no such
// mailbox, domain or syntax; 550/551/553 without an enhanced code), or a message refused
// after its data (too big, content refused). A refusal of the sender, of the login, of a
// relay (5.7.x: Postfix's "Relay access denied" answers RCPT) refuses everyone's mail.
bool RefusesThisMessageOnly(const Conversation& c, long reply) {
  if (reply < 500 || reply >= 600) return false;
  if (c.command == "DATA") return true;
  if (c.command != "RCPT") return false;
  const std::string_view line = c.reply;
  const size_t space = line.find(' ');
  const std::string_view enhanced =
      space == std::string_view::npos ? std::string_view() : line.substr(space + 1, 4);
  if (enhanced.size() == 4 && enhanced[0] == '5' && enhanced[1] == '.') {
    return enhanced.substr(0, 3) == "5.1" && enhanced[3] == '.';
  }
  return reply == 550 || reply == 551 || reply == 553;
}

size_t ReadUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* up = static_cast<Upload*>(user);
  const size_t n = std::min(size * count, up->data->size() - up->offset);
  std::memcpy(buffer, up->data->data() + up->offset, n);
  up->offset += n;
  return n;
}

}  // namespace

SmtpTransport::SmtpTransport(std::string url, Millis timeout)
    : url_(std::move(url)), timeout_(std::min(timeout, kMaxTimeout)) {
  BOX_ASSERT(IsSmtpUrl(url_) && timeout_ > Millis(0));
  InitCurlOnce();
}

bool SmtpTransport::IsSmtpUrl(const std::string& url) {
  std::string_view rest;
  if (url.rfind("smtp://", 0) == 0) {
    rest = std::string_view(url).substr(7);
  } else if (url.rfind("smtps://", 0) == 0) {
    rest = std::string_view(url).substr(8);
  } else {
    return false;
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == rest.size()) return false;
  for (char c : rest.substr(0, colon)) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-';
    if (!ok) return false;
  }
  auto port = ParseDecimalId(rest.substr(colon + 1));
  return port && *port <= 65535;
}

Status SmtpTransport::Send(const MailMessage& message) {
  Conversation conversation;  // (before the handle: it outlives every callback)
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), &curl_easy_cleanup);
  if (!curl) return Status(Code::kUnavailable, "libcurl could not start a transfer");
  const std::string from = "<" + message.from + ">";
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> rcpt(
      curl_slist_append(nullptr, ("<" + message.to + ">").c_str()), &curl_slist_free_all);
  Upload upload{&message.data};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, url_.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt.get());
  curl_easy_setopt(c, CURLOPT_READFUNCTION, &ReadUpload);
  curl_easy_setopt(c, CURLOPT_READDATA, &upload);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_DEBUGFUNCTION, &Follow);
  curl_easy_setopt(c, CURLOPT_DEBUGDATA, &conversation);
  curl_easy_setopt(c, CURLOPT_VERBOSE, 1L);  // (to the callback above only)
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(std::min(kConnectTimeout, timeout_).count()));
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_.count()));
  const CURLcode rc = curl_easy_perform(c);
  if (rc == CURLE_OK) return Status::Ok();
  long reply = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &reply);
  const std::string why = std::string(curl_easy_strerror(rc)) + " (SMTP reply \"" +
                          CleanTextPrefix(conversation.reply, 200) + "\" to " +
                          (conversation.command.empty() ? "the greeting" : conversation.command) +
                          ")";
  if (RefusesThisMessageOnly(conversation, reply)) return Status(Code::kInvalid, why);
  return Status(Code::kUnavailable, why);
}

Mailer::Mailer(OutboxStore* outbox, TicketStore* bookings, MailTransport* transport,
               std::string ticket_secret, MailSettings settings, MailerOptions options,
               Metrics* metrics, const Clock* clock, const std::string& metric_labels)
    : outbox_(outbox),
      bookings_(bookings),
      transport_(transport),
      tickets_(std::move(ticket_secret)),
      settings_(std::move(settings)),
      options_(options),
      clock_(clock),
      owner_("mailer-" + NewUuid()),
      sent_(metrics->GetCounter("boxoffice_mail_sent_total",
                                "Booking e-mails the SMTP server accepted.")),
      failed_(metrics->GetCounter(
          "boxoffice_mail_failed_total",
          "Booking e-mails not sent: attempts that failed (retried) and mails refused for good.")),
      expired_(metrics->GetCounter(
          "boxoffice_mail_expired_total",
          "Booking e-mails dropped unsent, older than --mail-max-age when their turn came.")),
      backlog_(std::make_shared<std::atomic<int64_t>>(0)) {
  BOX_ASSERT(options_.batch_limit > 0 && options_.lease > Millis(0) &&
             options_.max_age > Millis(0));
  metrics->AddGauge(
      "boxoffice_mail_backlog", "Booking events whose e-mail has not been dealt with yet.",
      [backlog = backlog_] { return static_cast<double>(backlog->load()); }, metric_labels);
}

Mailer::~Mailer() { Stop(); }

void Mailer::Start() {
  // A full batch runs again at once (sent or not: events without an address count too).
  periodic_.Start(options_.interval, [this] { return Round().ok() && full_batch_; });
}

void Mailer::Stop() {
  periodic_.Stop();
  // Given up at once, so that the next instance's mailer carries on without waiting.
  (void)outbox_->AcquireLease(kConsumer, owner_, Millis(-1));
}

Result<int> Mailer::RunOnce() {
  next_attempt_ = Instant();
  return Round();
}

Result<int> Mailer::Round() {
  const Instant now = clock_->Now();
  full_batch_ = false;
  // The backlog is this database's, read every round (also while another instance's
  // mailer holds the lease, or this one waits out a backoff).
  if (auto backlog = outbox_->CountPendingMail(); backlog.ok()) backlog_->store(backlog.value());
  if (now < next_attempt_) return 0;
  auto fail = [this](Status s) -> Result<int> {
    if (auto backlog = outbox_->CountPendingMail(); backlog.ok()) backlog_->store(backlog.value());
    failures_ = std::min(failures_ + 1, 16);
    Millis wait = kFirstRetry;
    for (int i = 1; i < failures_ && wait < kMaxRetry; ++i) wait *= 2;
    next_attempt_ = clock_->Now() + std::min(wait, kMaxRetry);
    return s;
  };
  auto held = outbox_->AcquireLease(kConsumer, owner_, options_.lease);
  if (!held.ok()) return fail(held.status());
  if (!held.value()) return 0;  // another instance's mailer has it
  auto expired = outbox_->ExpirePendingMail(options_.max_age, kExpireBatch, kConsumer, owner_);
  if (!expired.ok()) return fail(expired.status());
  if (expired.value() > 0) {
    expired_.Inc(static_cast<uint64_t>(expired.value()));
    LogWarn("booking e-mails dropped unsent: older than --mail-max-age",
            {{"count", expired.value()}, {"maxAgeMs", options_.max_age.count()}});
  }
  auto events = outbox_->PendingMail(options_.batch_limit);
  if (!events.ok()) return fail(events.status());
  int sent = 0;
  int refused_in_a_row = 0;
  for (const OutboxEvent& event : events.value()) {
    const std::optional<int64_t> booking_id = ParseDecimalId(event.key);
    std::optional<MailMessage> mail;
    if (booking_id) {
      auto booking = bookings_->BookingForMail(*booking_id);
      if (!booking.ok()) return fail(booking.status());
      // A confirmation's tickets only while the booking still stands: one refunded since
      // gets its refund's mail instead (its own event).
      const bool stale = event.type == "BookingConfirmed" && booking.value() &&
                         booking.value()->booking.status != BookingStatus::kConfirmed;
      if (booking.value() && !stale) {
        mail = ComposeBookingMail(event, *booking.value(), tickets_, settings_, clock_->Now());
      }
    }
    if (mail) {
      // Renewed before each message: a slow server never lets the lease run out mid-batch.
      auto renewed = outbox_->AcquireLease(kConsumer, owner_, options_.lease);
      if (!renewed.ok()) return fail(renewed.status());
      if (!renewed.value()) return sent;
      Status s = transport_->Send(*mail);
      if (s.code() == Code::kInvalid && ++refused_in_a_row >= kMaxRefusedInARow) {
        failed_.Inc();
        LogWarn("booking e-mails refused one after another: the server may refuse every one",
                {{"bookingId", *booking_id}, {"event", event.event_id}, {"error", s.message()}});
        return fail(s);
      }
      if (s.code() == Code::kInvalid) {
        failed_.Inc();
        LogWarn("booking e-mail refused for good",
                {{"bookingId", *booking_id}, {"event", event.event_id}, {"error", s.message()}});
      } else if (!s.ok()) {
        failed_.Inc();
        LogWarn("booking e-mail not sent, will retry",
                {{"bookingId", *booking_id}, {"event", event.event_id}, {"error", s.message()}});
        return fail(s);
      } else {
        sent_.Inc();
        ++sent;
        refused_in_a_row = 0;
      }
    }
    Status marked = outbox_->MarkMailDone(event.id, kConsumer, owner_);
    if (!marked.ok()) return fail(marked);
  }
  failures_ = 0;
  full_batch_ = events->size() == static_cast<size_t>(options_.batch_limit) ||
                expired.value() == kExpireBatch;
  if (auto left = outbox_->CountPendingMail(); left.ok()) backlog_->store(left.value());
  return sent;
}

}  // namespace boxoffice
