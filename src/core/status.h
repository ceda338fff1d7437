// Status and Result: expected outcomes as values.
//
// Every operation that can fail for a reason a caller must handle (a seat is taken, a hold
// is gone, the database is down) returns a Status or a Result<T>. The set of codes is small
// and closed; drivers translate their errors into it at the edge (store/, gate/), and only
// api/ maps a code to an HTTP status. Programmer errors are not Statuses: they abort.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace boxoffice {

enum class Code {
  kOk,
  kInvalid,            // the request is malformed; nothing was changed
  kNotFound,           // no such thing, or not visible to this caller
  kConflict,           // some requested seats are held or booked by someone else
  kSingleSeatGap,      // the hold would leave a seat alone (seats() names it)
  kUnknownSeats,       // some requested seat codes are not in the showtime
  kNotActive,          // the hold expired, was released, or is booked
  kCheckoutExists,     // a checkout of this hold is pending; id() names its booking
  kKeyReused,          // an idempotency key was used before for another request
  kInProgress,         // another request holds this idempotency key right now
  kRateLimited,        // too many attempts; retry_after_ms() says when to try again
  kHoldLimit,          // the customer would hold too many seats of the showtime; id() = held
  kNotAdmitted,        // the showtime's waiting room is on and this is no running admission
  kSalesClosed,        // the showtime's sales have closed (its start, or earlier)
  kShowtimeCancelled,  // the showtime was cancelled: nothing more is sold
  kNotRefundable,      // the booking cannot be cancelled by its customer (terms or state)
  kSalesStarted,       // a showtime's prices are fixed: a seat was held, in checkout or sold
  kUnavailable,        // a dependency did not answer in time; safe to retry
  kInternal,           // a bug or a broken invariant reported by a dependency
};

const char* CodeName(Code code);

class Status {
 public:
  Status() = default;
  Status(Code code, std::string message, std::vector<std::string> seats = {})
      : code_(code), message_(std::move(message)), seats_(std::move(seats)) {}

  static Status Ok() { return {}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }
  // The seats a kConflict, kSingleSeatGap or kUnknownSeats status is about, sorted.
  const std::vector<std::string>& seats() const { return seats_; }
  // The id a status refers to (the pending booking of kCheckoutExists), or 0.
  int64_t id() const { return id_; }
  Status& WithId(int64_t id) {
    id_ = id;
    return *this;
  }
  // For kRateLimited: how long until an attempt would pass.
  int64_t retry_after_ms() const { return retry_after_ms_; }
  Status& WithRetryAfter(int64_t ms) {
    retry_after_ms_ = ms;
    return *this;
  }
  // For a refused hold picked by hand (kConflict, kSingleSeatGap): blocks of seats that
  // were free instead (maybe none); nullopt when none were looked for.
  const std::optional<std::vector<std::vector<std::string>>>& alternatives() const {
    return alternatives_;
  }
  Status& WithAlternatives(std::vector<std::vector<std::string>> blocks) {
    alternatives_ = std::move(blocks);
    return *this;
  }
  // For kUnavailable: the request reached the database and its answer was lost, so it may
  // have been carried out (what it wrote is repaired by the ids its caller chose). False
  // when it is known never to have been sent (a full queue, no connection).
  bool maybe_applied() const { return maybe_applied_; }
  Status& MaybeApplied() {
    maybe_applied_ = true;
    return *this;
  }

 private:
  Code code_ = Code::kOk;
  std::string message_;
  std::vector<std::string> seats_;
  int64_t id_ = 0;
  int64_t retry_after_ms_ = 0;
  std::optional<std::vector<std::vector<std::string>>> alternatives_;
  bool maybe_applied_ = false;
};

// A value or the Status that explains why there is none.
template <class T>
class Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) {
      std::fprintf(stderr, "Result constructed from an OK status without a value\n");
      std::abort();
    }
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  // By value from a temporary, so `for (auto& x : Load().value())` cannot dangle.
  T value() && { return std::move(*value_); }
  T& operator*() { return *value_; }
  const T& operator*() const { return *value_; }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }

 private:
  Status status_;
  std::optional<T> value_;
};

// Aborts with context when an invariant is broken (a programmer error, never input).
[[noreturn]] void AssertFail(const char* expr, const char* file, int line);
// A broken invariant found after a transaction committed (an answer of our own database
// function that cannot be): logged as an error and returned as kInternal instead of
// aborting, because what committed must not take the process with it, and the caller's
// retry (a duplicate callback, a replayed key) finds the committed state.
Status BrokenAfterCommit(const char* expr, const char* file, int line);
#define BOX_BROKEN_AFTER_COMMIT(expr) ::boxoffice::BrokenAfterCommit(#expr, __FILE__, __LINE__)
#define BOX_ASSERT(expr) \
  ((expr) ? static_cast<void>(0) : ::boxoffice::AssertFail(#expr, __FILE__, __LINE__))

}  // namespace boxoffice
