#include "holds/hold_service.h"

#include <algorithm>
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
          "Gate refusals of seats this instance's map showed free, asked of the store.")) {}

Result<Hold> HoldService::HoldSeats(int64_t showtime_id, int64_t customer_id,
                                    const std::vector<std::string>& seats,
                                    const std::string* admission_token) {
  return io::RunSync(HoldSeatsAsync(showtime_id, customer_id, seats, admission_token));
}

io::asio::awaitable<Result<Hold>> HoldService::HoldSeatsAsync(int64_t showtime_id,
                                                              int64_t customer_id,
                                                              std::vector<std::string> seats,
                                                              const std::string* admission_token) {
  // What asks nobody comes first: it decides whether a gate claim may be sent.
  auto sorted = ValidateHoldSeats(seats);
  Status token =
      admission_ ? admission_->CheckToken(showtime_id, customer_id, admission_token) : Status::Ok();
  HoldRequest request{NewHoldId(showtime_id), showtime_id, customer_id,
                      sorted.ok() ? std::move(sorted.value()) : std::vector<std::string>{},
                      policy_.ttl};
  // The rate limit and the claim leave in one write.
  std::optional<RateLimiter::Pending> limit;
  if (limiter_) limit = limiter_->Send(customer_id);
  std::optional<SeatGate::PendingClaim> claim;
  if (gate_ && sorted.ok() && token.ok() &&
      !(limit && limit->decided && !limit->decided->allowed)) {
    claim = gate_->SendClaim(showtime_id, request.seats, request.hold_id,
                             std::min(policy_.gate_claim_ttl, request.ttl));
  }
  // A refusal after the claim was sent gives its keys back (token-checked: only ours go),
  // and is answered once they are gone.
  const bool claim_sent = claim && (claim->call || claim->decided);
  Status refused = Status::Ok();
  if (limit) {
    const auto d = co_await limiter_->Await(std::move(*limit));
    if (!d.allowed) {
      rate_limited_.Inc();
      refused = Status(Code::kRateLimited,
                       "more than " + std::to_string(per_minute_) + " hold attempts in a minute")
                    .WithRetryAfter(d.retry_after.count());
    }
  }
  if (refused.ok() && !token.ok()) refused = token;
  if (refused.ok() && admission_) {
    refused = co_await admission_->CheckHoldAsync(showtime_id, customer_id, admission_token,
                                                  /*token_checked=*/true);
  }
  if (!refused.ok()) {
    if (claim_sent) co_await gate_->ReleaseNow(showtime_id, request.seats, request.hold_id);
    co_return refused;
  }
  if (!sorted.ok()) co_return sorted.status();
  bool claimed = false;
  bool disputed = false;  // the gate said taken, this instance's map says free
  if (claim) {
    auto decision = co_await gate_->AwaitClaim(std::move(*claim));
    if (decision.verdict == SeatGate::Verdict::kTaken) {
      disputed = shown_free_ && shown_free_(showtime_id, decision.taken) && MayDispute(showtime_id);
      if (!disputed) {
        lost_.Inc();
        co_return SeatsUnavailable(request, std::move(decision.taken));
      }
      gate_disputed_.Inc();
    }
    // A claim whose answer was lost may have set the keys: treated as ours on a refusal.
    claimed = decision.verdict == SeatGate::Verdict::kClaimed ||
              decision.verdict == SeatGate::Verdict::kUncertain;
  }
  auto result = co_await store_->HoldSeatsAsync(request);
  if (result.ok()) {
    won_.Inc();
    if (claimed) gate_->Rearm(showtime_id, request.seats, request.hold_id, request.ttl);
    if (disputed) {
      co_await gate_->RepairNow(showtime_id, request.seats, request.hold_id, request.ttl);
    }
    SeatsChanged(SeatChange::Type::kHeld, showtime_id, result->seats);
  } else {
    if (result.status().code() == Code::kConflict) lost_.Inc();
    if (result.status().code() == Code::kHoldLimit) hold_limited_.Inc();
    // The store said no: this hold's keys must not turn anyone else away.
    if (claimed) gate_->Release(showtime_id, request.seats, request.hold_id);
  }
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

void HoldService::BookingConfirmed(const Booking& booking) {
  if (admission_) admission_->BookingConfirmed(booking.showtime_id, booking.customer_id);
  SeatsChanged(SeatChange::Type::kBooked, booking.showtime_id, booking.seats);
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
