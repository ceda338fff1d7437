// PgStore: the production store on PostgreSQL 15 through libpq.
//
// Design note. Locks decide nothing and last milliseconds. A hold is the seeds'
// conditional UPDATE run in a short transaction. PostgreSQL locks rows in the order its
// plan meets them, which depends on the plan, so every statement that changes seats of a
// hold first locks them in a materialised `SELECT … ORDER BY seat_code FOR UPDATE` inside
// the same statement: two overlapping holds always lock their common seats in the same
// order and cannot deadlock. The sweeper never waits (FOR UPDATE SKIP LOCKED), so it can
// run on every instance at once. Deadlock and serialization failures would be retried a
// bounded number of times (kMaxTxAttempts) and counted; the tests prove none occur.
//
// Time: the database's clock (statement_timestamp()) is the one clock of a PostgreSQL
// deployment, so skewed application clocks cannot release a hold early. Every statement
// takes `now` as parameter $1: NULL means the database clock, a value (from a ManualClock
// handed in by a test) overrides it. One code path, and tests move time without sleeping.
//
// Limits: a pool of `pool_size` connections (a hot showtime is row-lock bound, so more
// connections make it slower, DESIGN.md); each statement may run at most statement_timeout
// and wait for a row lock at most lock_timeout, after which the caller gets kUnavailable.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "store/store.h"

namespace boxoffice {

struct PgOptions {
  std::string url;  // postgresql://user@host:port/db
  size_t pool_size = 8;
  Millis acquire_timeout{5'000};
  Millis connect_timeout{5'000};
  Millis statement_timeout{5'000};
  Millis lock_timeout{2'000};
  const Clock* test_clock = nullptr;  // null: the database's clock
  // Pipelined connections of each I/O loop (PgPipelineSet), opened as the load needs them.
  size_t pipelines_per_loop = 2;
};

class PgConnection;

class PgStore final : public Store, public OutboxStore {
 public:
  explicit PgStore(PgOptions options);
  ~PgStore() override;

  Status Migrate() override;
  Status Ping() override;
  io::asio::awaitable<Status> PingAsync() override;  // on the loop's pipeline
  Result<int64_t> CreateShowtime(const NewShowtime& showtime) override;
  io::asio::awaitable<Result<int64_t>> CreateShowtimeAsync(NewShowtime showtime) override;
  Result<Showtime> GetShowtime(int64_t showtime_id) override;
  Result<std::vector<Showtime>> ListShowtimes(const ShowtimeQuery& query) override;
  Result<int64_t> CountShowtimes() override;
  // One transaction: the batch's name, its showtimes and prices, its seats by COPY.
  Result<bool> SeedBatch(const std::string& batch, const std::vector<NewShowtime>& showtimes,
                         int64_t route) override;
  Result<int64_t> SizeOnDisk() override;
  Result<SeatMap> GetSeatMap(int64_t showtime_id) override;
  Result<std::vector<SeatOwner>> GetSeatOwners(int64_t showtime_id) override;
  Result<Hold> HoldSeats(const HoldRequest& request) override;
  // On an I/O loop: the loop's pipelined connection, a hot showtime's holds batched
  // (store/pg_hold_batch.h). Off the loops: HoldSeats.
  io::asio::awaitable<Result<Hold>> HoldSeatsAsync(HoldRequest request) override;
  Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ReleaseHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                          Millis max_lifetime) override;
  // On an I/O loop: one statement on the loop's pipeline (migration 0015 for the writes).
  io::asio::awaitable<Result<Hold>> HoldActionAsync(HoldAction action, std::string hold_id,
                                                    int64_t customer_id, Millis ttl,
                                                    Millis max_lifetime) override;
  Result<int> SweepExpired(int batch_limit, std::vector<SeatRef>* freed = nullptr) override;
  Result<Booking> StartCheckout(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                Millis max_lifetime) override;
  Result<Booking> StartCheckout(const KeyLock& lock, const std::string& hold_id, Millis ttl,
                                Millis max_lifetime) override;
  Result<IdempotencyRecord> ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) override;
  Result<bool> FinishCheckout(const KeyLock& lock, const std::string& session_id,
                              const std::string& url, Instant expires_at, int response_status,
                              const std::string& response_body, const std::string& email) override;
  // Purchase phases in one statement each on an I/O loop (migration 0013); off the loops
  // the general methods.
  io::asio::awaitable<Result<bool>> FinishCheckoutAsync(KeyLock lock, std::string session_id,
                                                        std::string url, Instant expires_at,
                                                        int response_status,
                                                        std::string response_body,
                                                        std::string email) override;
  io::asio::awaitable<Result<bool>> TryBeginCheckoutAsync(IdempotencyKey key, std::string hold_id,
                                                          Millis lease, Millis ttl,
                                                          Millis max_lifetime,
                                                          CheckoutBegun* begun) override;
  io::asio::awaitable<Result<std::optional<Settlement>>> TryConfirmPaymentAsync(
      PaymentReport report, Booking* confirmed) override;
  Status AbortCheckout(const KeyLock& lock) override;
  Status EndCheckoutLease(const KeyLock& lock) override;
  Result<int> PurgeCheckoutKeys(Millis older_than, int limit) override;
  Result<std::string> InstallationId(int64_t booking_id) override;
  Status AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                              const std::string& url, Instant expires_at) override;
  Result<Booking> GetBooking(int64_t booking_id, int64_t customer_id) override;
  io::asio::awaitable<Result<Showtime>> GetShowtimeAsync(int64_t showtime_id) override;
  io::asio::awaitable<Result<SeatMap>> GetSeatMapAsync(int64_t showtime_id) override;
  io::asio::awaitable<Result<std::vector<Showtime>>> ListShowtimesAsync(
      ShowtimeQuery query) override;
  io::asio::awaitable<Result<Booking>> GetBookingAsync(int64_t booking_id,
                                                       int64_t customer_id) override;
  Result<Settlement> SettlePayment(const PaymentReport& report, Booking* confirmed) override;
  using Store::SettlePayment;
  Result<std::vector<Booking>> ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                   int limit) override;
  Result<bool> AbandonCheckout(int64_t booking_id) override;
  Status ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) override;
  Result<std::vector<OutboxEvent>> PendingEvents(int64_t after_id, int limit) override;
  Result<bool> AcquireLease(const std::string& name, const std::string& owner,
                            Millis lease) override;
  Result<std::map<BookingStatus, int64_t>> CountRecentBookings(Millis window) override;
  Result<AuditReport> Audit() override;
  // The one database: this store, with its outbox.
  std::vector<Database> Databases() override { return {Database{0, "", this, this}}; }
  Status SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) override;
  io::asio::awaitable<Status> SetWaitingRoomAsync(int64_t showtime_id,
                                                  WaitingRoomConfig config) override;
  Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> EnabledWaitingRooms() override;
  Result<std::vector<OutboxEvent>> PendingMail(int limit) override;
  Result<int64_t> CountPendingMail() override;
  Status MarkMailDone(int64_t id, const std::string& lease_name, const std::string& owner) override;
  Result<int64_t> ExpirePendingMail(Millis older_than, int limit, const std::string& lease_name,
                                    const std::string& owner) override;
  Status MarkEventsPublished(const std::vector<int64_t>& ids, const std::string& lease_name,
                             const std::string& owner) override;
  Result<std::vector<Refund>> PendingRefunds(int limit) override;
  Status RefundAttemptFailed(const std::string& refund_id, bool refused, const std::string& error,
                             Millis retry_after) override;
  Result<RefundBacklog> CountRefundBacklog() override;
  Result<std::vector<CustomerBooking>> ListCustomerBookings(
      const CustomerBookingsQuery& query) override;
  Result<CheckInResult> CheckIn(const CheckInRequest& request) override;
  io::asio::awaitable<Result<CheckInResult>> CheckInAsync(CheckInRequest request) override;
  Result<DoorCount> CountAtDoor(int64_t showtime_id) override;
  Result<std::optional<MailBooking>> BookingForMail(int64_t booking_id) override;
  Status CompleteRefund(const std::string& refund_id,
                        const std::string& gateway_refund_id) override;
  Result<ShowtimeCancel> CancelShowtime(int64_t showtime_id, const std::string& reason,
                                        int64_t actor) override;
  Result<std::vector<AdminChange>> ListAdminChanges(int64_t showtime_id, int limit) override;
  Result<BookingCancel> CancelBooking(int64_t booking_id, int64_t customer_id) override;
  Result<Showtime> EditShowtime(int64_t showtime_id, const ShowtimeEdit& edit,
                                int64_t actor) override;
  Result<ShowtimeSales> GetShowtimeSales(int64_t showtime_id) override;
  Result<std::vector<Booking>> ListShowtimeBookings(const ShowtimeBookingsQuery& query) override;

  // This database's shard number (migration 0021), nullopt while it has none.
  Result<std::optional<int>> ShardNumber();
  // Numbers this database `wanted` unless it has a number already; returns its number.
  // kInvalid when the database holds showtimes and `wanted` is not 0 (src/store/shards.h).
  Result<int> TakeShardNumber(int wanted);
  // This database's random identity (migration 0021): the order unnumbered shards take
  // their numbers in.
  Result<std::string> DatabaseId();
  const std::string& url() const;

  // Hold statements the loops' batchers sent, and the hold requests they decided.
  uint64_t hold_statements() const;
  uint64_t batched_holds() const;
  // Statements the loops sent for booking reads (GetBookingAsync; several reads each).
  uint64_t booking_read_statements() const;
  // Statements the loops sent for showtime reads (GetShowtimeAsync, ListShowtimesAsync,
  // GetSeatMapAsync).
  uint64_t showtime_read_statements() const;
  // Confirmation statements the loops sent, and the reports they decided.
  uint64_t confirm_statements() const;
  uint64_t batched_confirms() const;
  // Checkout statements the loops sent (new-key checkouts; last phases), and the requests
  // they decided.
  uint64_t checkout_statements() const;
  uint64_t batched_checkouts() const;
  uint64_t finish_statements() const;
  uint64_t batched_finishes() const;
  // This database's shard number as it last read or took it (0 for an unnumbered one).
  int own_shard() const { return own_shard_.load(); }

  // Transactions retried after a deadlock or serialization failure (expected: zero).
  uint64_t retried_transactions() const { return retried_.load(); }

 private:
  // GetHold, ReleaseHold or ExtendHold on the pool's connection: the statement
  // HoldActionAsync sends on a loop's pipeline.
  Result<Hold> RunHoldAction(HoldAction action, const std::string& hold_id, int64_t customer_id,
                             Millis ttl, Millis max_lifetime);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::atomic<int> own_shard_{0};
  std::atomic<uint64_t> retried_{0};
};

}  // namespace boxoffice
