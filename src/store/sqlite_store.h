// SqliteStore: the embedded default, one SQLite file in WAL mode.
//
// Design note. SQLite has one writer at a time, so every write goes through a pool of
// exactly one writer connection and runs as BEGIN IMMEDIATE … COMMIT; readers use their
// own connections and, thanks to WAL, never wait for the writer. With one writer there are
// no row locks and no deadlocks, but the hold is still the seeds' conditional UPDATE with
// the affected-row count compared to the number of seats, so the rule that decides a seat
// is the same on both stores. Other processes (a `seed` run beside `serve`) are absorbed
// by busy_timeout.
//
// Time: the embedded store has no database clock worth the name, so it reads the process
// clock through the injected Clock (SystemClock in production, ManualClock in tests); every
// statement receives `now` as a parameter. Times are stored as epoch milliseconds.
//
// Durability: synchronous=NORMAL by default (a committed transaction survives a crash of
// the process; the last ones may be lost on power failure); `?synchronous=full` in the URL
// makes every commit durable at the cost of an fsync each.
//
// Files: sqlite_sql.h (the statements), sqlite_connection.h (a connection, a statement in
// use, a write transaction), sqlite_rows.* (rows into the store's types), sqlite_money_tx.h
// (the money rules' primitives), sqlite_hold_batch.cc with sqlite_store_parts.h (holds
// and their queue), sqlite_store.cc (the rest of the Store methods).
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "store/store.h"

namespace boxoffice {

struct SqliteOptions {
  std::string path;               // a file, or ":memory:" is refused (readers need the file)
  bool synchronous_full = false;  // see the durability note above
  size_t reader_pool_size = 4;    // concurrent seat-map and hold reads
  Millis busy_timeout{5'000};     // wait for another process's write lock at most this
  Millis acquire_timeout{5'000};  // wait for a pooled connection at most this
};

class SqliteConnection;

class SqliteStore final : public Store, public OutboxStore {
 public:
  // Parses "sqlite:PATH[?synchronous=full]" into options; nullopt if malformed.
  static std::optional<SqliteOptions> ParseUrl(const std::string& url);

  SqliteStore(SqliteOptions options, const Clock* clock);
  ~SqliteStore() override;

  Status Migrate() override;
  Status Ping() override;
  Result<int64_t> CreateShowtime(const NewShowtime& showtime) override;
  Result<Showtime> GetShowtime(int64_t showtime_id) override;
  Result<std::vector<Showtime>> ListShowtimes(const ShowtimeQuery& query) override;
  Result<int64_t> CountShowtimes() override;
  Result<SeatMap> GetSeatMap(int64_t showtime_id) override;
  Result<std::vector<SeatOwner>> GetSeatOwners(int64_t showtime_id) override;
  Result<Hold> HoldSeats(const HoldRequest& request) override;
  // On an I/O loop: the request joins the hold queue, whose thread takes what waits (at
  // most kMaxHoldBatch) and decides it in one write transaction, each request all or
  // nothing behind a savepoint, in arrival order: one commit for the batch (group commit).
  // At most kMaxHoldsWaiting wait, then kUnavailable; a request still waiting after
  // kHoldWaitBound is answered 503 and never run.
  io::asio::awaitable<Result<Hold>> HoldSeatsAsync(HoldRequest request) override;
  // Holds decided in one write transaction, in order, each all or nothing.
  std::vector<Result<Hold>> HoldBatch(const std::vector<HoldRequest>& requests);
  // Hold transactions committed or tried, and the hold requests they decided.
  uint64_t hold_transactions() const { return hold_transactions_.load(); }
  uint64_t batched_holds() const { return batched_holds_.load(); }
  static constexpr size_t kMaxHoldBatch = 64;
  static constexpr size_t kMaxHoldsWaiting = 4'096;
  // A hold not taken by the queue's thread within this is abandoned (503, never run).
  static constexpr Millis kHoldWaitBound{10'000};
  Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ReleaseHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
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
  Status AbortCheckout(const KeyLock& lock) override;
  Status EndCheckoutLease(const KeyLock& lock) override;
  Result<int> PurgeCheckoutKeys(Millis older_than, int limit) override;
  Result<std::string> InstallationId(int64_t booking_id) override;
  Status AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                              const std::string& url, Instant expires_at) override;
  Result<Booking> GetBooking(int64_t booking_id, int64_t customer_id) override;
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

 private:
  struct Pools;
  template <class Traits>
  class WriterQueue;
  struct HoldJobs;
  template <class Answer, class Decide, class Keep>
  std::vector<Answer> WriteBatch(size_t n, Decide decide, Keep keep);

  SqliteOptions options_;
  const Clock* clock_;
  std::unique_ptr<Pools> pools_;
  std::atomic<uint64_t> hold_transactions_{0};
  std::atomic<uint64_t> batched_holds_{0};
  std::unique_ptr<WriterQueue<HoldJobs>> holds_;  // after pools_: stopped before they close
};

}  // namespace boxoffice
