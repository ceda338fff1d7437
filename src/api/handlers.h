// The HTTP API of API.md: routes, authentication, and the one place where a Status becomes
// an HTTP status code and error body. Handlers are plain functions of a request.
#pragma once

#include <string>

#include "api/seat_map_cache.h"
#include "api/seat_streams.h"
#include "core/clock.h"
#include "core/metrics.h"
#include "holds/hold_service.h"
#include "http/router.h"
#include "payments/checkout.h"
#include "payments/settlement.h"
#include "store/store.h"

namespace boxoffice::api {

struct ApiDeps {
  Store* store = nullptr;
  HoldService* holds = nullptr;
  CheckoutService* checkout = nullptr;
  PaymentService* payments = nullptr;
  SeatGate* gate = nullptr;  // null: no Redis configured
  SeatMapCache* seat_maps = nullptr;
  SeatStreams* seat_streams = nullptr;
  Admission* admission = nullptr;
  Metrics* metrics = nullptr;
  const Clock* clock = nullptr;  // for token expiry
  std::string jwt_secret;
  std::string gateway_secret;  // empty: every callback is refused
  std::string ticket_secret;   // signs ticket codes (≥ kMinTicketSecretLength)
};

// Adds every route to router; deps must outlive it.
void RegisterRoutes(http::Router* router, const ApiDeps& deps);

// The mapping of expected outcomes to HTTP (exposed for tests).
http::Response StatusResponse(const Status& status);

}  // namespace boxoffice::api
