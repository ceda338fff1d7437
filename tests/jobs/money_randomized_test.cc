// A randomized run of the whole money path on both stores: four threads interleave holds,
// checkouts (through CheckoutService, replays included), callbacks that come normally,
// twice, late, never, or FAILED, cancellations, and expiries driven by a shared
// ManualClock, while the refund worker and the reconciler run in between. The gateway is a
// simulation in this process that fails now and then (sessions refused, refund answers
// lost). At the end it checks the invariants of DESIGN.md:
//   * no seat booked twice: booked seats are exactly the confirmed bookings' seats;
//   * every succeeded payment ends CONFIRMED (as its booking's payment) or refunded;
//   * exactly one BookingConfirmed event per confirmed booking, none for others;
//   * no payment refunded twice, no failed payment refunded.
// BOXOFFICE_RANDOM_ROUNDS sets the iterations per thread (default 300), BOXOFFICE_RANDOM_SEED
// the seed (default: random, printed). The seed fixes each thread's choices; how the threads
// interleave still varies from run to run, which is the point.
#include <gtest/gtest.h>

#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "jobs/reconciler.h"
#include "jobs/refund_worker.h"
#include "payments/checkout.h"
#include "store/store_fixture.h"

namespace boxoffice {
namespace {

// The gateway as the services see it, with a ledger of what it did.
class SimGateway final : public Gateway {
 public:
  explicit SimGateway(const Clock* clock, uint64_t seed) : clock_(clock), rng_(seed) {}
  // minimal: a session is opened with only its id and url stated, as API.md's gateway may.
  void set_minimal(bool minimal) { minimal_ = minimal; }

  Result<GatewaySession> CreateSession(int64_t amount, const std::string& currency,
                                       const std::string& reference, const std::string&,
                                       const std::string&, Instant expires_at, const std::string& key) override {
    std::lock_guard lock(mu_);
    if (auto it = session_by_key_.find(key); it != session_by_key_.end()) {
      return Described(it->second);
    }
    if (Roll(10)) return Status(Code::kUnavailable, "simulated outage");
    const std::string id = "ses_" + std::to_string(sessions_.size() + 1);
    sessions_[id] = SimSession{reference, amount, currency, expires_at, "OPEN", ""};
    session_by_key_[key] = id;
    return Described(id);
  }

  Result<GatewaySessionStatus> GetSession(const std::string& session_id) override {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return Status(Code::kNotFound, "no session");
    const SimSession& s = it->second;
    const bool expired = s.status == "OPEN" && s.expires_at < clock_->Now();
    return GatewaySessionStatus{expired ? "EXPIRED" : s.status, s.payment_id};
  }

  Result<std::string> Refund(const std::string& payment_id, int64_t amount,
                             const std::string& key) override {
    std::lock_guard lock(mu_);
    if (Roll(15)) return Status(Code::kUnavailable, "simulated outage");
    auto& refund = refunds_[key];
    refund.payment_id = payment_id;
    refund.amount = amount;
    // Sometimes the refund is made but the answer is lost: the worker must retry with the
    // same key, and the key must keep it one refund.
    if (Roll(15)) return Status(Code::kUnavailable, "answer lost");
    return "gw_" + key;
  }

  // The customer pays (or fails to) at the gateway; the report a callback would carry.
  std::optional<PaymentReport> Pay(const std::string& session_id, bool succeeded) {
    std::lock_guard lock(mu_);
    auto it = sessions_.find(session_id);
    if (it == sessions_.end()) return std::nullopt;
    SimSession& s = it->second;
    if (s.status != "OPEN" || s.expires_at < clock_->Now()) return std::nullopt;
    s.status = succeeded ? "PAID" : "FAILED";
    s.payment_id = "pay_" + std::to_string(payments_.size() + 1);
    payments_[s.payment_id] = Payment{s.reference, s.amount, succeeded};
    return PaymentReport{s.payment_id, session_id, s.reference, succeeded, s.amount, s.currency};
  }
  // A payment for something we never sold (API.md: recorded and refunded).
  PaymentReport StrayPayment() {
    std::lock_guard lock(mu_);
    const std::string id = "pay_" + std::to_string(payments_.size() + 1);
    payments_[id] = Payment{"999999999", 500, true};
    return PaymentReport{id, "", "999999999", true, 500, "EUR"};
  }

  struct Payment {
    std::string reference;
    int64_t amount = 0;
    bool succeeded = false;
  };
  struct RefundMade {
    std::string payment_id;
    int64_t amount = 0;
  };
  std::map<std::string, Payment> payments() {
    std::lock_guard lock(mu_);
    return payments_;
  }
  std::map<std::string, RefundMade> refunds() {
    std::lock_guard lock(mu_);
    return refunds_;
  }
  size_t sessions() {
    std::lock_guard lock(mu_);
    return sessions_.size();
  }

 private:
  struct SimSession {
    std::string reference;
    int64_t amount = 0;
    std::string currency;
    Instant expires_at;
    std::string status;
    std::string payment_id;
  };
  // A session as the gateway describes it when asked to open it (mu_ held).
  GatewaySession Described(const std::string& id) const {
    const SimSession& s = sessions_.at(id);
    const bool expired = s.status == "OPEN" && s.expires_at < clock_->Now();
    if (minimal_) return GatewaySession{id, "https://pay/" + id, {}, "", "", "", {}};
    return GatewaySession{id,          "https://pay/" + id,          s.amount,    s.currency,
                          s.reference, expired ? "EXPIRED" : s.status, s.expires_at};
  }
  bool Roll(int percent) { return std::uniform_int_distribution<int>(1, 100)(rng_) <= percent; }

  const Clock* clock_;
  bool minimal_ = false;
  std::mutex mu_;
  std::mt19937_64 rng_;
  std::map<std::string, SimSession> sessions_;
  std::map<std::string, std::string> session_by_key_;
  std::map<std::string, Payment> payments_;
  std::map<std::string, RefundMade> refunds_;  // by idempotency key
};

int EnvInt(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : fallback;
}

class MoneyRandomized : public StoreContract {};

// API.md's gateway need state only a new session's id and url: checkout then asks where it
// stands (GET /v1/sessions/{id}) and sends the customer to it while it is OPEN. (Every such
// checkout once failed: the missing amount counted as a session of another booking.)
TEST_P(MoneyRandomized, AGatewayThatStatesOnlyTheSessionsIdAndUrl) {
  const int64_t showtime = MakePricedShowtime();
  Metrics metrics;
  SimGateway gateway(&clock_, 1);
  gateway.set_minimal(true);
  CheckoutService checkout(store_.get(), &gateway, CheckoutOptions{}, &metrics);
  for (int attempt = 0; attempt < 20; ++attempt) {  // (the simulated gateway fails 10 % of calls)
    auto hold = TryHold(showtime, 100 + attempt, {"E" + std::to_string(1 + attempt % 10)});
    ASSERT_TRUE(hold.ok()) << hold.status().message();
    auto answer = checkout.Checkout(100 + attempt, "k", hold->hold_id);
    if (!answer.ok() && answer.status().message().find("simulated outage") != std::string::npos) {
      ASSERT_TRUE(store_->ReleaseHold(hold->hold_id, 100 + attempt).ok());
      continue;
    }
    ASSERT_TRUE(answer.ok()) << answer.status().message();
    EXPECT_EQ(answer->status, 201);
    return;
  }
  FAIL() << "the simulated gateway never answered";
}

TEST_P(MoneyRandomized, InterleavedPurchasesKeepEveryInvariant) {
  const int rounds = EnvInt("BOXOFFICE_RANDOM_ROUNDS", 300);
  const char* seed_env = std::getenv("BOXOFFICE_RANDOM_SEED");
  const uint64_t seed = seed_env ? std::strtoull(seed_env, nullptr, 10) : std::random_device()();
  std::cout << "seed " << seed << " (BOXOFFICE_RANDOM_SEED to repeat)\n";
  // Showtimes of 20 seats, sold one after another: the threads crowd two at a time, so
  // holds collide often, and a new pair opens every 30 rounds.
  std::vector<int64_t> showtimes;
  for (int i = 0; i <= rounds / 30 + 1; ++i) showtimes.push_back(MakePricedShowtime());
  const std::vector<std::string> all_seats = {"E1", "E2", "E3",  "E4", "E5", "E6", "E7",
                                              "E8", "E9", "E10", "F1", "F2", "F3", "F4",
                                              "F5", "F6", "F7",  "F8", "F9", "F10"};
  Metrics metrics;
  SimGateway gateway(&clock_, seed);
  CheckoutOptions options;
  options.key_lease = Millis(5'000);
  CheckoutService checkout(store_.get(), &gateway, options, &metrics);
  RefundWorker refunds(store_.get(), &gateway, Millis(1'000), 50, &metrics);
  ReconcilerOptions reconcile;
  PaymentService settlement(store_.get(), &metrics, nullptr);
  Reconciler reconciler(store_.get(), &gateway, &settlement, reconcile, &metrics);

  std::mutex mu;
  std::map<std::string, int> ops;          // operations by kind
  std::map<int64_t, int64_t> customer_of;  // booking → customer
  std::vector<PaymentReport> late;         // callbacks still on their way
  auto count = [&](const std::string& kind) {
    std::lock_guard lock(mu);
    ++ops[kind];
  };
  auto deliver = [&](const PaymentReport& report, const std::string& kind) {
    auto r = store_->SettlePayment(report);
    ASSERT_TRUE(r.ok()) << r.status().message();
    count(kind);
    count(std::string("settled ") + SettlementName(r.value()));
  };

  auto worker = [&](int thread) {
    std::mt19937_64 rng(seed + static_cast<uint64_t>(thread) * 7919);
    auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    for (int i = 0; i < rounds; ++i) {
      if (i % 25 == 24) {
        // Time passes (holds and sessions expire), late callbacks arrive, the background
        // jobs run.
        clock_.Advance(Millis(pick(12 * 60'000)));
        count("clock advanced");
        std::vector<PaymentReport> arriving;
        {
          std::lock_guard lock(mu);
          arriving.swap(late);
        }
        for (const auto& report : arriving) deliver(report, "callback late");
        ASSERT_TRUE(refunds.RunOnce().ok());
        count("refund round");
        ASSERT_TRUE(reconciler.RunOnce().ok());
        count("reconcile round");
      }
      const int64_t customer = 1 + pick(40);
      std::vector<std::string> seats;
      for (int n = 1 + pick(3); n > 0; --n) seats.push_back(all_seats[pick(20)]);
      std::sort(seats.begin(), seats.end());
      seats.erase(std::unique(seats.begin(), seats.end()), seats.end());
      const int64_t st = showtimes[i / 30 + pick(2)];
      auto hold = TryHold(st, customer, seats);
      count(hold.ok() ? "hold won" : "hold lost");
      if (!hold.ok()) continue;
      const int action = pick(100);
      if (action < 10) {
        ASSERT_TRUE(store_->ReleaseHold(hold->hold_id, customer).ok());
        count("cancel");
        continue;
      }
      if (action < 20) {
        count("walk away");  // the hold expires by itself
        continue;
      }
      for (int attempt = 0; attempt < 2; ++attempt) {
        const std::string key = "key-" + NewUuid();
        auto r = checkout.Checkout(customer, key, hold->hold_id);
        if (!r.ok()) {
          count(std::string("checkout refused ") + CodeName(r.status().code()));
          break;
        }
        count("checkout");
        if (pick(100) < 20) {
          auto again = checkout.Checkout(customer, key, hold->hold_id);
          ASSERT_TRUE(again.ok());
          EXPECT_TRUE(again->replayed);
          EXPECT_EQ(again->body, r->body);
          count("checkout replayed");
        }
        const auto body = nlohmann::json::parse(r->body);
        const int64_t booking_id = body["bookingId"];
        {
          std::lock_guard lock(mu);
          customer_of[booking_id] = customer;
        }
        const std::string session = body["payment"]["sessionId"];
        const int fate = pick(100);
        if (fate < 10) {
          count("never paid");  // the session expires; the reconciler abandons it
          break;
        }
        const bool succeeded = fate >= 25;
        auto report = gateway.Pay(session, succeeded);
        if (!report) {
          count("session expired before payment");
          break;
        }
        if (!succeeded) {
          deliver(*report, "callback failed payment");
          continue;  // the hold is kept: check out again with a new key
        }
        if (fate < 45) {
          deliver(*report, "callback");
        } else if (fate < 60) {
          deliver(*report, "callback twice");
          deliver(*report, "callback twice");
        } else if (fate < 80) {
          std::lock_guard lock(mu);
          late.push_back(*report);
          ++ops["callback delayed"];
        } else {
          count("callback never");  // the reconciler asks the gateway
        }
        break;
      }
      if (pick(100) < 2) deliver(gateway.StrayPayment(), "callback unknown reference");
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();

  // Everything comes to rest: late callbacks arrive, every session and hold ends, the
  // reconciler settles what is still pending, refunds go through however often they fail.
  clock_.Advance(Millis(3'600'000));
  for (const auto& report : late) deliver(report, "callback late");
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(reconciler.RunOnce().ok());
  // Each failed refund waits its own backoff, so time moves by the longest one per round.
  auto backlog = [&] {
    auto b = store_->CountRefundBacklog();
    return b.ok() ? b->retrying + b->refused : -1;
  };
  for (int i = 0; i < 200 && backlog() != 0; ++i) {
    ASSERT_TRUE(refunds.RunOnce().ok());
    clock_.Advance(RefundWorker::kMaxRetry);
  }
  ASSERT_EQ(backlog(), 0);

  // The invariants.
  std::map<int64_t, Booking> bookings;
  for (const auto& [id, customer] : customer_of) {
    auto b = store_->GetBooking(id, customer);
    ASSERT_TRUE(b.ok());
    EXPECT_NE(b->status, BookingStatus::kPending) << "booking " << id << " never settled";
    bookings[id] = b.value();
  }
  std::map<std::pair<int64_t, std::string>, int64_t> booked_by;  // seat → confirmed booking
  int violations = 0;
  for (const auto& [id, b] : bookings) {
    if (b.status != BookingStatus::kConfirmed) continue;
    for (const auto& seat : b.seats) {
      if (!booked_by.emplace(std::pair(b.showtime_id, seat), id).second) {
        ++violations;
        ADD_FAILURE() << "seat " << seat << " sold to bookings "
                      << booked_by[std::pair(b.showtime_id, seat)] << " and " << id;
      }
    }
  }
  int booked_seats = 0;
  for (int64_t st : showtimes) {
    const auto owners = store_->GetSeatOwners(st);
    ASSERT_TRUE(owners.ok());
    for (const auto& owner : owners.value()) {
      const bool booked = owner.status == SeatStatus::kBooked;
      booked_seats += booked;
      if (booked != (booked_by.count(std::pair(st, owner.code)) == 1)) {
        ++violations;
        ADD_FAILURE() << "seat " << owner.code << " of showtime " << st << " booked=" << booked
                      << " disagrees with the confirmed bookings";
      }
    }
  }
  std::map<std::string, int> refunds_of;  // payment → refunds made at the gateway
  const auto refunds_made = gateway.refunds();
  const auto payments = gateway.payments();
  for (const auto& [key, refund] : refunds_made) ++refunds_of[refund.payment_id];
  for (const auto& [payment_id, p] : payments) {
    const int refunded = refunds_of[payment_id];
    if (refunded > 1) {
      ++violations;
      ADD_FAILURE() << payment_id << " refunded " << refunded << " times";
    }
    if (!p.succeeded) {
      if (refunded != 0) {
        ++violations;
        ADD_FAILURE() << "failed payment " << payment_id << " was refunded";
      }
      continue;
    }
    auto b = bookings.find(std::atoll(p.reference.c_str()));
    const bool confirmed_by_it = b != bookings.end() &&
                                 b->second.status == BookingStatus::kConfirmed &&
                                 b->second.payment_id == payment_id;
    if (confirmed_by_it == (refunded == 1)) {
      ++violations;
      ADD_FAILURE() << "succeeded payment " << payment_id << " for " << p.reference
                    << ": confirmed=" << confirmed_by_it << " refunds=" << refunded;
    }
    if (refunded == 1 && b != bookings.end() && b->second.payment_id == payment_id &&
        b->second.status != BookingStatus::kRefunded) {
      ++violations;
      ADD_FAILURE() << "booking " << b->first << " refunded but "
                    << BookingStatusName(b->second.status);
    }
  }
  std::map<int64_t, int> confirmed_events;
  const auto events = PendingEventsOfAll(1'000'000);
  ASSERT_TRUE(events.ok());
  for (const auto& e : events.value()) {
    if (e.type == "BookingConfirmed") ++confirmed_events[std::atoll(e.key.c_str())];
  }
  for (const auto& [id, b] : bookings) {
    const int want = b.status == BookingStatus::kConfirmed ? 1 : 0;
    if (confirmed_events[id] != want) {
      ++violations;
      ADD_FAILURE() << "booking " << id << " (" << BookingStatusName(b.status) << ") has "
                    << confirmed_events[id] << " BookingConfirmed events";
    }
  }

  // The database's own audit agrees (what `boxoffice audit` checks after a benchmark).
  auto audit = store_->Audit();
  ASSERT_TRUE(audit.ok());
  EXPECT_EQ(audit->violations(), 0);
  EXPECT_EQ(audit->seats_booked, booked_seats);
  EXPECT_EQ(audit->refunds_pending, 0);

  int total = 0;
  std::cout << "operations by kind:\n";
  for (const auto& [kind, n] : ops) {
    std::cout << "  " << kind << ": " << n << "\n";
    if (kind.rfind("settled ", 0) != 0) total += n;
  }
  std::map<BookingStatus, int> by_status;
  for (const auto& [id, b] : bookings) ++by_status[b.status];
  std::cout << "operations: " << total << "; bookings: " << bookings.size() << " (confirmed "
            << by_status[BookingStatus::kConfirmed] << ", failed "
            << by_status[BookingStatus::kFailed] << ", refunded "
            << by_status[BookingStatus::kRefunded] << "); seats booked " << booked_seats
            << "; gateway sessions " << gateway.sessions() << ", payments "
            << gateway.payments().size() << ", refunds " << gateway.refunds().size()
            << "; invariant violations " << violations << "\n";
  EXPECT_EQ(violations, 0);
  if (rounds >= 300) {
    EXPECT_GE(total, 1'000);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, MoneyRandomized,
                         ::testing::Values(Engine::kSqlite, Engine::kPostgres), EngineName);

}  // namespace
}  // namespace boxoffice
