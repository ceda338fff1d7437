// Gateway: the external payment gateway as the services see it (API.md "Fake payment
// gateway" is its contract). HttpGateway speaks to it over HTTP with a timeout per call
// and a bounded number of retries for calls that are safe to repeat (status queries, and
// refunds, which carry an idempotency key).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/clock.h"
#include "core/status.h"
#include "io/loop.h"

namespace boxoffice::http {
class HttpPool;
}

namespace boxoffice {

// A payment session as the gateway describes it when it opens one. Everything but the id
// and the URL is what the gateway says the session is for, so the caller can check that it
// got the session it asked for (a gateway answering an idempotency key it has seen before
// returns the session it opened then, whoever asked): empty or nullopt when the answer
// lacked the field or carried it malformed.
struct GatewaySession {
  std::string session_id;
  std::string url;
  std::optional<int64_t> amount;  // minor units
  std::string currency;
  std::string reference;
  std::string status;                 // OPEN, PAID, FAILED, EXPIRED
  std::optional<Instant> expires_at;  // when it stops taking payments
};

struct GatewaySessionStatus {
  std::string status;  // OPEN, PAID, FAILED, EXPIRED
  std::string payment_id;
};

class Gateway {
 public:
  virtual ~Gateway() = default;
  // Opens a payment session; idempotency_key makes a retry return the same session (and a
  // key the gateway saw before, from anyone using the same account, returns the session
  // opened then: callers check what comes back). The gateway posts the outcome to
  // callback_url and sends the customer's browser back to return_url (empty: none) once
  // they pay or give up on its page.
  virtual Result<GatewaySession> CreateSession(int64_t amount, const std::string& currency,
                                               const std::string& reference,
                                               const std::string& callback_url,
                                               const std::string& return_url, Instant expires_at,
                                               const std::string& idempotency_key) = 0;
  // The same, awaited on an I/O loop (by default CreateSession on the blocking pool).
  virtual io::asio::awaitable<Result<GatewaySession>> CreateSessionAsync(
      int64_t amount, std::string currency, std::string reference, std::string callback_url,
      std::string return_url, Instant expires_at, std::string idempotency_key);
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
  // Calls waiting on the gateway at once, per I/O loop; past it checkout answers 503 at
  // once (a gateway that stops answering costs a bounded number of sockets, no threads).
  size_t max_in_flight = 256;
};

// On an I/O loop, calls go through a keep-alive pool awaited by the request's coroutine
// (http/async_client.h); elsewhere they block, one connection per call.
class HttpGateway final : public Gateway {
 public:
  explicit HttpGateway(HttpGatewayOptions options);
  ~HttpGateway() override;
  Result<GatewaySession> CreateSession(int64_t amount, const std::string& currency,
                                       const std::string& reference,
                                       const std::string& callback_url,
                                       const std::string& return_url, Instant expires_at,
                                       const std::string& idempotency_key) override;
  io::asio::awaitable<Result<GatewaySession>> CreateSessionAsync(
      int64_t amount, std::string currency, std::string reference, std::string callback_url,
      std::string return_url, Instant expires_at, std::string idempotency_key) override;
  Result<GatewaySessionStatus> GetSession(const std::string& session_id) override;
  Result<std::string> Refund(const std::string& payment_id, int64_t amount,
                             const std::string& idempotency_key) override;

 private:
  HttpGatewayOptions options_;
  std::unique_ptr<http::HttpPool> pool_;  // null: the base URL is not http://HOST:PORT
};

}  // namespace boxoffice
