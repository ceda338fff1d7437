// PaymentService: what a payment report does, whoever brings it: the gateway's signed
// callback, or the reconciler asking after a callback that never came.
//
// The store applies a report exactly once per payment id, all in one transaction
// (PaymentStore::SettlePayment: confirmed, failed, refunded, or a duplicate that changes nothing).
// Then, for a confirmed booking, on_confirmed tells the hold path (the gate keeps the seats
// until the showtime, the seat maps and the waiting room hear of it). Every report is
// counted by outcome (boxoffice_payments_settled_total) and logged. Handlers translate
// HTTP to a report and back; this decides what follows.
#pragma once

#include <array>
#include <functional>
#include <string_view>

#include "core/metrics.h"
#include "io/loop.h"
#include "store/payment_store.h"

namespace boxoffice {

class PaymentService {
 public:
  // on_confirmed: called with each booking a report confirmed, as the store left it, with
  // first = true; and again, with first = false, for a duplicate of that report (the
  // answer to the first may have been lost before the hold path heard of it). May be empty.
  using OnConfirmed = std::function<void(const Booking&, bool first)>;
  PaymentService(PaymentStore* store, Metrics* metrics, OnConfirmed on_confirmed);

  // via: who brought the report ("callback", "reconciler"), for the log.
  Result<Settlement> Settle(const PaymentReport& report, std::string_view via,
                            std::string_view request_id = "");
  // The same, awaited on an I/O loop: a confirmation in one statement when the store
  // decides that case in one step (PaymentStore::TryConfirmPaymentAsync), every other case on the
  // loop's blocking pool. kUnavailable when that pool is full as the report arrives (the
  // gateway retries); once the report is taken, its work is never refused.
  io::asio::awaitable<Result<Settlement>> SettleAsync(PaymentReport report, std::string via,
                                                      std::string request_id);

 private:
  // Counts, tells the hold path of a confirmation, and logs.
  void Settled(const PaymentReport& report, Settlement outcome, const Booking& confirmed,
               std::string_view via, std::string_view request_id);

  PaymentStore* store_;
  OnConfirmed on_confirmed_;
  // One counter per outcome, registered at construction: no registry lock per report.
  std::array<Counter*, static_cast<size_t>(Settlement::kOtherSession) + 1> settled_{};
};

}  // namespace boxoffice
