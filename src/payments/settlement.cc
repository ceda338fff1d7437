#include "payments/settlement.h"

#include "core/log.h"

namespace boxoffice {

PaymentService::PaymentService(Store* store, Metrics* metrics,
                               std::function<void(const Booking&)> on_confirmed)
    : store_(store), on_confirmed_(std::move(on_confirmed)) {
  for (size_t i = 0; i < settled_.size(); ++i) {
    const char* outcome = SettlementName(static_cast<Settlement>(i));
    settled_[i] = &metrics->GetCounter("boxoffice_payments_settled_total",
                                       "Payment reports (callbacks and the reconciler's) by outcome.",
                                       std::string("outcome=\"") + outcome + "\"");
  }
}

Result<Settlement> PaymentService::Settle(const PaymentReport& report, std::string_view via,
                                          std::string_view request_id) {
  Booking confirmed;
  auto settled = store_->SettlePayment(report, &confirmed);
  if (!settled.ok()) return settled.status();
  const Settlement outcome = settled.value();
  settled_[static_cast<size_t>(outcome)]->Inc();
  if (outcome == Settlement::kConfirmed && on_confirmed_) {
    // A confirmation names its booking: the store found it by this reference.
    BOX_ASSERT(confirmed.id > 0 && std::to_string(confirmed.id) == report.reference);
    on_confirmed_(confirmed);
  }
  LogInfo("payment settled", {{"paymentId", report.payment_id},
                              {"reference", report.reference},
                              {"outcome", SettlementName(outcome)},
                              {"via", std::string(via)},
                              {"requestId", std::string(request_id)}});
  return outcome;
}

}  // namespace boxoffice
