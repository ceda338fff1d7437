#include "holds/hold_service.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "core/crypto.h"
#include "core/seats.h"
#include "store/shards.h"

namespace boxoffice {

HoldService::HoldService(Store* store, HoldPolicy policy, Metrics* metrics, SeatGate* gate)
    : store_(store),
      gate_(gate),
      policy_(policy),
      won_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                               "outcome=\"won\"")),
      lost_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                "outcome=\"lost\"")),
      released_(metrics->GetCounter("boxoffice_holds_released_total",
                                    "Holds released by their customer.")),
      rate_limited_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                        "outcome=\"rate_limited\"")),
      hold_limited_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                        "outcome=\"hold_limit\"")),
      gate_disputed_(metrics->GetCounter(
          "boxoffice_gate_disputed_total",
          "Gate refusals of seats this instance's map showed free, asked of the store.")),
      follow_ups_(metrics, "holds") {}

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
  std::lock_guard lock(layouts_mu_);
  auto it = layouts_.find(showtime_id);
  return it == layouts_.end() ? nullptr : it->second;
}

io::asio::awaitable<Result<std::shared_ptr<const HallLayout>>> HoldService::LayoutOf(
    int64_t showtime_id) {
  {
    std::lock_guard lock(layouts_mu_);
    if (auto it = layouts_.find(showtime_id); it != layouts_.end()) co_return it->second;
  }
  auto showtime = co_await store_->GetShowtimeAsync(showtime_id);
  if (!showtime.ok()) co_return showtime.status();
  std::shared_ptr<const SeatMap> map;
  if (map_source_) {
    auto cached = co_await map_source_(showtime_id);
    if (!cached.ok()) co_return cached.status();
    map = std::move(cached.value());
  } else {
    auto read = co_await store_->GetSeatMapAsync(showtime_id);
    if (!read.ok()) co_return read.status();
    map = std::make_shared<const SeatMap>(std::move(read.value()));
  }
  BOX_ASSERT(map);
  auto layout = std::make_shared<const HallLayout>(*map, showtime->forbid_single_seat_gaps);
  std::lock_guard lock(layouts_mu_);
  if (layouts_.size() >= kMaxKnownLayouts) layouts_.clear();
  layouts_.emplace(showtime_id, layout);  // a layout never changes: either copy is right
  co_return std::shared_ptr<const HallLayout>(layout);
}

Status HoldService::WithAlternatives(Status refused, int64_t showtime_id,
                                     const std::vector<std::string>& seats,
                                     const HallLayout* layout) {
  if (refused.code() != Code::kConflict && refused.code() != Code::kSingleSeatGap) return refused;
  std::vector<std::vector<std::string>> blocks;
  if (layout && map_view_) {
    if (auto map = map_view_(showtime_id))
      blocks = layout->Alternatives(seats, *map, kMaxAlternatives);
  }
  return refused.WithAlternatives(std::move(blocks));
}

io::asio::awaitable<Result<Hold>> HoldService::Decide(int64_t showtime_id, int64_t customer_id,
                                                      std::vector<std::string> seats,
                                                      std::optional<BestAvailable> best,
                                                      const std::string* admission_token) {
  // What asks nobody comes first: it decides whether a gate claim may be sent.
  auto sorted = best ? Result<std::vector<std::string>>(std::vector<std::string>{})
                     : ValidateHoldSeats(seats);
  // The layout and the gap rule (the store's, read once per showtime and instance). An
  // unknown showtime is left to the store's answer, as before there were rules. A layout
  // not known yet is read only after the rate limit has let the attempt through, so that
  // attempts past the limit (or on showtimes that do not exist) never cost a store read.
  std::shared_ptr<const HallLayout> layout;
  bool limit_checked = false;
  if (sorted.ok()) {
    layout = KnownLayout(showtime_id);
    if (!layout) {
      if (limiter_) {
        auto first = limiter_->Send(customer_id);
        const auto d = co_await limiter_->Await(std::move(first));
        if (!d.allowed) {
          rate_limited_.Inc();
          co_return RateLimited(d.retry_after);
        }
        limit_checked = true;
      }
      auto known = co_await LayoutOf(showtime_id);
      if (known.ok()) {
        layout = std::move(known.value());
      } else if (known.status().code() != Code::kNotFound) {
        co_return known.status();
      } else if (best) {
        co_return ShowtimeNotFound(showtime_id);
      }
    }
  }
  Status token =
      admission_ ? admission_->CheckToken(showtime_id, customer_id, admission_token) : Status::Ok();
  HoldRequest request{NewHoldId(showtime_id), showtime_id, customer_id,
                      sorted.ok() ? std::move(sorted.value()) : std::vector<std::string>{},
                      policy_.ttl};
  if (best) {
    if (!layout->HasCategory(best->category)) {
      co_return Status(Code::kInvalid, "showtime " + std::to_string(showtime_id) +
                                           " has no seats of category " + best->category);
    }
    request.best = layout->Best(best->count, best->category);
  } else if (layout && sorted.ok()) {
    request.guards = layout->GuardsFor(request.seats);
  }
  // Seats picked by hand and refused: with the alternatives this instance's map shows.
  auto refuse = [&](Status refused) {
    return best ? std::move(refused)
                : WithAlternatives(std::move(refused), showtime_id, request.seats, layout.get());
  };
  // The rate limit and the claim leave in one write.
  std::optional<RateLimiter::Pending> limit;
  if (limiter_ && !limit_checked) limit = limiter_->Send(customer_id);
  std::optional<SeatGate::PendingClaim> claim;
  std::optional<SeatGate::PendingPicks> picks;
  // Holds under the seat rules claim their picks (best available's blocks, or the seats
  // with their guards) in one Lua call; the others their seats, as ever.
  const bool ruled = best || !request.guards.empty();
  if (gate_ && sorted.ok() && token.ok() &&
      !(limit && limit->decided && !limit->decided->allowed)) {
    const Millis claim_ttl = std::min(policy_.gate_claim_ttl, request.ttl);
    if (!ruled) {
      claim = gate_->SendClaim(showtime_id, request.seats, request.hold_id, claim_ttl);
    } else if (!best || !request.picks().empty()) {
      picks = gate_->SendPicks(showtime_id, Picks(request), request.hold_id, claim_ttl);
    }
  }
  // A refusal after the claim was sent gives its keys back (token-checked: only ours go),
  // and is answered once they are gone.
  const bool claim_sent = claim && (claim->call || claim->decided);
  Status refused = Status::Ok();
  if (limit) {
    const auto d = co_await limiter_->Await(std::move(*limit));
    if (!d.allowed) {
      rate_limited_.Inc();
      refused = RateLimited(d.retry_after);
    }
  }
  if (refused.ok() && !token.ok()) refused = token;
  if (refused.ok() && admission_) {
    refused = co_await admission_->CheckHoldAsync(showtime_id, customer_id, admission_token,
                                                  /*token_checked=*/true);
  }
  if (!refused.ok()) {
    if (claim_sent) co_await gate_->ReleaseNow(showtime_id, request.seats, request.hold_id);
    if (picks && picks->call) {
      auto gated = co_await gate_->AwaitPicks(std::move(*picks));
      if (auto seats = PicksClaimed(request, gated); !seats.empty()) {
        co_await gate_->ReleaseNow(showtime_id, std::move(seats), request.hold_id);
      }
    }
    co_return refused;
  }
  if (!sorted.ok()) co_return sorted.status();
  if (best && request.picks().empty()) {  // no block of that size in the hall at all
    lost_.Inc();
    co_return NoBlockAvailable(request);
  }
  if (ruled) {
    std::optional<SeatGate::PicksDecision> gated;
    if (picks) gated = co_await gate_->AwaitPicks(std::move(*picks));
    std::vector<std::string> asked = request.seats;  // (request is moved on)
    auto result = co_await DecideRuled(std::move(request), std::move(gated));
    if (!result.ok() && !best) {
      co_return WithAlternatives(result.status(), showtime_id, asked, layout.get());
    }
    co_return result;
  }
  bool claimed = false;
  bool disputed = false;  // the gate said taken, this instance's map says free
  if (claim) {
    auto decision = co_await gate_->AwaitClaim(std::move(*claim));
    if (decision.verdict == SeatGate::Verdict::kTaken) {
      disputed = shown_free_ && shown_free_(showtime_id, decision.taken) && MayDispute(showtime_id);
      if (!disputed) {
        lost_.Inc();
        co_return refuse(SeatsUnavailable(request, std::move(decision.taken)));
      }
      gate_disputed_.Inc();
    }
    // A claim whose answer was lost may have set the keys: treated as ours on a refusal.
    claimed = decision.verdict == SeatGate::Verdict::kClaimed ||
              decision.verdict == SeatGate::Verdict::kUncertain;
  }
  auto result = co_await store_->HoldSeatsAsync(request);
  if (!result.ok() && result.status().maybe_applied()) ReleaseIfMade(request);
  if (result.ok()) {
    won_.Inc();
    if (claimed) gate_->Rearm(showtime_id, request.seats, request.hold_id, request.ttl);
    if (disputed) {
      co_await gate_->RepairNow(showtime_id, request.seats, request.hold_id, request.ttl);
    }
    SeatsChanged(SeatChange::Type::kHeld, showtime_id, result->seats);
  } else {
    const Code code = result.status().code();
    if (code == Code::kConflict) lost_.Inc();
    if (code == Code::kHoldLimit) hold_limited_.Inc();
    // The store said no: this hold's keys must not turn anyone else away.
    if (claimed) gate_->Release(showtime_id, request.seats, request.hold_id);
    co_return refuse(result.status());
  }
  co_return result;
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
  if (!map_view_) return false;
  auto map = map_view_(request.showtime_id);
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
  if (result.ok()) {
    won_.Inc();
    if (gate_) {
      // Keys claimed for seats the store did not give go; the store's seats get theirs.
      // (Only the difference is released: a release sent aside could land after the
      // repair and take a key of the new hold away.)
      std::vector<std::string> stale;
      std::set_difference(claimed.begin(), claimed.end(), result->seats.begin(),
                          result->seats.end(), std::back_inserter(stale));
      if (!stale.empty()) gate_->Release(showtime_id, stale, request.hold_id);
      const bool asked = gated && gated->verdict != SeatGate::Verdict::kSkipped;
      if (asked && gated->verdict == SeatGate::Verdict::kClaimed && claimed == result->seats) {
        gate_->Rearm(showtime_id, result->seats, request.hold_id, request.ttl);
      } else if (asked) {
        // Awaited: the hold is answered once its keys are set, so a release the customer
        // sends next cannot land before this repair (which would then set a dead hold's
        // keys again, or overwrite a newer hold's).
        co_await gate_->RepairNow(showtime_id, result->seats, request.hold_id, request.ttl);
      } else {
        gate_->Repair(showtime_id, result->seats, request.hold_id, request.ttl);  // resting
      }
    }
    SeatsChanged(SeatChange::Type::kHeld, showtime_id, result->seats);
    co_return result;
  }
  const Code code = result.status().code();
  if (code == Code::kConflict || code == Code::kSingleSeatGap) lost_.Inc();
  if (code == Code::kHoldLimit) hold_limited_.Inc();
  // The store said no: this hold's keys must not turn anyone else away.
  if (!claimed.empty()) gate_->Release(showtime_id, claimed, request.hold_id);
  co_return result;
}

bool HoldService::MayDispute(int64_t showtime_id) {
  const auto now = std::chrono::steady_clock::now();
  std::lock_guard lock(dispute_mu_);
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

std::optional<Instant> HoldService::StartsAt(int64_t showtime_id) {
  {
    std::lock_guard lock(starts_mu_);
    if (auto it = starts_at_.find(showtime_id); it != starts_at_.end()) return it->second;
  }
  auto showtime = store_->GetShowtime(showtime_id);  // outside the lock
  if (!showtime.ok()) return std::nullopt;
  std::lock_guard lock(starts_mu_);
  if (starts_at_.size() >= kMaxKnownShowtimes) starts_at_.clear();
  starts_at_[showtime_id] = showtime->starts_at;
  return showtime->starts_at;
}

}  // namespace boxoffice
