// FakeGateway: `boxoffice fake-gateway`, a stand-in for the external payment gateway that
// behaves like a real one (API.md "Fake payment gateway"): sessions with expiry, described
// (amount, currency, reference, status, end) when opened or asked about, a key seen before
// answered with the session opened under it; idempotent refunds; and signed callbacks
// delivered normally, twice, never or late, retried with backoff while the receiver answers
// non-2xx. State lives in memory.
//
// It is no open redirect: a session's returnUrl must have its callbackUrl's origin, the
// service that opened it. What shows or rigs other people's sessions (the session list, the
// foreign-session test control) needs `Authorization: Bearer <secret>`.
//
// Callbacks are delivered by coroutines on the loop that took the pay, over keep-alive
// connections to each receiver (at most kMaxDeliveriesInFlight pays wait for delivery; a
// pay past that is 503).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "http/router.h"

namespace boxoffice::app {

struct FakeGatewayOptions {
  std::string secret;      // signs callbacks
  std::string public_url;  // base of the payment page URLs it hands out
  // The services it works for (--service-url): a session's callbackUrl and returnUrl must
  // have one of their origins. Empty: a returnUrl must have its callbackUrl's origin.
  std::vector<std::string> service_urls = {};
};

class FakeGateway {
 public:
  FakeGateway(FakeGatewayOptions options, const Clock* clock);
  // answer_delay (test control): session requests are answered this long late.
  FakeGateway(FakeGatewayOptions options, const Clock* clock, Millis answer_delay);
  // The server routing to it stops first: its loops end the deliveries still in flight,
  // which this waits for.
  ~FakeGateway();
  void Register(http::Router* router);

 private:
  struct State;
  std::unique_ptr<State> state_;
  Millis answer_delay_{0};
};

}  // namespace boxoffice::app
