// Booking reads on PostgreSQL, combined per I/O loop.
//
// Design note. While a customer pays, his page polls his booking; at a premiere that is
// the most frequent statement after holds. Per loop, the first read goes out at once;
// reads that arrive while it is in flight wait and go together, as one statement
// (`booking_id = ANY($1)`), when it returns: a busy loop sends one statement per round
// trip, however many customers poll. A read never waits for more than the statement in
// flight and its own. At most kMaxBatch ids go in one statement, and at most kMaxWaiting
// reads wait per loop (then kUnavailable at once). A read only reads: one whose caller
// stopped waiting is dropped if not sent yet, and harmless if it was.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

#include "store/pg_pipeline.h"
#include "store/store.h"

namespace boxoffice {

class PgBookingReads {
 public:
  static constexpr size_t kMaxBatch = 128;
  static constexpr size_t kMaxWaiting = 8 * kMaxBatch;

  PgBookingReads(PgPipelineSet* pipeline, Millis statement_timeout, PgBatchCounts* counts)
      : pipeline_(pipeline),
        answer_bound_(2 * (statement_timeout + PgPipeline::kAnswerMargin)),
        counts_(counts) {}

  // The booking as stored (any customer's: the caller checks the owner), or nullopt when
  // there is none with this id.
  io::asio::awaitable<Result<std::optional<Booking>>> Get(int64_t booking_id);

 private:
  struct Waiting {
    int64_t booking_id = 0;
    io::Completion<Result<std::optional<Booking>>> done;
    bool abandoned = false;
  };
  io::asio::awaitable<void> Drain();

  PgPipelineSet* pipeline_;
  const Millis answer_bound_;
  bool in_flight_ = false;
  std::deque<std::shared_ptr<Waiting>> waiting_;
  PgBatchCounts* counts_;
};

}  // namespace boxoffice
