// The functions of ours plan their statements once per connection (migration 0034,
// plan_cache_mode = force_generic_plan), and a plan made without the parameters' values
// must still find every row by key:
//  * every PL/pgSQL function of ours carries the setting (a CREATE OR REPLACE that forgets
//    it drops it silently);
//  * a purchase through the batched paths (hold, checkout's begin and finish, the payment's
//    confirmation, an extension, a release) and through the general ones, on a schema the
//    size of a chain's busy day, reads no table and no index whole: auto_explain reports
//    each statement's plan, nested ones included, to the store's own connections, whose
//    notices the store logs.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "core/log.h"
#include "store/pg_store.h"
#include "store/shards.h"
#include "store/store_fixture.h"
#include "support/loop_thread.h"

namespace boxoffice {
namespace {

using testing::LoopThread;

class GenericPlans : public StoreContract {
 protected:
  // The rows of a query on the test's schema, each as its columns joined by '|'.
  std::vector<std::string> Query(const std::string& sql) {
    std::vector<std::string> rows;
    PGconn* conn = PQconnectdb(pg_url_.c_str());
    PGresult* r = PQexec(conn, sql.c_str());
    EXPECT_EQ(PQresultStatus(r), PGRES_TUPLES_OK) << PQerrorMessage(conn);
    for (int i = 0; i < PQntuples(r); ++i) {
      std::string row;
      for (int j = 0; j < PQnfields(r); ++j) row += (j ? "|" : "") + std::string(PQgetvalue(r, i, j));
      rows.push_back(row);
    }
    PQclear(r);
    PQfinish(conn);
    return rows;
  }
};

TEST_P(GenericPlans, EveryFunctionOfOursPlansItsStatementsGenerically) {
  const auto functions = Query(
      "SELECT p.oid::regprocedure::text, COALESCE(array_to_string(p.proconfig, ','), '')"
      "  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang"
      " WHERE p.pronamespace = to_regnamespace(current_schema())"
      "   AND p.proname LIKE 'boxoffice\\_%' AND l.lanname = 'plpgsql'"
      "   AND p.prorettype <> 'trigger'::regtype AND p.proname <> 'boxoffice_assert'"
      " ORDER BY 1");
  // The entry points the service calls, and the helpers they call, at least.
  EXPECT_GE(functions.size(), 11u);
  for (const std::string& f : functions) {
    EXPECT_NE(f.find("|plan_cache_mode=force_generic_plan"), std::string::npos) << f;
  }
}

TEST_P(GenericPlans, APurchaseFindsEveryRowByKeyOnAChainSizedSchema) {
  // A chain's busy day: 2,000 more showtimes like the first (with its prices), 200 of them
  // with its 300 seats, and 20,000 holds, bookings, payments and keys of sales before.
  const int64_t first = MakeShowtime({{"A", 30}, {"B", 30}, {"C", 30}, {"D", 30}, {"E", 30},
                                      {"F", 30}, {"G", 30}, {"H", 30}, {"J", 30}, {"K", 30}});
  const std::string f = std::to_string(first);
  RawSql(
      "DO $$ DECLARE cols TEXT; BEGIN"
      "  SELECT string_agg(quote_ident(column_name), ', ') INTO cols"
      "    FROM information_schema.columns"
      "   WHERE table_schema = current_schema() AND table_name = 'showtime'"
      "     AND column_name <> 'showtime_id';"
      "  EXECUTE format('INSERT INTO showtime (%1$s) SELECT %1$s FROM showtime"
      "                  CROSS JOIN generate_series(1, 2000) WHERE showtime_id = " + f + "', cols);"
      "END $$;"
      "INSERT INTO show_seat (showtime_id, seat_code, status, row_label, seat_number, seat_order,"
      "                       category, accessible, aisle_after)"
      "SELECT t.showtime_id, s.seat_code, 'AVAILABLE', s.row_label, s.seat_number, s.seat_order,"
      "       s.category, s.accessible, s.aisle_after"
      "  FROM show_seat s CROSS JOIN (SELECT showtime_id FROM showtime WHERE showtime_id > " + f +
      "                                ORDER BY showtime_id LIMIT 200) t"
      " WHERE s.showtime_id = " + f + ";"
      "INSERT INTO price (showtime_id, category, amount, currency)"
      "SELECT t.showtime_id, p.category, p.amount, p.currency"
      "  FROM price p CROSS JOIN (SELECT showtime_id FROM showtime WHERE showtime_id > " + f +
      ") t WHERE p.showtime_id = " + f + ";"
      "INSERT INTO seat_hold (hold_id, showtime_id, customer_id, seats, status, created_at,"
      "                       expires_at)"
      "SELECT gen_random_uuid(), " + f + " + 1 + g % 200, 1000000 + g, ARRAY['A1'], 'RELEASED',"
      "       now(), now()"
      "  FROM generate_series(1, 20000) g;"
      "INSERT INTO booking (hold_id, showtime_id, customer_id, seats, status, amount, currency,"
      "                     created_at, updated_at)"
      "SELECT hold_id, showtime_id, customer_id, seats, 'FAILED', 1250, 'EUR', created_at,"
      "       created_at FROM seat_hold;"
      "INSERT INTO payment (payment_id, session_id, booking_id, status, amount, currency,"
      "                     received_at)"
      "SELECT 'before_' || booking_id, 'ses_before', booking_id, 'FAILED', 1250, 'EUR', now()"
      "  FROM booking;"
      "INSERT INTO idempotency_key (customer_id, key, fingerprint, state, booking_id,"
      "                             response_status, response_body, created_at, updated_at)"
      "SELECT customer_id, 'before', 'f', 'FINISHED', booking_id, 201, '{}', created_at,"
      "       created_at FROM booking;"
      "ANALYZE");
  const int64_t showtime = MakeShowtime({{"A", 20}, {"B", 20}});

  // The same schema through connections that report every statement's plan as a notice.
  PgOptions o;
  o.url = pg_url_ +
          "%20-csession_preload_libraries%3Dauto_explain%20-cauto_explain.log_min_duration%3D0"
          "%20-cauto_explain.log_nested_statements%3Don%20-cauto_explain.log_level%3Dnotice";
  o.test_clock = &clock_;
  auto explained = std::make_unique<PgStore>(o);
  auto loop = std::make_unique<LoopThread>();

  // The purchase, with stderr captured around it (and given back however it ends).
  ::testing::internal::CaptureStderr();
  [&] {
    constexpr int kCustomers = 10;
    std::vector<io::asio::awaitable<Result<Hold>>> asked;
    for (int i = 0; i < kCustomers; ++i) {
      const std::string row(1, i < 5 ? 'A' : 'B');
      const int n = (i % 5) * 4 + 1;
      asked.push_back(explained->HoldSeatsAsync(
          HoldRequest{NewHoldId(showtime), showtime, 100 + i,
                      {row + std::to_string(n), row + std::to_string(n + 1)}, kTtl}));
    }
    auto holds = loop->RunAll(std::move(asked));
    std::vector<Store::CheckoutBegun> begun(kCustomers - 2);
    std::vector<io::asio::awaitable<Result<bool>>> begins;
    for (int i = 0; i < kCustomers; ++i) {
      ASSERT_TRUE(holds[i].ok()) << holds[i].status().message();
      if (i >= kCustomers - 2) continue;
      begins.push_back(explained->TryBeginCheckoutAsync(
          IdempotencyKey{100 + i, "k" + std::to_string(i), holds[i]->hold_id}, holds[i]->hold_id,
          kLease, kTtl, kMaxLifetime, &begun[i]));
    }
    auto begins_done = loop->RunAll(std::move(begins));
    std::vector<io::asio::awaitable<Result<bool>>> finishes;
    for (size_t i = 0; i < begun.size(); ++i) {
      ASSERT_TRUE(begins_done[i].ok() && begins_done[i].value()) << i;
      const std::string session = "ses_" + std::to_string(i);
      finishes.push_back(explained->FinishCheckoutAsync(
          begun[i].record.lock(), session, "https://pay/" + session,
          clock_.Now() + Millis(5 * 60'000), 201, "{}", "c@example.org"));
    }
    for (auto& done : loop->RunAll(std::move(finishes))) ASSERT_TRUE(done.ok() && done.value());
    std::vector<Booking> confirmed(begun.size());
    std::vector<io::asio::awaitable<Result<std::optional<Settlement>>>> confirms;
    for (size_t i = 0; i < begun.size(); ++i) {
      const Booking& b = begun[i].booking;
      confirms.push_back(explained->TryConfirmPaymentAsync(
          PaymentReport{"pay_" + std::to_string(i), "ses_" + std::to_string(i),
                        std::to_string(b.id), true, b.amount.amount, b.amount.currency},
          &confirmed[i]));
    }
    for (auto& done : loop->RunAll(std::move(confirms))) {
      ASSERT_TRUE(done.ok() && done.value() == Settlement::kConfirmed);
    }
    const std::string extended = holds[kCustomers - 2]->hold_id;
    const std::string released = holds[kCustomers - 1]->hold_id;
    ASSERT_TRUE(loop->Run(explained->HoldActionAsync(Store::HoldAction::kExtend, extended,
                                                     100 + kCustomers - 2, kTtl, kMaxLifetime))
                    .ok());
    ASSERT_TRUE(loop->Run(explained->HoldActionAsync(Store::HoldAction::kRelease, released,
                                                     100 + kCustomers - 1, kTtl, kMaxLifetime))
                    .ok());
    // The general path, as a purchase takes it when a phase cannot go in one step, and the
    // reads around it.
    auto general = explained->HoldSeats(
        HoldRequest{NewHoldId(showtime), showtime, 300, {"B19", "B20"}, kTtl});
    ASSERT_TRUE(general.ok()) << general.status().message();
    ASSERT_TRUE(explained->ExtendHold(general->hold_id, 300, kTtl, kMaxLifetime).ok());
    auto claim = explained->ClaimCheckoutKey(IdempotencyKey{300, "g", general->hold_id}, kLease);
    ASSERT_TRUE(claim.ok()) << claim.status().message();
    auto booking = explained->StartCheckout(claim->lock(), general->hold_id, kTtl, kMaxLifetime);
    ASSERT_TRUE(booking.ok()) << booking.status().message();
    ASSERT_TRUE(explained
                    ->FinishCheckout(claim->lock(), "ses_g", "https://pay/ses_g",
                                     clock_.Now() + Millis(5 * 60'000), 201, "{}", "g@example.org")
                    .value());
    Booking paid;
    ASSERT_EQ(explained
                  ->SettlePayment(PaymentReport{"pay_g", "ses_g", std::to_string(booking->id), true,
                                                booking->amount.amount, booking->amount.currency},
                                  &paid)
                  .value(),
              Settlement::kConfirmed);
    ASSERT_TRUE(explained->GetBooking(booking->id, 300).ok());
    ASSERT_TRUE(explained->GetSeatMap(showtime).ok());
    auto dropped = explained->HoldSeats(
        HoldRequest{NewHoldId(showtime), showtime, 301, {"A20"}, kTtl});
    ASSERT_TRUE(dropped.ok());
    ASSERT_TRUE(explained->ReleaseHold(dropped->hold_id, 301).ok());
  }();
  loop.reset();
  explained.reset();
  FlushLogs();
  const std::string plans = ::testing::internal::GetCapturedStderr();
  if (HasFatalFailure()) return;

  // Each phase's function was run and its plans reported...
  for (const char* function :
       {"boxoffice_hold_picks", "boxoffice_checkout_begin_batch", "boxoffice_checkout_finish_batch",
        "boxoffice_settle_confirm_batch", "boxoffice_extend_hold", "boxoffice_release_hold"}) {
    EXPECT_NE(plans.find(function), std::string::npos) << function << " reported no plan";
  }
  // ... and every scan of the sale's tables went through an index by a condition: none
  // read a table, or an index, whole (a partial index's rows grow with the sale).
  const std::regex scan(
      R"((Seq Scan|Index Scan|Index Only Scan|Bitmap Index Scan)(?: Backward)?(?: using (\S+))? on (\S+))");
  const std::set<std::string> sale = {"showtime", "show_seat",       "seat_hold", "booking",
                                      "payment",  "idempotency_key", "price",     "outbox"};
  int keyed = 0;
  std::istringstream lines(plans);
  for (std::string line; std::getline(lines, line);) {
    const auto entry = nlohmann::json::parse(line, nullptr, false);
    if (!entry.is_object() || entry.value("msg", "") != "postgresql notice") continue;
    const std::string plan = entry.value("detail", "");
    std::vector<std::string> rows;
    std::istringstream in(plan);
    for (std::string row; std::getline(in, row);) rows.push_back(row);
    for (size_t i = 0; i < rows.size(); ++i) {
      std::smatch m;
      if (!std::regex_search(rows[i], m, scan)) continue;
      const std::string kind = m[1], index = m[2], target = m[3];
      // (A bitmap index scan names its index where the others name their table.)
      if (kind != "Bitmap Index Scan" && !sale.count(target)) continue;
      bool cond = false;
      const size_t depth = rows[i].find_first_not_of(" ->");
      for (size_t j = i + 1; j < rows.size(); ++j) {
        const size_t d = rows[j].find_first_not_of(" ->");
        if (d <= depth || rows[j].find("->") != std::string::npos) break;
        if (rows[j].find("Index Cond:") != std::string::npos) cond = true;
      }
      if (kind == "Seq Scan" || !cond) {
        ADD_FAILURE() << kind << (index.empty() ? "" : " using " + index) << " on " << target
                      << " with no index condition:\n" << plan;
      } else {
        ++keyed;
      }
    }
  }
  EXPECT_GT(keyed, 20) << "the plans were reported";
}

INSTANTIATE_TEST_SUITE_P(Postgres, GenericPlans, ::testing::Values(testing::Engine::kPostgres),
                         EngineName);

}  // namespace
}  // namespace boxoffice
