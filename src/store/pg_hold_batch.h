// Holds on PostgreSQL: the statement that decides them (boxoffice_hold_picks, migration
// 0024: boxoffice_hold_batch of 0012 with the seat rules' picks and guards), how its rows
// become each request's Result, and the per-loop batcher that gathers a hot showtime's
// holds into one statement (store/pg_batcher.h, keyed by showtime).
//
// The function decides a batch's holds one after the other, in arrival order, each all or
// nothing, in one transaction with one round of row locks (the union of their seats, in
// seat-code order), and answers each with its own row. The blocking HoldSeats sends the
// same statement with one request: one rule, written once.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "store/pg_batcher.h"
#include "store/pg_common.h"
#include "store/pg_pipeline.h"
#include "store/store.h"

namespace boxoffice {

extern const Sql kHoldBatch;
// Which of the requested codes are seats of the showtime (to explain UNKNOWN_SEATS), and
// whether the showtime exists (when none is).
extern const Sql kExistingSeats;
extern const Sql kShowtimeExists;

// The parameters of kHoldBatch for requests of one showtime, in order. now: NULL for the
// database's clock, or epoch ms.
std::vector<Param> HoldBatchParams(const Param& now, const std::vector<const HoldRequest*>& batch);

// A request's row of kHoldBatch's result.
struct HoldRow {
  std::optional<Instant> created;  // set: held
  Instant expires;
  int64_t found = 0;  // codes that are seats of the showtime
  std::vector<std::string> taken;
  int64_t held_before = 0;            // the customer's live held seats before it
  size_t chosen = 0;                  // held: the pick that was, 1-based
  std::vector<std::string> stranded;  // a hand pick's seats it would leave alone
  bool closed = false;                // the showtime's sales have closed: nothing held
  bool cancelled = false;             // and it is because the showtime was cancelled
};
Result<std::vector<HoldRow>> ReadHoldRows(const PGresult* result, size_t expected);

// The request's outcome from its row; nullopt when some codes are not seats of the showtime
// (the caller reads kExistingSeats, and kShowtimeExists when none is, then
// ExplainUnknownSeats).
std::optional<Result<Hold>> HoldOutcome(const HoldRequest& request, const HoldRow& row);

struct HoldBatchTraits {
  using Request = HoldRequest;
  using Row = HoldRow;
  static const Sql& Statement() { return kHoldBatch; }
  static std::vector<Param> Params(const Param& now, const std::vector<const HoldRequest*>& batch) {
    return HoldBatchParams(now, batch);
  }
  static Result<std::vector<HoldRow>> ReadRows(const PGresult* result, size_t expected) {
    return ReadHoldRows(result, expected);
  }
};

class PgHoldBatcher {
 public:
  static constexpr size_t kMaxBatch = 64;  // requests in one statement
  // Per showtime and loop, then kUnavailable at once: four statements' worth, so a request
  // is refused at once rather than left waiting behind more than that.
  static constexpr size_t kMaxWaiting = 4 * kMaxBatch;

  PgHoldBatcher(PgPipelineSet* pipeline, std::function<Param()> now, Millis statement_timeout,
                PgBatchCounts* counts)
      : pipeline_(pipeline),
        batcher_(pipeline, std::move(now), statement_timeout, {kMaxBatch, kMaxWaiting}, counts,
                 "too many holds waiting for this showtime") {}

  io::asio::awaitable<Result<Hold>> Decide(HoldRequest request);

 private:
  io::asio::awaitable<Result<Hold>> Explain(const HoldRequest& request);

  PgPipelineSet* pipeline_;
  PgBatcher<HoldBatchTraits> batcher_;
};

}  // namespace boxoffice
