// ShardedStore: one Store over several PostgreSQL shards, each showtime living wholly on
// one (DESIGN.md "Beyond one machine"; src/store/shards.h says how ids name their shard).
//
// Every request about one showtime, hold, booking, checkout claim or payment goes to the
// one shard its id names: no distributed transaction, no lookup, and a shard that is down
// fails only the requests about its own showtimes (kUnavailable, so 503). Lists and counts
// fan out and merge (showtimes in (starts_at, id) order under the same cursor contract).
// A new showtime goes to the shard with the fewest showtimes, skipping one that is down.
//
// Each shard keeps its own outbox, relay lease and refunds, and serve runs the jobs that
// drain them per shard, on Databases(): the outbox role (store/outbox_store.h) is each
// shard's own, this router has none, outbox ids being per shard. Refunds, rare, are looked
// for on each shard in turn.
//
// Migrate() migrates every shard, then numbers the ones never numbered: one that already
// holds showtimes (a single database growing into shards) becomes shard 0, the others take
// the lowest free numbers in the order of their random identity (migration 0021), so
// instances starting at once with their flags in different orders agree. A number is kept for good,
// so the order of the URLs does not matter afterwards. Until Migrate() succeeds every request is
// refused.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/sync.h"
#include "store/pg_store.h"
#include "store/store.h"

namespace boxoffice {

class ShardedStore final : public Store {
 public:
  explicit ShardedStore(std::vector<std::unique_ptr<PgStore>> shards);
  ~ShardedStore() override;

  struct Shard {
    int number = 0;
    PgStore* store = nullptr;
  };
  // After Migrate: the shards, by number.
  const std::vector<Shard>& shards() const { return shards_; }
  // Each shard's answer to a ping, by number (for /readyz: which shard is down).
  io::asio::awaitable<std::vector<std::pair<int, Status>>> PingDatabasesAsync(
      Millis deadline) override;

  Status Migrate() override;
  Status Ping() override;
  io::asio::awaitable<Status> PingAsync() override;
  Result<int64_t> CreateShowtime(const NewShowtime& showtime) override;
  Result<Showtime> GetShowtime(int64_t showtime_id) override;
  Result<std::vector<Showtime>> ListShowtimes(const ShowtimeQuery& query) override;
  io::asio::awaitable<Result<Showtime>> GetShowtimeAsync(int64_t showtime_id) override;
  io::asio::awaitable<Result<std::vector<Showtime>>> ListShowtimesAsync(
      ShowtimeQuery query) override;
  Result<int64_t> CountShowtimes() override;
  Result<bool> SeedBatch(const std::string& batch, const std::vector<NewShowtime>& showtimes,
                         int64_t route) override;  // on shards()[route mod N]
  Result<int64_t> SizeOnDisk() override;           // the sum
  Result<SeatMap> GetSeatMap(int64_t showtime_id) override;
  io::asio::awaitable<Result<SeatMap>> GetSeatMapAsync(int64_t showtime_id) override;
  Result<std::vector<SeatOwner>> GetSeatOwners(int64_t showtime_id) override;
  Result<Hold> HoldSeats(const HoldRequest& request) override;
  io::asio::awaitable<Result<Hold>> HoldSeatsAsync(HoldRequest request) override;
  Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ReleaseHold(const std::string& hold_id, int64_t customer_id) override;
  Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                          Millis max_lifetime) override;
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
  io::asio::awaitable<Result<Booking>> GetBookingAsync(int64_t booking_id,
                                                       int64_t customer_id) override;
  Result<Settlement> SettlePayment(const PaymentReport& report, Booking* confirmed) override;
  using Store::SettlePayment;
  Result<std::map<BookingStatus, int64_t>> CountRecentBookings(Millis window) override;
  Result<std::vector<Booking>> ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                   int limit) override;
  Status ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) override;
  Result<bool> AbandonCheckout(int64_t booking_id) override;
  Result<AuditReport> Audit() override;
  std::vector<Database> Databases() override;  // the shards, by number
  Status SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) override;
  io::asio::awaitable<Status> SetWaitingRoomAsync(int64_t showtime_id,
                                                  WaitingRoomConfig config) override;
  Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> EnabledWaitingRooms() override;
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

 private:
  PgStore* ForNumber(int number) const;
  PgStore* ForShowtime(int64_t showtime_id) const;
  PgStore* ForBooking(int64_t booking_id) const;
  PgStore* ForUuid(const std::string& uuid) const;
  // Where a payment report goes: its reference's shard; kUnavailable for a shard this
  // instance does not know (never refunded for it); the first shard for a reference no
  // shard could have issued, which records it and refunds the money.
  Result<PgStore*> ForPayment(const PaymentReport& report) const;
  // A host/port/database name of shard `number` for messages (never the password).
  std::string Describe(const Shard& shard) const;

  Mutex rooms_mu_;  // a leaf: guards last_rooms_
  std::map<int, std::vector<std::pair<int64_t, WaitingRoomConfig>>> last_rooms_
      BOX_GUARDED_BY(rooms_mu_);

  std::vector<std::unique_ptr<PgStore>> owned_;
  std::vector<Shard> shards_;        // by number, after Migrate
  std::vector<PgStore*> by_number_;  // index: shard number; null where none
};

}  // namespace boxoffice
