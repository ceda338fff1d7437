// Admission: API.md's virtual waiting room as the service sees it: which showtimes have a
// room (stored in the database, cached here), signed tokens, and the check on every hold.
//
// * A room's setting lives in the store (PUT /admin/showtimes/{id}/waiting-room), so a
//   restart or a lost Redis never turns it off. This instance applies its own change at
//   once; other instances read the enabled rooms every `interval` (1 s).
// * The queue token is the customer's place: an HMAC of (showtime, customer), so joining
//   again gives the same token, and the status needs no lookup table.
// * The admission token names (showtime, customer, end of admission) under an HMAC. A hold
//   on a showtime with a room needs one that is well signed, issued to this customer for
//   this showtime, unexpired, and whose admission the room still runs (a confirmed booking
//   ends it early). Anything else is kNotAdmitted (403 NOT_ADMITTED). If the room's
//   backend does not answer, holds on its showtime get kUnavailable: stricter, never wrong.
// * Every `interval`, each open room is advanced (ended admissions go, the next in line
//   come in), so the line moves without anyone polling, and its sizes go to /metrics.
#pragma once

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/metrics.h"
#include "core/sync.h"
#include "gate/waiting_room.h"
#include "jobs/periodic.h"
#include "store/admission_store.h"

namespace boxoffice {

struct QueueView {
  std::string queue_token;
  QueuePlace place;
  std::string admission_token;  // when admitted
  int64_t estimated_wait_seconds = 0;
};

class Admission {
 public:
  static constexpr int kMaxActiveLimit = 100'000;
  static constexpr Millis kMinAdmissionTtl{10'000};
  static constexpr Millis kMaxAdmissionTtl{24 * 3'600'000};

  // secret: the service's token secret (a key for rooms is derived from it).
  Admission(WaitingRoom* room, AdmissionStore* store, const std::string& secret, const Clock* clock,
            Metrics* metrics);
  ~Admission();

  // Reads the enabled rooms now, then every interval refreshes them and advances each.
  void Start(Millis interval);
  void Stop();
  // One keeper round: false if the store did not answer.
  bool RunOnce();

  // kInvalid for a limit or TTL out of range, kNotFound for an unknown showtime.
  Status Configure(int64_t showtime_id, const WaitingRoomConfig& config);
  // The same, awaited on an I/O loop (the store's write on the loop's pipeline).
  io::asio::awaitable<Status> ConfigureAsync(int64_t showtime_id, WaitingRoomConfig config);
  // The showtime's room, when it is on.
  std::optional<WaitingRoomConfig> RoomOf(int64_t showtime_id);

  // Awaited on an I/O loop without blocking it (one Redis script call with a Redis room).
  // kNotFound when the showtime has no room on.
  io::asio::awaitable<Result<QueueView>> JoinAsync(int64_t showtime_id, int64_t customer_id);
  // kNotFound for a token that is not this showtime's, or a customer no longer in the room.
  io::asio::awaitable<Result<QueueView>> FindAsync(int64_t showtime_id, std::string queue_token);
  // The two above, run to their end on the calling thread (tests, tools; never a loop).
  Result<QueueView> Join(int64_t showtime_id, int64_t customer_id);
  Result<QueueView> Find(int64_t showtime_id, const std::string& queue_token);
  // Ok when the showtime has no room on, or the token is a running admission of this
  // customer to this showtime; kNotAdmitted or kUnavailable otherwise.
  Status CheckHold(int64_t showtime_id, int64_t customer_id, const std::string* admission_token);
  // The same, awaited on an I/O loop without blocking it; token_checked: CheckToken already
  // passed for this request.
  io::asio::awaitable<Status> CheckHoldAsync(int64_t showtime_id, int64_t customer_id,
                                             const std::string* admission_token,
                                             bool token_checked = false);
  // The part of CheckHold that asks nobody: Ok when the showtime has no room on, or the
  // token is well signed, this customer's and this showtime's, and unexpired. The hold path
  // sends a gate claim only for requests that pass it.
  Status CheckToken(int64_t showtime_id, int64_t customer_id, const std::string* admission_token);
  // The customer's booking of the showtime is confirmed: their admission ends now.
  void BookingConfirmed(int64_t showtime_id, int64_t customer_id);

  // Exposed for tests.
  std::string QueueToken(int64_t showtime_id, int64_t customer_id) const;
  std::string AdmissionToken(int64_t showtime_id, int64_t customer_id, Instant until) const;

 private:
  // Configure's two halves: the limits it checks before the store, and this instance's
  // copy it updates after.
  static Status CheckConfig(const WaitingRoomConfig& config);
  void Apply(int64_t showtime_id, const WaitingRoomConfig& config);

  std::string Sign(const std::string& what) const;
  QueueView View(int64_t showtime_id, int64_t customer_id, const QueuePlace& place,
                 const WaitingRoomConfig& config) const;
  // One of the open rooms' sizes as of the last round, a /metrics series per room.
  void Sizes(int64_t RoomSizes::*size, Metrics::Samples* out);

  WaitingRoom* room_;
  AdmissionStore* store_;
  const std::string key_;
  const Clock* clock_;
  Counter& refused_;
  Counter& errors_;
  // Lock order: mu_ is a leaf; nothing is called (store, room, metrics) while it is held.
  Mutex mu_;
  std::map<int64_t, WaitingRoomConfig> rooms_ BOX_GUARDED_BY(mu_);  // enabled rooms
  // Bumped under mu_ at each change of rooms_: RoomOf, on every hold, reads a per-thread
  // copy and takes mu_ only when the copy is older than this.
  std::atomic<uint64_t> rooms_version_{1};
  const uint64_t instance_ = NextInstance();  // tells this one's per-thread copies apart
  static uint64_t NextInstance() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1, std::memory_order_relaxed);
  }
  std::map<int64_t, RoomSizes> sizes_ BOX_GUARDED_BY(mu_);     // open rooms as of the last round
  Metrics::CollectorHandle queued_gauge_;  // destroyed before the maps they read
  Metrics::CollectorHandle admitted_gauge_;
  Periodic keeper_;
};

}  // namespace boxoffice
