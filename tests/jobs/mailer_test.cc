// The mailer (jobs/mailer.h) on SQLite, PostgreSQL and shards' databases, with a scripted
// transport (a stand-in for the SMTP server, not for a database) on the store's clock:
// a permanent refusal is passed over and counted, a temporary one keeps the position and
// waits its backoff, and a mailer without the lease moves nothing.
#include "jobs/mailer.h"

#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <mutex>

#include "store/store_fixture.h"

namespace boxoffice {
namespace {

const std::string kTicketSecret = "mailer-test-ticket-secret-0123456789";

class ScriptedTransport final : public MailTransport {
 public:
  Status Send(const MailMessage& m) override {
    std::lock_guard lock(mu_);
    if (m.to.rfind("bounce", 0) == 0) return Status(Code::kInvalid, "550 no such mailbox");
    if (down_) return Status(Code::kUnavailable, "421 try again later");
    sent_.push_back(m);
    return Status::Ok();
  }
  void SetDown(bool down) {
    std::lock_guard lock(mu_);
    down_ = down;
  }
  std::vector<MailMessage> Sent() {
    std::lock_guard lock(mu_);
    return sent_;
  }

 private:
  std::mutex mu_;
  bool down_ = false;
  std::vector<MailMessage> sent_;
};

class MailerTest : public StoreContract {
 protected:
  // A confirmed booking of seat by customer whose tickets go to email: its booking id.
  int64_t Confirmed(int64_t customer, const std::string& seat, const std::string& email) {
    auto hold = TryHold(st_, customer, {seat});
    EXPECT_TRUE(hold.ok());
    IdempotencyKey key{customer, "k-" + seat, hold->hold_id};
    auto claim = store_->ClaimCheckoutKey(key, Millis(30'000));
    EXPECT_TRUE(claim.ok()) << claim.status().message();
    auto b = store_->StartCheckout(claim->lock(), hold->hold_id, kTtl, kMaxLifetime);
    EXPECT_TRUE(b.ok()) << b.status().message();
    const std::string session = "ses_" + seat;
    EXPECT_TRUE(store_
                    ->FinishCheckout(claim->lock(), session, "https://pay/" + session,
                                     clock_.Now() + Millis(60'000), 201, "{}", email)
                    .value());
    EXPECT_EQ(store_
                  ->SettlePayment(PaymentReport{"pay_" + seat, session, std::to_string(b->id), true,
                                                b->amount.amount, b->amount.currency})
                  .value(),
              Settlement::kConfirmed);
    return b->id;
  }
  std::unique_ptr<Mailer> NewMailer(Store::Database db) {
    return std::make_unique<Mailer>(db.outbox, db.store, &transport_, kTicketSecret,
                                    MailSettings{"tickets@cinema.example", "https://box.example"},
                                    MailerOptions{}, &metrics_, &clock_);
  }
  // The database of the showtime st_ (on shards, its shard: the mailer runs per database).
  Store::Database DatabaseOfShowtime() {
    for (const Store::Database& db : store_->Databases()) {
      if (db.store->GetShowtime(st_).ok()) return db;
    }
    ADD_FAILURE() << "no database has showtime " << st_;
    return {};
  }

  ScriptedTransport transport_;
  Metrics metrics_;
};

TEST_P(MailerTest, EachEventSendsItsMailOnceAndBadAddressesArePassedOver) {
  st_ = MakePricedShowtime();
  Confirmed(1, "E1", "ana@example.com");
  Confirmed(2, "E2", "bounce@example.com");
  Confirmed(3, "E3", "");  // no address: no mail
  Confirmed(4, "E4", "bo@example.org");
  const Store::Database db = DatabaseOfShowtime();
  auto mailer = NewMailer(db);
  auto sent = mailer->RunOnce();
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  EXPECT_EQ(sent.value(), 2);
  auto mails = transport_.Sent();
  ASSERT_EQ(mails.size(), 2u);
  EXPECT_EQ(mails[0].to, "ana@example.com");
  EXPECT_NE(mails[0].data.find("\r\nTo: <ana@example.com>\r\n"), std::string::npos);
  EXPECT_NE(mails[0].data.find("\r\nSubject: Your tickets: "), std::string::npos);
  EXPECT_NE(mails[0].message_id, mails[1].message_id);
  EXPECT_EQ(mails[1].to, "bo@example.org");
  EXPECT_NE(mails[1].data.find("\r\nTo: <bo@example.org>\r\n"), std::string::npos);
  EXPECT_NE(metrics_.Render().find("boxoffice_mail_failed_total 1"), std::string::npos);
  EXPECT_NE(metrics_.Render().find("boxoffice_mail_backlog 0"), std::string::npos);
  // Nothing again: the position is past them all.
  EXPECT_EQ(mailer->RunOnce().value(), 0);
  EXPECT_EQ(transport_.Sent().size(), 2u);
}

TEST_P(MailerTest, AServerThatIsDownKeepsThePositionAndIsAskedAgainAfterItsBackoff) {
  st_ = MakePricedShowtime();
  Confirmed(1, "E1", "ana@example.com");
  const Store::Database db = DatabaseOfShowtime();
  auto mailer = NewMailer(db);
  transport_.SetDown(true);
  EXPECT_EQ(mailer->RunOnce().status().code(), Code::kUnavailable);
  EXPECT_NE(metrics_.Render().find("boxoffice_mail_backlog 1"), std::string::npos);
  transport_.SetDown(false);
  // RunOnce ignores the backoff; the periodic rounds (Round) wait it out: simulated by
  // starting the mailer on the store's clock, which has not moved.
  mailer->Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(1'500));
  EXPECT_TRUE(transport_.Sent().empty()) << "the backoff had not passed on the store's clock";
  clock_.Advance(Mailer::kFirstRetry);
  for (int i = 0; i < 200 && transport_.Sent().empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  mailer->Stop();
  EXPECT_EQ(transport_.Sent().size(), 1u);
}

TEST_P(MailerTest, AMailerWithoutTheLeaseSendsNothing) {
  st_ = MakePricedShowtime();
  Confirmed(1, "E1", "ana@example.com");
  const Store::Database db = DatabaseOfShowtime();
  ASSERT_TRUE(
      db.outbox->AcquireLease(Mailer::kConsumer, "another-instance", Millis(60'000)).value());
  auto mailer = NewMailer(db);
  EXPECT_EQ(mailer->RunOnce().value(), 0);
  EXPECT_TRUE(transport_.Sent().empty());
  auto pending = db.outbox->PendingMail(10);
  ASSERT_EQ(pending->size(), 1u);
  EXPECT_EQ(
      db.outbox->MarkMailDone(pending->front().id, Mailer::kConsumer, "not-the-holder").code(),
      Code::kNotActive);
  EXPECT_EQ(db.outbox->CountPendingMail().value(), 1);
  clock_.Advance(Millis(60'001));  // the other instance died: its lease ran out
  EXPECT_EQ(mailer->RunOnce().value(), 1);
}

TEST_P(MailerTest, MailTooOldWhenItsTurnComesIsDroppedUnsentAndCounted) {
  NewShowtime later = PricedLayout();  // on sale for longer than the mail's maximum age
  later.starts_at = kStart + Millis(7 * 86'400'000);
  st_ = store_->CreateShowtime(later).value();
  Confirmed(1, "E1", "ana@example.com");
  const Store::Database db = DatabaseOfShowtime();
  auto mailer = NewMailer(db);
  clock_.Advance(MailerOptions{}.max_age + Millis(1));  // the mail server was down all day
  Confirmed(2, "E2", "bo@example.org");
  auto sent = mailer->RunOnce();
  ASSERT_TRUE(sent.ok()) << sent.status().message();
  EXPECT_EQ(sent.value(), 1);
  ASSERT_EQ(transport_.Sent().size(), 1u);
  EXPECT_EQ(transport_.Sent()[0].to, "bo@example.org");
  EXPECT_NE(metrics_.Render().find("boxoffice_mail_expired_total 1"), std::string::npos);
  EXPECT_EQ(db.outbox->CountPendingMail().value(), 0);
}

TEST_P(MailerTest, ManyRefusalsInARowStopTheRoundAsIfTheServerRefusedEveryMessage) {
  st_ = MakePricedShowtime();
  for (int i = 1; i <= Mailer::kMaxRefusedInARow + 1; ++i) {
    Confirmed(i, "E" + std::to_string(i), "bounce" + std::to_string(i) + "@example.com");
  }
  Confirmed(20, "F1", "ana@example.com");
  const Store::Database db = DatabaseOfShowtime();
  auto mailer = NewMailer(db);
  EXPECT_EQ(mailer->RunOnce().status().code(), Code::kInvalid);
  EXPECT_EQ(db.outbox->CountPendingMail().value(), 3) << "the fifth refusal is kept";
  EXPECT_TRUE(transport_.Sent().empty());
  EXPECT_EQ(mailer->RunOnce().value(), 1);  // the next round: two refusals, then a mail
  EXPECT_EQ(transport_.Sent().size(), 1u);
  EXPECT_EQ(db.outbox->CountPendingMail().value(), 0);
}

// Outbox ids are handed out at insert, not at commit: an event whose transaction commits
// after a later id's must still be mailed (PostgreSQL; SQLite's one writer commits in order).
TEST_P(MailerTest, AnEventCommittedAfterALaterOneIsStillMailed) {
  if (GetParam() != Engine::kPostgres) GTEST_SKIP() << "one database that commits out of id order";
  st_ = MakePricedShowtime();
  const int64_t first = Confirmed(1, "E1", "ana@example.com");
  const Store::Database db = DatabaseOfShowtime();
  auto mailer = NewMailer(db);
  ASSERT_EQ(mailer->RunOnce().value(), 1);
  // A transaction that takes an outbox id and stays open (a slow settlement) …
  PGconn* slow = PQconnectdb(pg_url_.c_str());
  ASSERT_EQ(PQstatus(slow), CONNECTION_OK);
  auto exec = [&](const std::string& sql) {
    PGresult* r = PQexec(slow, sql.c_str());
    EXPECT_EQ(PQresultStatus(r), PGRES_COMMAND_OK) << PQerrorMessage(slow);
    PQclear(r);
  };
  exec("BEGIN");
  exec(
      "INSERT INTO outbox (event_id, type, key, payload, created_at) VALUES"
      " (gen_random_uuid(), 'BookingRefunded', '" +
      std::to_string(first) + "', '{}', to_timestamp(" + std::to_string(ToEpochMs(clock_.Now())) +
      " / 1000.0))");  // (written at the test's time: not older than the mail's maximum age)
  // … while a later one commits and is mailed.
  Confirmed(2, "E2", "bo@example.org");
  ASSERT_EQ(mailer->RunOnce().value(), 1);
  exec("COMMIT");
  PQfinish(slow);
  auto late = mailer->RunOnce();
  ASSERT_TRUE(late.ok()) << late.status().message();
  EXPECT_EQ(late.value(), 1) << "the event that committed late was passed over";
  ASSERT_EQ(transport_.Sent().size(), 3u);
  EXPECT_EQ(transport_.Sent()[2].to, "ana@example.com");
}

INSTANTIATE_TEST_SUITE_P(Engines, MailerTest, AllEngines(), EngineName);

}  // namespace
}  // namespace boxoffice
