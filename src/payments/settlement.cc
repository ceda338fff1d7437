#include "payments/settlement.h"

#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

PaymentService::PaymentService(PaymentStore* store, Metrics* metrics, OnConfirmed on_confirmed)
    : store_(store), on_confirmed_(std::move(on_confirmed)) {
  for (size_t i = 0; i < settled_.size(); ++i) {
    const char* outcome = SettlementName(static_cast<Settlement>(i));
    settled_[i] = &metrics->GetCounter("boxoffice_payments_settled_total",
                                       "Payment reports (callbacks and the reconciler's) by outcome.",
                                       std::string("outcome=\"") + outcome + "\"");
  }
}

void PaymentService::Settled(const PaymentReport& report, Settlement outcome,
                             const Booking& confirmed, std::string_view via,
                             std::string_view request_id) {
  // A Settlement of our own (kOtherSession is the last): the table is sized by it.
  BOX_ASSERT(static_cast<size_t>(outcome) < settled_.size());
  settled_[static_cast<size_t>(outcome)]->Inc();
  // A duplicate of the payment that confirmed its booking tells the hold path again: the
  // answer to the first report may have been lost (a 503 the gateway retried), and with it
  // the news (the waiting room's admission, the gate's keys, the maps). Each is idempotent.
  const bool confirms = outcome == Settlement::kConfirmed ||
                        (outcome == Settlement::kDuplicate && confirmed.id > 0 &&
                         confirmed.status == BookingStatus::kConfirmed);
  if (confirms && on_confirmed_) {
    // The store found the booking by this reference, whose one spelling is its id
    // (ParseDecimalId). This runs after the commit: a confirmation without its booking is
    // logged, and its follow-up (the gate, the maps, the waiting room) left to their own
    // expiry, rather than ending the process with the payment already recorded.
    if (confirmed.id > 0 && std::to_string(confirmed.id) == report.reference) {
      on_confirmed_(confirmed, outcome == Settlement::kConfirmed);
    } else {
      LogError("a confirmation came back without its booking",
               {{"reference", report.reference}, {"bookingId", confirmed.id}});
    }
  }
  LogInfo("payment settled", {{"paymentId", report.payment_id},
                              {"reference", report.reference},
                              {"outcome", SettlementName(outcome)},
                              {"via", std::string(via)},
                              {"requestId", std::string(request_id)}});
}

Result<Settlement> PaymentService::Settle(const PaymentReport& report, std::string_view via,
                                          std::string_view request_id) {
  Booking confirmed;
  auto settled = store_->SettlePayment(report, &confirmed);
  if (!settled.ok()) return settled.status();
  Settled(report, settled.value(), confirmed, via, request_id);
  return settled.value();
}

io::asio::awaitable<Result<Settlement>> PaymentService::SettleAsync(PaymentReport report,
                                                                    std::string via,
                                                                    std::string request_id) {
  // The place this report's work on the blocking pool will take, kept from now on: a burst
  // of callbacks is refused here (the gateway retries) rather than queued without bound.
  io::PoolPlace place;
  if (!place.ok()) co_return Status(Code::kUnavailable, "server busy, retry shortly");
  Booking confirmed;
  auto at_once = co_await store_->TryConfirmPaymentAsync(report, &confirmed);
  if (!at_once.ok()) co_return at_once.status();
  // A duplicate in one step says nothing of its booking: the general path finds it (and
  // tells the hold path again of a confirmation whose first answer was lost).
  if (at_once.value() == Settlement::kDuplicate) at_once = std::optional<Settlement>();
  // What follows may block on Redis (the waiting room, the gate, the seat maps hear of a
  // confirmation), and every case but the one-step ones is the general transaction: both
  // run on the blocking pool, in the place taken above.
  place.Give();
  if (at_once.value()) {
    // Committed: the gateway is answered now, and the hold path hears of it right after.
    // (Should the process die first, the gate's keys run out, the map reloads within its
    // max age and the admission ends with its TTL: slower, never wrong.)
    const Settlement outcome = *at_once.value();
    io::OffloadDetached([this, report, outcome, confirmed, via, request_id] {
      Settled(report, outcome, confirmed, via, request_id);
    });
    co_return outcome;
  }
  auto settle = [this, report, via, request_id]() -> Result<Settlement> {
    return Settle(report, via, request_id);
  };
  co_return co_await io::Offload(std::move(settle), /*may_refuse=*/false);
}

}  // namespace boxoffice
