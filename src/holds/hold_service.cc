#include "holds/hold_service.h"

#include "core/crypto.h"
#include "core/seats.h"

namespace boxoffice {

HoldService::HoldService(Store* store, HoldPolicy policy, Metrics* metrics)
    : store_(store),
      policy_(policy),
      won_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                               "outcome=\"won\"")),
      lost_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                "outcome=\"lost\"")),
      released_(metrics->GetCounter("boxoffice_holds_released_total",
                                    "Holds released by their customer.")) {}

Result<Hold> HoldService::HoldSeats(int64_t showtime_id, int64_t customer_id,
                                    const std::vector<std::string>& seats) {
  auto sorted = ValidateHoldSeats(seats);
  if (!sorted.ok()) return sorted.status();
  HoldRequest request{NewUuid(), showtime_id, customer_id, std::move(sorted.value()), policy_.ttl};
  auto result = store_->HoldSeats(request);
  if (result.ok()) {
    won_.Inc();
  } else if (result.status().code() == Code::kConflict) {
    lost_.Inc();
  }
  return result;
}

Result<Hold> HoldService::GetHold(const std::string& hold_id, int64_t customer_id) {
  return store_->GetHold(hold_id, customer_id);
}

Status HoldService::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  Status s = store_->ReleaseHold(hold_id, customer_id);
  if (s.ok()) released_.Inc();
  return s;
}

Result<Hold> HoldService::ExtendHold(const std::string& hold_id, int64_t customer_id) {
  return store_->ExtendHold(hold_id, customer_id, policy_.ttl, policy_.max_lifetime);
}

}  // namespace boxoffice
