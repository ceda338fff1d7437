// PgStore's private parts, shared by its files (pg_store*.cc, one per role): the pool, the
// loops' pipelines and batchers, and the transaction helpers. Not for other includes.
#pragma once

#include <libpq-fe.h>

#include <algorithm>
#include <optional>
#include <unordered_set>

#include "core/crypto.h"
#include "core/log.h"
#include "core/pool.h"
#include "core/seats.h"
#include "core/status.h"
#include "store/migrations.h"
#include "store/money.h"
#include "store/pg_booking_reads.h"
#include "store/pg_common.h"
#include "store/pg_checkout_batch.h"
#include "store/pg_confirm_batch.h"
#include "store/pg_connection.h"
#include "store/pg_hold_batch.h"
#include "store/pg_money_tx.h"
#include "store/pg_pipeline.h"
#include "store/pg_rows.h"
#include "store/pg_sql.h"
#include "store/pg_store.h"
#include "store/shards.h"

namespace boxoffice {

struct PgStore::Impl {
  // A deadlock or serialization failure is retried this often before it reaches a caller.
  static constexpr int kMaxTxAttempts = 3;

  // Each I/O loop's pipelined connections, and the hold batcher and booking reads on them.
  struct LoopState {
    LoopState(io::asio::io_context& context, Impl* impl)
        : pipelines(context,
                    PgPipelineOptions{impl->options.url, impl->options.connect_timeout,
                                      impl->options.statement_timeout, impl->options.lock_timeout},
                    impl->options.pipelines_per_loop),
          batcher(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              &impl->hold_counts),
          booking_reads(&pipelines, impl->options.statement_timeout, &impl->read_counts),
          confirmations(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              {kMaxConfirmBatch, kMaxConfirmsWaiting}, &impl->confirm_counts,
              "too many confirmations waiting"),
          checkouts(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              {kMaxCheckoutBatch, kMaxCheckoutsWaiting}, &impl->checkout_counts,
              "too many checkouts waiting"),
          finishes(
              &pipelines, [impl] { return impl->Now(); }, impl->options.statement_timeout,
              {kMaxCheckoutBatch, kMaxCheckoutsWaiting}, &impl->finish_counts,
              "too many checkouts waiting") {}
    PgPipelineSet pipelines;
    PgHoldBatcher batcher;
    PgBookingReads booking_reads;
    // A report names its booking, not its showtime: a loop's confirmations go to
    // kConfirmQueues queues by booking id, so that many statements may be in flight.
    PgBatcher<ConfirmBatchTraits> confirmations;
    // A checkout names its hold, whose row alone tells its showtime: a loop's new-key
    // checkouts go to kCheckoutQueues queues by hold id, their last phases by customer.
    PgBatcher<BeginBatchTraits> checkouts;
    PgBatcher<FinishBatchTraits> finishes;
  };
  static constexpr size_t kMaxConfirmBatch = 32;
  static constexpr size_t kMaxConfirmsWaiting = 8 * kMaxConfirmBatch;  // per queue
  static constexpr int64_t kConfirmQueues = 4;
  static constexpr size_t kMaxCheckoutBatch = 32;
  static constexpr size_t kMaxCheckoutsWaiting = 8 * kMaxCheckoutBatch;  // per queue
  static constexpr int64_t kCheckoutQueues = 4;

  PgOptions options;
  Pool<PgConnection> pool;
  PgBatchCounts hold_counts;
  PgBatchCounts read_counts;  // booking reads
  PgBatchCounts confirm_counts;
  PgBatchCounts checkout_counts;  // checkouts begun (new keys)
  PgBatchCounts finish_counts;    // checkouts' last phases
  PgBatchCounts showtime_reads;  // statements only: GetShowtimeAsync, ListShowtimesAsync,
                                 // GetSeatMapAsync
  io::PerLoop<LoopState> loops;

  // The current loop's state, made at first use; null off the loops.
  LoopState* Loop() {
    return loops.Get([this](io::asio::io_context& context) {
      return std::make_unique<LoopState>(context, this);
    });
  }

  explicit Impl(PgOptions o)
      : options(std::move(o)),
        pool(options.pool_size, options.acquire_timeout, [this] { return Connect(); }) {}

  Result<std::unique_ptr<PgConnection>> Connect() { return ConnectPg(options); }

  Param Now() const {
    return options.test_clock ? P(ToEpochMs(options.test_clock->Now())) : Param();
  }

  // Runs body(connection) with no transaction, on a pooled connection: each statement is
  // its own transaction. Retried like InTx after a deadlock or serialization failure.
  template <class T, class F>
  Result<T> Run(std::atomic<uint64_t>* retried, F body) {
    for (int attempt = 1;; ++attempt) {
      auto lease = pool.Acquire();
      if (!lease.ok()) return lease.status();
      PgConnection& c = *lease.value();
      c.ResetError();
      Result<T> r = body(c);
      const std::string state = c.last_sqlstate();
      if (c.broken()) lease.value().Discard();
      if (!r.ok() && IsRetryable(state) && attempt < kMaxTxAttempts) {
        retried->fetch_add(1);
        LogWarn("statement retried", {{"sqlstate", state}, {"attempt", attempt}});
        continue;
      }
      return r;
    }
  }

  // Runs body(connection) inside BEGIN … COMMIT. A failed body or an error status rolls
  // back. Deadlocks and serialization failures are retried up to kMaxTxAttempts times.
  template <class T, class F>
  Result<T> InTx(std::atomic<uint64_t>* retried, F body) {
    for (int attempt = 1;; ++attempt) {
      auto lease = pool.Acquire();
      if (!lease.ok()) return lease.status();
      PgConnection& c = *lease.value();
      c.ResetError();
      Status s = c.Simple("BEGIN");
      std::optional<Result<T>> r;
      if (s.ok()) {
        r.emplace(body(c));
        if (r->ok()) {
          s = c.Simple("COMMIT");
          if (s.ok()) return std::move(*r);
        }
        c.Simple("ROLLBACK");
      }
      const std::string state = c.last_sqlstate();
      if (c.broken()) lease.value().Discard();
      if (IsRetryable(state) && attempt < kMaxTxAttempts) {
        retried->fetch_add(1);
        LogWarn("transaction retried", {{"sqlstate", state}, {"attempt", attempt}});
        continue;
      }
      if (!s.ok()) return s;
      // BEGIN took, so the body ran, and failed: an OK result leaves only after its COMMIT.
      BOX_ASSERT(r.has_value() && !r->ok());
      return std::move(*r);
    }
  }
};

}  // namespace boxoffice
