// Holds on PostgreSQL: the statement that decides them (boxoffice_hold_batch, migration
// 0012), how its rows become each request's Result, and the per-loop batcher that gathers
// a hot showtime's holds into one statement.
//
// Design note. A premiere's holds pile onto a few showtimes. Per loop and per showtime,
// the first hold request goes out at once as a batch of one; requests for the same
// showtime that arrive while a statement for it is in flight wait in arrival order and go
// together, as one statement, when it returns. The function decides them one after the
// other, each all or nothing, in one transaction with one round of row locks, and answers
// each with its own row. A batch holds at most kMaxBatch requests, and at most kMaxWaiting
// wait per showtime (then kUnavailable at once), so a request waits for a few statements at
// most. A request whose caller gave up before its statement went out (the wait's bound) is
// never sent: a hold is never made for a customer who was told 503. Once sent, its answer
// is awaited to the end (the pipeline bounds it). The blocking HoldSeats sends the same statement
// with one request: one rule, written once.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

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
  int64_t held_before = 0;  // the customer's live held seats before it
};
Result<std::vector<HoldRow>> ReadHoldRows(const PGresult* result, size_t expected);

// The request's outcome from its row; nullopt when some codes are not seats of the showtime
// (the caller reads kExistingSeats, and kShowtimeExists when none is, then
// ExplainUnknownSeats).
std::optional<Result<Hold>> HoldOutcome(const HoldRequest& request, const HoldRow& row);

class PgHoldBatcher {
 public:
  static constexpr size_t kMaxBatch = 64;  // requests in one statement
  // Per showtime and loop, then kUnavailable at once: four statements' worth, so a request
  // is refused at once rather than left waiting behind more than that.
  static constexpr size_t kMaxWaiting = 4 * kMaxBatch;

  using Counts = PgBatchCounts;

  // now: the test clock's override, or NULL (the database's clock). statement_timeout:
  // the pipeline's; a request waits at most for the statement in flight and its own.
  PgHoldBatcher(PgPipelineSet* pipeline, std::function<Param()> now, Millis statement_timeout,
                Counts* counts)
      : pipeline_(pipeline),
        now_(std::move(now)),
        answer_bound_(2 * (statement_timeout + PgPipeline::kAnswerMargin)),
        counts_(counts) {}

  io::asio::awaitable<Result<Hold>> Decide(HoldRequest request);


 private:
  struct Waiting {
    HoldRequest request;
    io::Completion<Result<HoldRow>> done;
    bool sent = false;       // its statement went out: its answer comes within Exec's bound
    bool abandoned = false;  // its caller stopped waiting before it was sent: never send it
  };
  struct Queue {
    bool in_flight = false;
    std::deque<std::shared_ptr<Waiting>> waiting;
  };
  io::asio::awaitable<void> Drain(int64_t showtime_id);
  io::asio::awaitable<Result<Hold>> Explain(const HoldRequest& request);

  PgPipelineSet* pipeline_;
  std::function<Param()> now_;
  const Millis answer_bound_;
  std::unordered_map<int64_t, Queue> queues_;  // showtimes with requests waiting or in flight
  Counts* counts_;
};

}  // namespace boxoffice
