#include "holds/hold_service.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "core/crypto.h"
#include "core/seats.h"
#include "store/shards.h"

namespace boxoffice {
namespace {

Metrics* Required(Metrics* metrics) {
  BOX_ASSERT(metrics != nullptr);
  return metrics;
}

}  // namespace

struct HoldService::Attempt {
  int64_t showtime_id = 0;
  int64_t customer_id = 0;
  std::optional<BestAvailable> best;
  const std::string* admission_token = nullptr;
  // Plan's: the seats validated and sorted (empty for best available), the layout (null
  // for a showtime the store does not know: its answer says so), the token's verdict.
  Result<std::vector<std::string>> sorted = std::vector<std::string>{};
  std::shared_ptr<const HallLayout> layout;
  bool limit_checked = false;  // the rate limit was asked before the layout was read
  Status token = Status::Ok();
  HoldRequest request;
  // Under the seat rules (best available, or a showtime that forbids gaps): picks, not seats.
  bool ruled = false;
  // SendChecks': what went to Redis, in one write.
  std::optional<RateLimiter::Pending> limit;
  std::optional<SeatGate::PendingClaim> claim;
  std::optional<SeatGate::PendingPicks> picks;
};

HoldService::HoldService(const HoldServiceDeps& deps, HoldPolicy policy)
    : store_(deps.store),
      gate_(deps.gate),
      limiter_(deps.limiter),
      per_minute_(deps.holds_per_minute),
      events_(deps.events),
      admission_(deps.admission),
      maps_(deps.maps),
      policy_(policy),
      won_(Required(deps.metrics)
               ->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                            "outcome=\"won\"")),
      lost_(deps.metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                     "outcome=\"lost\"")),
      released_(deps.metrics->GetCounter("boxoffice_holds_released_total",
                                         "Holds released by their customer.")),
      rate_limited_(deps.metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                             "outcome=\"rate_limited\"")),
      hold_limited_(deps.metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                             "outcome=\"hold_limit\"")),
      gate_disputed_(deps.metrics->GetCounter(
          "boxoffice_gate_disputed_total",
          "Gate refusals of seats this instance's map showed free, asked of the store.")),
      follow_ups_(deps.metrics, "holds") {
  BOX_ASSERT(store_ != nullptr);
  BOX_ASSERT(!limiter_ || per_minute_ > 0);
  BOX_ASSERT(policy_.ttl > Millis(0) && policy_.max_lifetime >= policy_.ttl);
}

void HoldService::ReleaseIfMade(const HoldRequest& request) {
  // Past the hold's TTL it has expired by itself (and a margin for a statement that
  // commits late, which the store's statement timeout bounds).
  constexpr Millis kLateCommitMargin{30'000};
  const std::string hold_id = request.hold_id;
  const int64_t customer_id = request.customer_id;
  follow_ups_.Add(
      "release hold " + hold_id + ", whose answer was lost",
      [this, hold_id, customer_id] {
        // Through the gate and the seat maps like any release. kNotFound: not made, or not
        // yet (its statement may still be queued at the database): tried again.
        const Status s = ReleaseHold(hold_id, customer_id);
        return s.ok() || s.code() == Code::kNotActive ? io::FollowUps::Outcome::kDone
                                                      : io::FollowUps::Outcome::kRetry;
      },
      io::FollowUps::Clock::now() + policy_.ttl + kLateCommitMargin);
}

Result<Hold> HoldService::HoldSeats(int64_t showtime_id, int64_t customer_id,
                                    const std::vector<std::string>& seats,
                                    const std::string* admission_token) {
  return io::RunSync(HoldSeatsAsync(showtime_id, customer_id, seats, admission_token));
}

Result<Hold> HoldService::HoldBest(int64_t showtime_id, int64_t customer_id,
                                   const BestAvailable& best, const std::string* admission_token) {
  return io::RunSync(HoldBestAsync(showtime_id, customer_id, best, admission_token));
}

io::asio::awaitable<Result<Hold>> HoldService::HoldSeatsAsync(int64_t showtime_id,
                                                              int64_t customer_id,
                                                              std::vector<std::string> seats,
                                                              const std::string* admission_token) {
  co_return co_await Decide(showtime_id, customer_id, std::move(seats), std::nullopt,
                            admission_token);
}

io::asio::awaitable<Result<Hold>> HoldService::HoldBestAsync(int64_t showtime_id,
                                                             int64_t customer_id,
                                                             BestAvailable best,
                                                             const std::string* admission_token) {
  co_return co_await Decide(showtime_id, customer_id, {}, std::move(best), admission_token);
}

Status HoldService::RateLimited(Millis retry_after) const {
  return Status(Code::kRateLimited,
                "more than " + std::to_string(per_minute_) + " hold attempts in a minute")
      .WithRetryAfter(retry_after.count());
}

std::shared_ptr<const HallLayout> HoldService::KnownLayout(int64_t showtime_id) {
  MutexLock lock(layouts_mu_);
  auto it = layouts_.find(showtime_id);
  return it == layouts_.end() ? nullptr : it->second;
}

io::asio::awaitable<Result<std::shared_ptr<const HallLayout>>> HoldService::LayoutOf(
    int64_t showtime_id) {
  {
    MutexLock lock(layouts_mu_);
    if (auto it = layouts_.find(showtime_id); it != layouts_.end()) co_return it->second;
  }
  auto showtime = co_await store_->GetShowtimeAsync(showtime_id);
  if (!showtime.ok()) co_return showtime.status();
  std::shared_ptr<const SeatMap> map;
  if (maps_) {
    auto cached = co_await maps_->Load(showtime_id);
    if (!cached.ok()) co_return cached.status();
    map = std::move(cached.value());
  } else {
    auto read = co_await store_->GetSeatMapAsync(showtime_id);
    if (!read.ok()) co_return read.status();
    map = std::make_shared<const SeatMap>(std::move(read.value()));
  }
  BOX_ASSERT(map);
  auto layout = std::make_shared<const HallLayout>(*map, showtime->forbid_single_seat_gaps);
  MutexLock lock(layouts_mu_);
  if (layouts_.size() >= kMaxKnownLayouts) layouts_.clear();
  layouts_.emplace(showtime_id, layout);  // a layout never changes: either copy is right
  co_return std::shared_ptr<const HallLayout>(layout);
}

Status HoldService::WithAlternatives(Status refused, int64_t showtime_id,
                                     const std::vector<std::string>& seats,
                                     const HallLayout* layout) {
  if (refused.code() != Code::kConflict && refused.code() != Code::kSingleSeatGap) return refused;
  std::vector<std::vector<std::string>> blocks;
  if (layout && maps_) {
    if (auto map = maps_->Recent(showtime_id))
      blocks = layout->Alternatives(seats, *map, kMaxAlternatives);
  }
  return refused.WithAlternatives(std::move(blocks));
}

io::asio::awaitable<Result<Hold>> HoldService::Decide(int64_t showtime_id, int64_t customer_id,
                                                      std::vector<std::string> seats,
                                                      std::optional<BestAvailable> best,
                                                      const std::string* admission_token) {
  Attempt a;
  a.showtime_id = showtime_id;
  a.customer_id = customer_id;
  a.best = std::move(best);
  a.admission_token = admission_token;
  a.sorted = a.best ? Result<std::vector<std::string>>(std::vector<std::string>{})
                    : ValidateHoldSeats(seats);
  if (Status planned = co_await Plan(a); !planned.ok()) co_return planned;
  SendChecks(a);
  if (Status admitted = co_await Admit(a); !admitted.ok()) co_return admitted;
  if (!a.sorted.ok()) co_return a.sorted.status();
  if (a.best && a.request.picks().empty()) {  // no block of that size in the hall at all
    lost_.Inc();
    co_return NoBlockAvailable(a.request);
  }
  if (!a.ruled) co_return co_await DecideByHand(a);
  BOX_ASSERT(!a.claim);  // a ruled request claims picks, never plain seats
  std::optional<SeatGate::PicksDecision> gated;
  if (a.picks) gated = co_await gate_->AwaitPicks(std::move(*a.picks));
  auto result = co_await DecideRuled(a.request, std::move(gated));
  if (!result.ok() && !a.best) {
    co_return WithAlternatives(result.status(), showtime_id, a.request.seats, a.layout.get());
  }
  co_return result;
}

io::asio::awaitable<Status> HoldService::Plan(Attempt& a) {
  // The layout and the gap rule (the store's, read once per showtime and instance). An
  // unknown showtime is left to the store's answer, as before there were rules. A layout
  // not known yet is read only after the rate limit has let the attempt through, so that
  // attempts past the limit (or on showtimes that do not exist) never cost a store read.
  if (a.sorted.ok()) {
    a.layout = KnownLayout(a.showtime_id);
    if (!a.layout) {
      if (limiter_) {
        auto first = limiter_->Send(a.customer_id);
        const auto d = co_await limiter_->Await(std::move(first));
        if (!d.allowed) {
          rate_limited_.Inc();
          co_return RateLimited(d.retry_after);
        }
        a.limit_checked = true;
      }
      auto known = co_await LayoutOf(a.showtime_id);
      if (known.ok()) {
        a.layout = std::move(known.value());
      } else if (known.status().code() != Code::kNotFound) {
        co_return known.status();
      } else if (a.best) {
        co_return ShowtimeNotFound(a.showtime_id);
      }
    }
  }
  a.token = admission_ ? admission_->CheckToken(a.showtime_id, a.customer_id, a.admission_token)
                       : Status::Ok();
  a.request =
      HoldRequest{NewHoldId(a.showtime_id), a.showtime_id, a.customer_id,
                  a.sorted.ok() ? a.sorted.value() : std::vector<std::string>{}, policy_.ttl};
  if (a.best) {
    BOX_ASSERT(a.layout);  // best available without a layout ended above
    if (!a.layout->HasCategory(a.best->category)) {
      co_return Status(Code::kInvalid, "showtime " + std::to_string(a.showtime_id) +
                                           " has no seats of category " + a.best->category);
    }
    a.request.best = a.layout->Best(a.best->count, a.best->category);
  } else if (a.layout && a.sorted.ok()) {
    a.request.guards = a.layout->GuardsFor(a.request.seats);
  }
  // Holds under the seat rules claim their picks (best available's blocks, or the seats
  // with their guards) in one Lua call; the others their seats, as ever.
  a.ruled = a.best || !a.request.guards.empty();
  co_return Status::Ok();
}

void HoldService::SendChecks(Attempt& a) {
  if (limiter_ && !a.limit_checked) a.limit = limiter_->Send(a.customer_id);
  const bool limit_refused = a.limit && a.limit->decided && !a.limit->decided->allowed;
  if (!gate_ || !a.sorted.ok() || !a.token.ok() || limit_refused) return;
  const Millis claim_ttl = std::min(policy_.gate_claim_ttl, a.request.ttl);
  if (!a.ruled) {
    a.claim = gate_->SendClaim(a.showtime_id, a.request.seats, a.request.hold_id, claim_ttl);
  } else if (!a.best || !a.request.picks().empty()) {
    a.picks = gate_->SendPicks(a.showtime_id, Picks(a.request), a.request.hold_id, claim_ttl);
  }
}

io::asio::awaitable<Status> HoldService::Admit(Attempt& a) {
  Status refused = Status::Ok();
  if (a.limit) {
    const auto d = co_await limiter_->Await(std::move(*a.limit));
    a.limit.reset();
    if (!d.allowed) {
      rate_limited_.Inc();
      refused = RateLimited(d.retry_after);
    }
  }
  if (refused.ok() && !a.token.ok()) refused = a.token;
  if (refused.ok() && admission_) {
    refused = co_await admission_->CheckHoldAsync(a.showtime_id, a.customer_id, a.admission_token,
                                                  /*token_checked=*/true);
  }
  if (refused.ok()) co_return refused;
  // A refusal after the claim was sent gives its keys back, and is answered once they are
  // gone.
  if (a.claim && (a.claim->call || a.claim->decided)) {
    co_await gate_->ReleaseNow(a.showtime_id, a.request.seats, a.request.hold_id);
  }
  a.claim.reset();
  if (a.picks && a.picks->call) {
    auto gated = co_await gate_->AwaitPicks(std::move(*a.picks));
    if (auto seats = PicksClaimed(a.request, gated); !seats.empty()) {
      co_await gate_->ReleaseNow(a.showtime_id, std::move(seats), a.request.hold_id);
    }
  }
  a.picks.reset();
  co_return refused;
}

io::asio::awaitable<Result<Hold>> HoldService::DecideByHand(Attempt& a) {
  const HoldRequest& request = a.request;
  bool claimed = false;
  bool disputed = false;  // the gate said taken, this instance's map says free
  if (a.claim) {
    auto decision = co_await gate_->AwaitClaim(std::move(*a.claim));
    if (decision.verdict == SeatGate::Verdict::kTaken) {
      disputed = maps_ && maps_->ShowsAvailable(a.showtime_id, decision.taken) &&
                 MayDispute(a.showtime_id);
      if (!disputed) {
        lost_.Inc();
        co_return WithAlternatives(SeatsUnavailable(request, std::move(decision.taken)),
                                   a.showtime_id, request.seats, a.layout.get());
      }
      gate_disputed_.Inc();
    }
    // A claim whose answer was lost may have set the keys: treated as ours on a refusal.
    claimed = decision.verdict == SeatGate::Verdict::kClaimed ||
              decision.verdict == SeatGate::Verdict::kUncertain;
  }
  auto result = co_await store_->HoldSeatsAsync(request);
  if (!result.ok() && result.status().maybe_applied()) ReleaseIfMade(request);
  co_await SettleKeysByHand(a, result, claimed, disputed);
  if (result.ok()) {
    won_.Inc();
    SeatsChanged(SeatChange::Type::kHeld, a.showtime_id, result->seats);
    co_return result;
  }
  const Code code = result.status().code();
  if (code == Code::kConflict) lost_.Inc();
  if (code == Code::kHoldLimit) hold_limited_.Inc();
  co_return WithAlternatives(result.status(), a.showtime_id, request.seats, a.layout.get());
}

io::asio::awaitable<void> HoldService::SettleKeysByHand(const Attempt& a,
                                                        const Result<Hold>& result, bool claimed,
                                                        bool disputed) {
  const HoldRequest& request = a.request;
  if (!result.ok()) {
    // The store said no: this hold's keys must not turn anyone else away.
    if (claimed) gate_->Release(a.showtime_id, request.seats, request.hold_id);
    co_return;
  }
  if (claimed) gate_->Rearm(a.showtime_id, request.seats, request.hold_id, request.ttl);
  if (disputed) {
    co_await gate_->RepairNow(a.showtime_id, request.seats, request.hold_id, request.ttl);
  }
}

std::shared_ptr<const std::vector<SeatPick>> HoldService::Picks(const HoldRequest& request) {
  if (request.is_best()) return request.best;
  return std::make_shared<const std::vector<SeatPick>>(
      std::vector<SeatPick>{SeatPick{request.seats, request.guards}});
}

std::vector<std::string> HoldService::PicksClaimed(const HoldRequest& request,
                                                   const SeatGate::PicksDecision& gated) {
  std::vector<std::string> seats;
  if (gated.verdict == SeatGate::Verdict::kClaimed) {
    return request.is_best() ? request.picks()[gated.chosen - 1].seats : request.seats;
  }
  if (gated.verdict == SeatGate::Verdict::kUncertain) {  // any pick may carry our keys
    const auto picks = Picks(request);  // (held: a range over *Picks(...) would dangle)
    for (const SeatPick& pick : *picks) {
      seats.insert(seats.end(), pick.seats.begin(), pick.seats.end());
    }
    std::sort(seats.begin(), seats.end());
    seats.erase(std::unique(seats.begin(), seats.end()), seats.end());
  }
  return seats;
}

bool HoldService::MapAllows(const HoldRequest& request) {
  if (!maps_) return false;
  auto map = maps_->Recent(request.showtime_id);
  if (!map) return false;
  std::unordered_map<std::string, bool> free;
  for (const auto& s : map->seats) free.emplace(s.code, s.status == SeatStatus::kAvailable);
  auto is_free = [&](const std::string& code) {
    auto it = free.find(code);
    return it != free.end() && it->second;
  };
  const auto picks = Picks(request);  // (held: a range over *Picks(...) would dangle)
  for (const SeatPick& pick : *picks) {
    if (CheckPick(pick.seats, pick.guards, is_free).ok()) return true;
  }
  return false;
}

io::asio::awaitable<Result<Hold>> HoldService::DecideRuled(
    HoldRequest request, std::optional<SeatGate::PicksDecision> gated) {
  const int64_t showtime_id = request.showtime_id;
  std::vector<std::string> claimed;  // seats whose keys may be ours
  if (gated) claimed = PicksClaimed(request, *gated);
  // The gate claimed a block: the store holds that one (its guards checked again there).
  std::optional<HoldRequest> narrowed;
  if (gated && gated->verdict == SeatGate::Verdict::kClaimed && request.is_best()) {
    const SeatPick& pick = request.picks()[gated->chosen - 1];
    narrowed = HoldRequest{request.hold_id, showtime_id, request.customer_id,
                           pick.seats,      request.ttl, pick.guards};
  }
  if (gated && gated->verdict == SeatGate::Verdict::kTaken) {
    // Keys a lost release left behind may be what refused it: when this instance's map
    // shows a pick that passes, the store is asked (at most one such dispute per showtime
    // per kDisputeInterval), as for seats picked by hand.
    if (!(MapAllows(request) && MayDispute(showtime_id))) {
      lost_.Inc();
      if (request.is_best()) co_return NoBlockAvailable(request);
      if (!gated->taken.empty()) co_return SeatsUnavailable(request, std::move(gated->taken));
      co_return SingleSeatGap(request, std::move(gated->stranded));
    }
    gate_disputed_.Inc();
  }
  auto result = co_await store_->HoldSeatsAsync(narrowed ? *narrowed : request);
  if (narrowed && !result.ok() &&
      (result.status().code() == Code::kConflict ||
       result.status().code() == Code::kSingleSeatGap)) {
    // The store knew better than the gate's keys: it decides from every block itself (the
    // claimed keys are let go below, once the store has chosen).
    result = co_await store_->HoldSeatsAsync(request);
  }
  if (!result.ok() && result.status().maybe_applied()) ReleaseIfMade(request);
  if (gate_) co_await SettleKeysRuled(request, gated, claimed, result);
  if (result.ok()) {
    won_.Inc();
    SeatsChanged(SeatChange::Type::kHeld, showtime_id, result->seats);
    co_return result;
  }
  const Code code = result.status().code();
  if (code == Code::kConflict || code == Code::kSingleSeatGap) lost_.Inc();
  if (code == Code::kHoldLimit) hold_limited_.Inc();
  co_return result;
}

io::asio::awaitable<void> HoldService::SettleKeysRuled(
    const HoldRequest& request, const std::optional<SeatGate::PicksDecision>& gated,
    const std::vector<std::string>& claimed, const Result<Hold>& result) {
  const int64_t showtime_id = request.showtime_id;
  if (!result.ok()) {
    // The store said no: this hold's keys must not turn anyone else away.
    if (!claimed.empty()) gate_->Release(showtime_id, claimed, request.hold_id);
    co_return;
  }
  // Keys claimed for seats the store did not give go; the store's seats get theirs.
  // (Only the difference is released: a release sent aside could land after the repair and
  // take a key of the new hold away.)
  std::vector<std::string> stale;
  std::set_difference(claimed.begin(), claimed.end(), result->seats.begin(), result->seats.end(),
                      std::back_inserter(stale));
  if (!stale.empty()) gate_->Release(showtime_id, stale, request.hold_id);
  const bool asked = gated && gated->verdict != SeatGate::Verdict::kSkipped;
  if (asked && gated->verdict == SeatGate::Verdict::kClaimed && claimed == result->seats) {
    gate_->Rearm(showtime_id, result->seats, request.hold_id, request.ttl);
  } else if (asked) {
    // Awaited: the hold is answered once its keys are set, so a release the customer sends
    // next cannot land before this repair (which would then set a dead hold's keys again,
    // or overwrite a newer hold's).
    co_await gate_->RepairNow(showtime_id, result->seats, request.hold_id, request.ttl);
  } else {
    gate_->Repair(showtime_id, result->seats, request.hold_id, request.ttl);  // resting
  }
}

bool HoldService::MayDispute(int64_t showtime_id) {
  const auto now = std::chrono::steady_clock::now();
  MutexLock lock(dispute_mu_);
  if (last_dispute_.size() >= kMaxDisputedShowtimes) last_dispute_.clear();
  auto [it, fresh] = last_dispute_.try_emplace(showtime_id, now);
  if (fresh) return true;
  if (now - it->second < kDisputeInterval) return false;
  it->second = now;
  return true;
}

io::asio::awaitable<Result<Hold>> HoldService::GetHoldAsync(std::string hold_id,
                                                            int64_t customer_id) {
  co_return co_await store_->HoldActionAsync(Store::HoldAction::kRead, std::move(hold_id),
                                             customer_id, Millis(0), Millis(0));
}

io::asio::awaitable<Status> HoldService::ReleaseHoldAsync(std::string hold_id,
                                                          int64_t customer_id) {
  auto hold = co_await store_->HoldActionAsync(Store::HoldAction::kRelease, hold_id, customer_id,
                                               Millis(0), Millis(0));
  if (!hold.ok()) co_return hold.status();
  released_.Inc();
  // Awaited: the 204 goes out once the keys are gone, so the seats the customer just gave
  // back are not turned away by the gate when someone (maybe the customer) asks next.
  if (gate_) co_await gate_->ReleaseNow(hold->showtime_id, hold->seats, hold_id);
  // Only a live hold's seats changed; one already released or expired freed nothing now.
  if (hold->state == HoldState::kHeld)
    SeatsChanged(SeatChange::Type::kReleased, hold->showtime_id, hold->seats);
  co_return Status::Ok();
}

io::asio::awaitable<Result<Hold>> HoldService::ExtendHoldAsync(std::string hold_id,
                                                               int64_t customer_id) {
  auto hold = co_await store_->HoldActionAsync(Store::HoldAction::kExtend, hold_id, customer_id,
                                               policy_.ttl, policy_.max_lifetime);
  if (hold.ok() && gate_) {
    gate_->Rearm(hold->showtime_id, hold->seats, hold_id,
                 std::chrono::duration_cast<Millis>(hold->expires_at - SystemClock().Now()));
  }
  co_return hold;
}

Result<Hold> HoldService::GetHold(const std::string& hold_id, int64_t customer_id) {
  return io::RunSync(GetHoldAsync(hold_id, customer_id));
}

Status HoldService::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  return io::RunSync(ReleaseHoldAsync(hold_id, customer_id));
}

Result<Hold> HoldService::ExtendHold(const std::string& hold_id, int64_t customer_id) {
  return io::RunSync(ExtendHoldAsync(hold_id, customer_id));
}

}  // namespace boxoffice

namespace boxoffice {

void HoldService::BookingConfirmed(const Booking& booking, bool announce) {
  if (admission_) admission_->BookingConfirmed(booking.showtime_id, booking.customer_id);
  if (announce) SeatsChanged(SeatChange::Type::kBooked, booking.showtime_id, booking.seats);
  if (!gate_) return;
  auto starts = StartsAt(booking.showtime_id);
  if (!starts) return;
  gate_->KeepUntil(booking.showtime_id, booking.seats, booking.hold_id, *starts);
}

io::asio::awaitable<void> HoldService::BookingCancelled(Booking booking) {
  if (gate_) co_await gate_->ReleaseNow(booking.showtime_id, booking.seats, booking.hold_id);
  SeatsChanged(SeatChange::Type::kReleased, booking.showtime_id, booking.seats);
}

std::optional<Instant> HoldService::StartsAt(int64_t showtime_id) {
  {
    MutexLock lock(starts_mu_);
    if (auto it = starts_at_.find(showtime_id); it != starts_at_.end()) return it->second;
  }
  auto showtime = store_->GetShowtime(showtime_id);  // outside the lock
  if (!showtime.ok()) return std::nullopt;
  MutexLock lock(starts_mu_);
  if (starts_at_.size() >= kMaxKnownShowtimes) starts_at_.clear();
  starts_at_[showtime_id] = showtime->starts_at;
  return showtime->starts_at;
}

}  // namespace boxoffice
