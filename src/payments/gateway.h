// Gateway: the external payment gateway as the services see it (API.md "Fake payment
// gateway" is its contract). HttpGateway speaks to it over HTTP with a timeout per call
// and a bounded number of retries for calls that are safe to repeat (status queries, and
// refunds, which carry an idempotency key).
#pragma once

#include <string>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice {

struct GatewaySession {
  std::string session_id;
  std::string url;
};

struct GatewaySessionStatus {
  std::string status;  // OPEN, PAID, FAILED, EXPIRED
  std::string payment_id;
};

class Gateway {
 public:
  virtual ~Gateway() = default;
  // Opens a payment session; idempotency_key makes a retry return the same session.
  virtual Result<GatewaySession> CreateSession(int64_t amount, const std::string& currency,
                                               const std::string& reference,
                                               const std::string& callback_url, Instant expires_at,
                                               const std::string& idempotency_key) = 0;
  virtual Result<GatewaySessionStatus> GetSession(const std::string& session_id) = 0;
  // Asks for a refund; the same key always names the same refund. Returns its id.
  virtual Result<std::string> Refund(const std::string& payment_id, int64_t amount,
                                     const std::string& idempotency_key) = 0;
};

struct HttpGatewayOptions {
  std::string base_url = "http://127.0.0.1:9090";
  Millis timeout{2'000};    // per attempt
  int attempts = 3;         // for idempotent calls; 1 + retries
  Millis retry_delay{100};  // doubled after each failed attempt
};

class HttpGateway final : public Gateway {
 public:
  explicit HttpGateway(HttpGatewayOptions options);
  Result<GatewaySession> CreateSession(int64_t amount, const std::string& currency,
                                       const std::string& reference,
                                       const std::string& callback_url, Instant expires_at,
                                       const std::string& idempotency_key) override;
  Result<GatewaySessionStatus> GetSession(const std::string& session_id) override;
  Result<std::string> Refund(const std::string& payment_id, int64_t amount,
                             const std::string& idempotency_key) override;

 private:
  HttpGatewayOptions options_;
};

}  // namespace boxoffice
