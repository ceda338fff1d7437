// HoldService: carries a customer's hold request across the parts that decide it: the rate
// limit, the waiting room, validation (core/seats.h), the Redis gate, and the store's
// conditional UPDATE, which alone decides. It owns the hold policy (TTL, lifetime cap) and
// counts outcomes.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/metrics.h"
#include "core/sync.h"
#include "gate/rate_limiter.h"
#include "gate/seat_events.h"
#include "gate/seat_gate.h"
#include "holds/admission.h"
#include "holds/seat_map_view.h"
#include "holds/seat_rules.h"
#include "io/follow_ups.h"
#include "store/store.h"

namespace boxoffice {

struct HoldPolicy {
  Millis ttl{10 * 60'000};           // API.md: a hold lasts 10 minutes
  Millis max_lifetime{20 * 60'000};  // and never more than 20 minutes after it was made
  // A gate claim's keys live this long until the store has said yes; then they are rearmed
  // for the hold's TTL. Keys a lost answer left behind (a timeout, then a refusal whose
  // release was lost too) stop turning free seats away after this, not after 10 minutes.
  Millis gate_claim_ttl{10'000};
};

// What a hold is decided with, given once at construction. Only the store and metrics are
// required; each other part, when null, is simply not asked.
struct HoldServiceDeps {
  // Holds are decided by the store's HoldStore; a showtime's layout, gap rule and start
  // come from its ShowtimeStore (read once per showtime and instance).
  Store* store = nullptr;
  Metrics* metrics = nullptr;
  // The Redis seat gate in front of the store (null: the embedded profile).
  SeatGate* gate = nullptr;
  // Hold attempts per customer and minute (null: unlimited).
  RateLimiter* limiter = nullptr;
  int holds_per_minute = 0;
  // Where this instance's seat changes are published once committed (seat-map caches and
  // live streams hear of them).
  SeatEvents* events = nullptr;
  // The waiting rooms holds must pass (null: none).
  Admission* admission = nullptr;
  // This instance's seat maps (null: layouts come from the store's seat map, a refused hold
  // carries no alternatives, and the gate's "taken" is final).
  SeatMapView* maps = nullptr;
};

class HoldService {
 public:
  HoldService(const HoldServiceDeps& deps, HoldPolicy policy);
  // The store alone, with the gate when given (jobs, tests).
  HoldService(Store* store, HoldPolicy policy, Metrics* metrics, SeatGate* gate = nullptr)
      : HoldService(HoldServiceDeps{.store = store, .metrics = metrics, .gate = gate}, policy) {}

  // In order: the rate limit (kRateLimited), the waiting room (kNotAdmitted without a
  // running admission when the showtime has a room), validation (kInvalid, nothing
  // touched), the gate (a seat it knows to be taken is refused, kConflict, without asking
  // the store, unless this instance's map shows it free; else its keys are claimed for
  // gate_claim_ttl), then Store::HoldSeats. The gate's keys are then rearmed for the hold's
  // TTL (repaired, when the gate had called them taken), or released if the store refused.
  // A hold whose store answer was lost (kUnavailable: a 503 for the customer, who never
  // learns its id) may have been made all the same: it is released by its id, which this
  // service chose, as soon as it shows (io::FollowUps, until its TTL has passed), so its
  // seats and the customer's 8-seat limit are not kept by a hold nobody was given.
  //
  // On an I/O loop nothing here blocks: the rate limit and the gate claim leave in one
  // Redis write (the claim only for a request that passed every check that asks nobody),
  // and a claim made for a request refused afterwards is released aside.
  io::asio::awaitable<Result<Hold>> HoldSeatsAsync(int64_t showtime_id, int64_t customer_id,
                                                   std::vector<std::string> seats,
                                                   const std::string* admission_token = nullptr);
  // HoldSeatsAsync, run to its end on the calling thread (jobs, tests; never an I/O loop).
  Result<Hold> HoldSeats(int64_t showtime_id, int64_t customer_id,
                         const std::vector<std::string>& seats,
                         const std::string* admission_token = nullptr);
  // Best available (API.md): the same checks, then the showtime's blocks of best.count
  // seats of best.category, best first (holds/seat_rules.h), go to the store, which holds
  // the first one free in the same decision; kConflict with no seats when none is. kInvalid
  // for a category the showtime does not have.
  io::asio::awaitable<Result<Hold>> HoldBestAsync(int64_t showtime_id, int64_t customer_id,
                                                  BestAvailable best,
                                                  const std::string* admission_token = nullptr);
  Result<Hold> HoldBest(int64_t showtime_id, int64_t customer_id, const BestAvailable& best,
                        const std::string* admission_token = nullptr);
  // Picked by hand on a showtime that forbids single-seat gaps, a hold carries the guards
  // of its seats (kSingleSeatGap when it would leave a seat alone). A hold picked by hand
  // and refused (kConflict, kSingleSeatGap) carries up to kMaxAlternatives free blocks of
  // its size and category from this instance's recent seat map (SeatMapView::Recent),
  // nearest first.
  static constexpr size_t kMaxAlternatives = 3;
  // A hold's read, release and extension, awaited on an I/O loop without blocking it (the
  // store's one statement; the gate's keys released or rearmed aside).
  io::asio::awaitable<Result<Hold>> GetHoldAsync(std::string hold_id, int64_t customer_id);
  io::asio::awaitable<Status> ReleaseHoldAsync(std::string hold_id, int64_t customer_id);
  io::asio::awaitable<Result<Hold>> ExtendHoldAsync(std::string hold_id, int64_t customer_id);
  // The same, run to their end on the calling thread (jobs, tests; never an I/O loop).
  Result<Hold> GetHold(const std::string& hold_id, int64_t customer_id);
  Status ReleaseHold(const std::string& hold_id, int64_t customer_id);
  Result<Hold> ExtendHold(const std::string& hold_id, int64_t customer_id);

  // After a payment confirmed booking_id: with a gate, its seats' keys stay until the
  // showtime starts (best effort: without them the store still refuses the seats); the
  // waiting room ends the customer's admission; the seat-change listeners hear of it
  // unless `announce` is false (a repeat after a lost answer: the maps catch up on their
  // own within their max age, and the streams are not told twice).
  void BookingConfirmed(const Booking& booking, bool announce = true);

  // When the gate calls seats taken that this instance's map shows AVAILABLE
  // (SeatMapView::ShowsAvailable), the gate may hold keys a lost release left behind: the
  // store is asked, and its yes repairs the keys. The map also lags behind holds in flight
  // and other instances' holds, so in a storm it would send every loser to the store: at
  // most one such dispute per showtime per kDisputeInterval goes to the store, the others
  // are refused as the gate says.
  // Showtimes whose layout is kept (then the table starts afresh).
  // (A layout with its best-available lists is at most about half a megabyte.)
  static constexpr size_t kMaxKnownLayouts = 1'024;
  static constexpr Millis kDisputeInterval{1'000};
  static constexpr size_t kMaxDisputedShowtimes = 10'000;  // then the table starts afresh

  // A booking its customer cancelled: its seats are for sale again at once. The gate's keys
  // (kept until the start for sold seats) are removed before this returns; the maps and the
  // live streams hear the seats released. Repeating it changes nothing.
  io::asio::awaitable<void> BookingCancelled(Booking booking);
  // The showtime's start moved (an admin's edit): read it again when next needed.
  void ShowtimeEdited(int64_t showtime_id) {
    MutexLock lock(starts_mu_);
    starts_at_.erase(showtime_id);
  }
  // A cancelled showtime's seats (all of them) read BOOKED from now on: told to the other
  // instances' caches and the live streams.
  void AnnounceCancelled(int64_t showtime_id, std::vector<std::string> seats) {
    SeatsChanged(SeatChange::Type::kBooked, showtime_id, std::move(seats));
  }

  const HoldPolicy& policy() const { return policy_; }
  // Repairs owed after lost answers (tests wait on it).
  io::FollowUps& follow_ups() { return follow_ups_; }
  SeatGate* gate() const { return gate_; }

 private:
  void SeatsChanged(SeatChange::Type type, int64_t showtime_id, std::vector<std::string> seats) {
    if (events_) events_->Publish({type, showtime_id, std::move(seats), SystemClock().Now()});
  }

  // One hold attempt on its way through Decide's steps (hold_service.cc).
  struct Attempt;
  // A hold by hand (seats) or best available (best), in named steps: Plan, SendChecks,
  // Admit, then the store decides (DecideByHand, or DecideRuled under the seat rules) and
  // the gate's keys are settled to its answer.
  io::asio::awaitable<Result<Hold>> Decide(int64_t showtime_id, int64_t customer_id,
                                           std::vector<std::string> seats,
                                           std::optional<BestAvailable> best,
                                           const std::string* admission_token);
  // Plan: what asks nobody (the seats validated) and, once per showtime and instance, the
  // store (the layout and gap rule; a layout not known yet is read only after the rate
  // limit let the attempt through); the admission token checked; the request built (best
  // available's blocks, or the seats with their guards). Not OK: the attempt ends so.
  io::asio::awaitable<Status> Plan(Attempt& a);
  // SendChecks: the rate limit and the gate claim leave in one Redis write, the claim only
  // for a request that passed every check that asks nobody.
  void SendChecks(Attempt& a);
  // Admit: the rate limit's answer, the token's, the waiting room's. A refusal gives back the
  // keys the claim may have set (token-checked: only ours go) before it is answered.
  io::asio::awaitable<Status> Admit(Attempt& a);
  // Seats picked by hand without seat rules: the gate's claim (a disputed "taken" goes to
  // the store), the store's decision, then SettleKeysByHand.
  io::asio::awaitable<Result<Hold>> DecideByHand(Attempt& a);
  // The gate's keys after the store's answer to a hold by hand: rearmed for the hold's TTL
  // (repaired when the gate had called the seats taken), or released on a refusal.
  io::asio::awaitable<void> SettleKeysByHand(const Attempt& a, const Result<Hold>& result,
                                             bool claimed, bool disputed);
  // A hold under the seat rules, once every check before the gate has passed: the gate's
  // picks decision (if it was asked), then the store, which alone decides, then
  // SettleKeysRuled.
  io::asio::awaitable<Result<Hold>> DecideRuled(HoldRequest request,
                                                std::optional<SeatGate::PicksDecision> gated);
  // The gate's keys after the store's answer to a hold under the seat rules: the claimed
  // keys of seats it did not give released, its seats' keys rearmed or repaired.
  io::asio::awaitable<void> SettleKeysRuled(const HoldRequest& request,
                                            const std::optional<SeatGate::PicksDecision>& gated,
                                            const std::vector<std::string>& claimed,
                                            const Result<Hold>& result);
  // The request's picks: best available's blocks, or its seats with their guards.
  static std::shared_ptr<const std::vector<SeatPick>> Picks(const HoldRequest& request);
  // The seats whose keys a picks claim may have set to this hold.
  static std::vector<std::string> PicksClaimed(const HoldRequest& request,
                                               const SeatGate::PicksDecision& gated);
  // The store's answer to request was lost: release it by its id should it have been made.
  void ReleaseIfMade(const HoldRequest& request);
  // Whether this instance's map shows a pick of the request that passes its rules.
  bool MapAllows(const HoldRequest& request);
  // The showtime's layout if this instance has it, else null (never reads).
  std::shared_ptr<const HallLayout> KnownLayout(int64_t showtime_id);
  Status RateLimited(Millis retry_after) const;
  // The showtime's layout and gap rule, read from the store once (they never change).
  io::asio::awaitable<Result<std::shared_ptr<const HallLayout>>> LayoutOf(int64_t showtime_id);
  // A refusal of seats picked by hand, with the alternatives this instance's map offers.
  Status WithAlternatives(Status refused, int64_t showtime_id,
                          const std::vector<std::string>& seats, const HallLayout* layout);

  Store* store_;
  SeatGate* gate_;
  RateLimiter* limiter_;
  int per_minute_;
  SeatEvents* events_;
  Admission* admission_;
  SeatMapView* maps_;
  Mutex layouts_mu_;  // a leaf
  std::unordered_map<int64_t, std::shared_ptr<const HallLayout>> layouts_
      BOX_GUARDED_BY(layouts_mu_);
  // A showtime's start (it never changes), read from the store once.
  std::optional<Instant> StartsAt(int64_t showtime_id);
  static constexpr size_t kMaxKnownShowtimes = 100'000;  // then the table starts afresh
  Mutex starts_mu_;                                      // a leaf
  std::unordered_map<int64_t, Instant> starts_at_ BOX_GUARDED_BY(starts_mu_);
  // Whether a dispute of the gate on this showtime may go to the store now.
  bool MayDispute(int64_t showtime_id);
  Mutex dispute_mu_;
  // guarded by dispute_mu_ (a leaf); a monotonic clock, which no clock step moves
  std::unordered_map<int64_t, std::chrono::steady_clock::time_point> last_dispute_
      BOX_GUARDED_BY(dispute_mu_);
  HoldPolicy policy_;
  Counter& won_;
  Counter& lost_;
  Counter& released_;
  Counter& rate_limited_;
  Counter& hold_limited_;
  Counter& gate_disputed_;
  // Last: its thread (which calls back into this service) ends before the rest is gone.
  io::FollowUps follow_ups_;
};

}  // namespace boxoffice
