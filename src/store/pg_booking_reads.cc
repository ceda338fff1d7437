#include "store/pg_booking_reads.h"

#include <unordered_map>

#include "core/status.h"
#include "store/pg_rows.h"
#include "store/pg_sql.h"

namespace boxoffice {

io::asio::awaitable<Result<std::optional<Booking>>> PgBookingReads::Get(int64_t booking_id) {
  if (waiting_.size() >= kMaxWaiting) {
    co_return Status(Code::kUnavailable, "too many booking reads waiting");
  }
  auto waiting = std::make_shared<Waiting>();
  waiting->booking_id = booking_id;
  waiting_.push_back(waiting);
  BOX_ASSERT(waiting_.size() <= kMaxWaiting);
  if (!in_flight_) {
    in_flight_ = true;
    auto executor = co_await io::asio::this_coro::executor;
    io::asio::co_spawn(executor, Drain(), io::asio::detached);
  }
  // The drainer answers every read it sent, on every path, within the pipeline's bound.
  auto found = co_await waiting->done.Wait(answer_bound_);
  if (!found) {
    waiting->abandoned = true;
    co_return Status(Code::kUnavailable, "the booking read did not come back");
  }
  co_return std::move(*found);
}

io::asio::awaitable<void> PgBookingReads::Drain() {
  while (!waiting_.empty()) {
    std::vector<std::shared_ptr<Waiting>> batch;
    std::vector<int64_t> ids;
    while (!waiting_.empty() && batch.size() < kMaxBatch) {
      std::shared_ptr<Waiting> next = std::move(waiting_.front());
      waiting_.pop_front();
      if (next->abandoned) continue;
      ids.push_back(next->booking_id);
      batch.push_back(std::move(next));
    }
    if (batch.empty()) continue;
    BOX_ASSERT(batch.size() <= kMaxBatch && ids.size() == batch.size());
    std::unordered_map<int64_t, Booking> rows;
    Status failed = Status::Ok();
    try {
      std::vector<Param> params = {IntArrayLiteral(ids)};
      counts_->statements.fetch_add(1, std::memory_order_relaxed);
      counts_->requests.fetch_add(batch.size(), std::memory_order_relaxed);
      auto result = co_await pipeline_->Exec(kSelectBookings, std::move(params));
      if (result.ok()) {
        const PGresult* r = result->get();
        for (int i = 0; i < PQntuples(r); ++i) {
          Booking b = ReadBooking(r, i);
          const int64_t id = b.id;
          rows.emplace(id, std::move(b));
        }
      } else {
        failed = result.status();
      }
    } catch (const std::exception& e) {
      // Every read taken is answered whatever happens, and the queue carries on.
      failed = Status(Code::kUnavailable, std::string("booking read failed: ") + e.what());
    }
    for (auto& w : batch) {
      if (!failed.ok()) {
        w->done.Set(failed);
        continue;
      }
      auto it = rows.find(w->booking_id);
      w->done.Set(it == rows.end() ? std::optional<Booking>() : std::optional<Booking>(it->second));
    }
  }
  in_flight_ = false;
}

}  // namespace boxoffice
