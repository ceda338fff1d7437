// The booking e-mail end to end: `serve` with --smtp sending to a real SMTP server started
// for the test (tests/support/smtp_sink.py, on Debian's python3-aiosmtpd), on SQLite,
// PostgreSQL and two shards. A confirmed booking sends one mail with its tickets (their
// codes in the text, their QR codes inline, read back with zbarimg); a failed payment sends
// one saying so; a mail server that is down delays mail, never a booking; a sender killed
// mid-batch resends at most the mail that was in flight, with the same Message-ID.
#include <dirent.h>

#include <fstream>
#include <set>

#include "e2e/e2e_fixture.h"

namespace boxoffice::e2e {
namespace {

const std::string kSink = std::string(BOXOFFICE_SOURCE_DIR) + "/tests/support/smtp_sink.py";

// The SMTP server: Debian's python3 with aiosmtpd, on `port`, writing to `dir`.
class SmtpSink {
 public:
  SmtpSink(unsigned short port, std::string dir, double delay_seconds = 0,
           bool refuse_sender = false)
      : dir_(std::move(dir)) {
    log_ = testing::TempDir() + "/smtp.log";
    const std::string& log = log_;
    pid_ =
        testing::Spawn({"/usr/bin/python3", kSink, "serve", std::to_string(port), dir_,
                        std::to_string(delay_seconds), refuse_sender ? "refuse-sender" : "accept"},
                       log);
    for (int i = 0; i < 500; ++i) {
      std::ifstream in(log);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.find("ready") != std::string::npos) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ADD_FAILURE() << "the SMTP server (/usr/bin/python3 with python3-aiosmtpd) did not start";
  }
  ~SmtpSink() {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  // Messages whose data arrived (in flight or written).
  int DataCount() const {
    std::ifstream in(log_);
    int n = 0;
    for (std::string line; std::getline(in, line);) n += line == "data";
    return n;
  }
  // Waits (up to 20 s) until a message's data has arrived; whether one did.
  bool AwaitData() {
    for (int i = 0; i < 1000; ++i) {
      std::ifstream in(log_);
      std::string text((std::istreambuf_iterator<char>(in)), {});
      if (text.find("data") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }

 private:
  pid_t pid_ = 0;
  std::string log_;
  std::string dir_;
};

std::vector<std::string> MailFiles(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".eml") == 0) {
        out.push_back(dir + "/" + name);
      }
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

json ParseMail(const std::string& path, const std::string& out_dir) {
  std::string text;
  FILE* pipe = popen(
      ("/usr/bin/python3 '" + kSink + "' parse '" + path + "' '" + out_dir + "'").c_str(), "r");
  char buffer[4096];
  for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  if (pipe) pclose(pipe);
  return json::parse(text, nullptr, false);
}

std::string ReadQrOf(const std::string& image) {
  std::string text;
  FILE* pipe = popen(("zbarimg --quiet --raw '" + image + "' 2>/dev/null").c_str(), "r");
  char buffer[1024];
  for (size_t n; pipe && (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) text.append(buffer, n);
  if (pipe) pclose(pipe);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

class Mail : public GatewayCallbacks {
 protected:
  void SetUp() override {
    GatewayCallbacks::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    smtp_port_ = testing::FreePort();
    mail_dir_ = testing::TempDir() + "/mail-" + std::to_string(smtp_port_);
    mkdir(mail_dir_.c_str(), 0755);
    StartServe({"--smtp", "smtp://127.0.0.1:" + std::to_string(smtp_port_), "--mail-from",
                "tickets@cinema.example", "--mail-lease", "3s"});
  }
  // A purchase of one seat by customer, whose token carries email.
  std::pair<Booking, std::string> CheckedOut(int64_t customer, const std::string& email,
                                             const std::string& seat) {
    return CheckedOutWithEmail(customer, email, "[\"" + seat + "\"]");
  }
  Booking Bought(int64_t customer, const std::string& email, const std::string& seat) {
    return BoughtWithEmail(customer, email, "[\"" + seat + "\"]");
  }
  // Waits (up to `seconds`) until at least n mails arrived; the files.
  std::vector<std::string> AwaitMails(size_t n, int seconds = 30) {
    std::vector<std::string> files;
    for (int i = 0; i < seconds * 50 && (files = MailFiles(mail_dir_)).size() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return files;
  }
  double Metric(const std::string& series) {
    const std::string body = Call("GET", "/metrics").body;
    double sum = 0;
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind(series, 0) == 0 && (line[series.size()] == ' ' || line[series.size()] == '{'))
        sum += std::stod(line.substr(line.rfind(' ') + 1));
    }
    return sum;
  }
  // The id of the event of `type` for booking (from the events file the relay writes).
  std::string EventId(int64_t booking, const std::string& type) {
    for (int i = 0; i < 300; ++i) {
      for (const json& e : PublishedFor(booking)) {
        if (e.value("type", "") == type) return e.value("id", "");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return "";
  }

  unsigned short smtp_port_ = 0;
  std::string mail_dir_;
};

TEST_P(Mail, AConfirmedBookingSendsOneMailWithItsTicketsAndAFailedOneSaysSo) {
  // A server that refuses the sender (it wants a login) would refuse every mail: the mail
  // waits (it is not passed over as a bad address would be) until the server takes it.
  auto refusing = std::make_unique<SmtpSink>(smtp_port_, mail_dir_, 0, /*refuse_sender=*/true);
  const Booking b = Bought(71, "ana@example.com", "E1");
  for (int i = 0; i < 300 && Metric("boxoffice_mail_failed_total") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(Metric("boxoffice_mail_failed_total"), 1);
  EXPECT_EQ(Metric("boxoffice_mail_backlog"), 1) << service_->Log();
  refusing.reset();
  SmtpSink smtp(smtp_port_, mail_dir_);
  auto files = AwaitMails(1);
  ASSERT_EQ(files.size(), 1u);
  const json mail = ParseMail(files[0], mail_dir_);
  ASSERT_TRUE(mail.is_object());
  EXPECT_EQ(mail["messageId"], "<" + EventId(b.id, "BookingConfirmed") + "@cinema.example>");
  EXPECT_NE(mail["to"].get<std::string>().find("ana@example.com"), std::string::npos);
  EXPECT_NE(mail["subject"].get<std::string>().find("Dune: Part Three"), std::string::npos);
  auto tickets = json::parse(
      Call("GET", "/bookings/" + std::to_string(b.id) + "/tickets", "", {Bearer(Token(71))})
          .body)["tickets"];
  ASSERT_EQ(tickets.size(), 1u);
  const std::string code = tickets[0]["code"];
  const std::string text = mail["text"];
  EXPECT_NE(text.find("Seat E1: " + code), std::string::npos) << text;
  EXPECT_NE(text.find("/#/bookings/" + std::to_string(b.id)), std::string::npos) << text;
  const std::string html = mail["html"];
  ASSERT_EQ(mail["images"].size(), 1u);
  EXPECT_NE(html.find("cid:" + mail["images"][0]["cid"].get<std::string>()), std::string::npos);
  EXPECT_EQ(ReadQrOf(mail["images"][0]["path"]), code) << "the mail's QR code is the ticket";

  // A failed payment: one mail that says so, and no tickets in it.
  auto [failed, session] = CheckedOut(72, "bo@example.org", "E2");
  ASSERT_EQ(Pay(session, "FAILED", "normal").status, 200);
  ASSERT_EQ(AwaitStatus(failed, "FAILED"), "FAILED");
  files = AwaitMails(2);
  ASSERT_EQ(files.size(), 2u);
  const json note = ParseMail(files[1], mail_dir_);
  EXPECT_NE(note["subject"].get<std::string>().find("was not completed"), std::string::npos)
      << note.dump();
  EXPECT_TRUE(note["images"].empty());
  // A customer whose token carried no address gets no mail; one whose mailbox does not exist
  // is passed over, and the next customer's mail still goes.
  Bought(73, "", "E3");
  const double failures_before = Metric("boxoffice_mail_failed_total");
  Bought(74, "bounce@example.com", "E4");
  Bought(75, "cy@example.net", "E5");
  files = AwaitMails(3);
  ASSERT_EQ(files.size(), 3u) << service_->Log();
  EXPECT_NE(ParseMail(files[2], mail_dir_)["to"].get<std::string>().find("cy@example.net"),
            std::string::npos);
  EXPECT_EQ(Metric("boxoffice_mail_sent_total"), 3);
  EXPECT_EQ(Metric("boxoffice_mail_failed_total"), failures_before + 1);
  // A message refused after its data (too big) is that message's refusal: passed over.
  Bought(76, "big@example.com", "E6");
  Bought(77, "dee@example.com", "E7");
  files = AwaitMails(4);
  ASSERT_EQ(files.size(), 4u) << service_->Log();
  EXPECT_EQ(Metric("boxoffice_mail_failed_total"), failures_before + 2);
  // A recipient refused as a relay (5.7.1) means the server refuses everyone's: it waits.
  Bought(78, "relay@example.com", "E8");
  for (int i = 0; i < 300 && Metric("boxoffice_mail_failed_total") < failures_before + 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(Metric("boxoffice_mail_failed_total"), failures_before + 3);  // (and retried)
  EXPECT_EQ(Metric("boxoffice_mail_backlog"), 1);
  EXPECT_EQ(MailFiles(mail_dir_).size(), 4u);
}

TEST_P(Mail, AMailServerThatIsDownDelaysMailAndAKilledSenderResendsOnlyWhatWasInFlight) {
  // No SMTP server yet: bookings go through, mail waits.
  std::set<std::string> expected;  // the Message-IDs: the events' ids (each start of serve
                                   // writes its own events file, so they are read now)
  for (const char* seat : {"E1", "E2", "E3"}) {
    const Booking b = Bought(81 + static_cast<int64_t>(expected.size()), "fan@example.com", seat);
    expected.insert("<" + EventId(b.id, "BookingConfirmed") + "@cinema.example>");
  }
  ASSERT_EQ(expected.size(), 3u);
  for (int i = 0; i < 300 && Metric("boxoffice_mail_failed_total") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(Metric("boxoffice_mail_failed_total"), 1);
  EXPECT_GE(Metric("boxoffice_mail_backlog"), 1);
  EXPECT_EQ(Metric("boxoffice_mail_sent_total"), 0);

  // A slow server: each message is held 1.5 s after its data arrived. The sender restarts
  // (its backoff ends) and is killed once the first message is in flight.
  int arrived = 0;  // messages whose data reached a server
  {
    SmtpSink slow(smtp_port_, mail_dir_, 1.5);
    service_.reset();  // SIGTERM
    StartServe({"--smtp", "smtp://127.0.0.1:" + std::to_string(smtp_port_), "--mail-from",
                "tickets@cinema.example", "--mail-lease", "3s"});
    ASSERT_TRUE(slow.AwaitData());
    service_->Kill();  // the first message in flight: the server has it, the sender no answer
    std::this_thread::sleep_for(std::chrono::milliseconds(1'000));
    arrived += slow.DataCount();
  }
  SmtpSink smtp(smtp_port_, mail_dir_);
  StartServe({"--smtp", "smtp://127.0.0.1:" + std::to_string(smtp_port_), "--mail-from",
              "tickets@cinema.example", "--mail-lease", "3s"});
  auto files = AwaitMails(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));  // nothing more comes
  files = MailFiles(mail_dir_);
  std::map<std::string, int> per_id;
  for (const std::string& f : files) ++per_id[ParseMail(f, mail_dir_)["messageId"]];
  EXPECT_EQ(per_id.size(), 3u) << "one mail per booking";
  int resent = 0;
  for (const auto& [id, n] : per_id) resent += n - 1;
  // The server dropped the message whose sender vanished mid-transaction (another server
  // might deliver it: then its resend shares its Message-ID).
  EXPECT_LE(resent, 1);
  arrived += smtp.DataCount();
  EXPECT_EQ(arrived, 4) << "the three mails, and again the one that was in flight";
  for (const std::string& id : expected) EXPECT_EQ(per_id.count(id), 1u) << id;
  EXPECT_EQ(Metric("boxoffice_mail_backlog"), 0);
}

INSTANTIATE_TEST_SUITE_P(Engines, Mail, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice::e2e
