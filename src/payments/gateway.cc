#include "payments/gateway.h"

#include <nlohmann/json.hpp>
#include <thread>

#include "core/text.h"
#include "core/time_format.h"
#include "http/client.h"

namespace boxoffice {
namespace {

using nlohmann::json;

constexpr size_t kMaxGatewayIdLength = 200;    // ids, as a callback's (api/json_io.h)
constexpr size_t kMaxGatewayUrlLength = 2'048;  // a payment page's URL

// Calls the gateway; retries transport failures and 5xx answers (every call made here
// is safe to repeat: reads, or writes with an idempotency key).
Result<json> Call(const HttpGatewayOptions& o, const std::string& method, const std::string& path,
                  const std::string& body,
                  const std::vector<std::pair<std::string, std::string>>& headers,
                  int expected_status) {
  auto url = http::ParseHttpUrl(o.base_url);
  if (!url) return Status(Code::kInvalid, "bad gateway URL " + o.base_url);
  const std::string base = url->target == "/" ? "" : url->target;
  Millis delay = o.retry_delay;
  Status last(Code::kUnavailable, "gateway not called");
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    auto r = http::Fetch(url->host, url->port, method, base + path, body, headers, o.timeout);
    if (r.ok() && r->status == expected_status) {
      auto j = json::parse(r->body, nullptr, false);
      if (j.is_object()) return j;
      return Status(Code::kInternal, "gateway answered " + path + " with a body that is not JSON");
    }
    if (r.ok() && r->status < 500) {
      // The gateway refused: retrying the same request will not change its mind.
      return Status(r->status == 404 ? Code::kNotFound : Code::kInvalid,
                    "gateway answered " + std::to_string(r->status) + " to " + path + ": " +
                        CleanTextPrefix(r->body, 200));
    }
    last = r.ok() ? Status(Code::kUnavailable, "gateway answered " + std::to_string(r->status))
                  : r.status();
    if (attempt < o.attempts) {
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
  }
  return last;
}

// An id the gateway gave us, as we store it: short, clean text (PostgreSQL would cut one
// at U+0000 and make two ids one), or empty when absent or not a string.
std::string IdField(const json& body, const char* field, size_t max = kMaxGatewayIdLength) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_string()) return "";
  const std::string& id = it->get_ref<const std::string&>();
  return id.size() <= max && IsCleanText(id) ? id : "";
}

}  // namespace

HttpGateway::HttpGateway(HttpGatewayOptions options) : options_(std::move(options)) {}

Result<GatewaySession> HttpGateway::CreateSession(int64_t amount, const std::string& currency,
                                                  const std::string& reference,
                                                  const std::string& callback_url,
                                                  Instant expires_at,
                                                  const std::string& idempotency_key) {
  auto r = Call(options_, "POST", "/v1/sessions",
                json{{"amount", amount},
                     {"currency", currency},
                     {"reference", reference},
                     {"callbackUrl", callback_url},
                     {"expiresAt", FormatRfc3339(expires_at)}}
                    .dump(),
                {{"Idempotency-Key", idempotency_key}}, 201);
  if (!r.ok()) return r.status();
  GatewaySession session{IdField(*r, "sessionId"), IdField(*r, "url", kMaxGatewayUrlLength)};
  if (session.session_id.empty()) return Status(Code::kInternal, "gateway session without sessionId");
  return session;
}

Result<GatewaySessionStatus> HttpGateway::GetSession(const std::string& session_id) {
  auto r = Call(options_, "GET", "/v1/sessions/" + session_id, "", {}, 200);
  if (!r.ok()) return r.status();
  return GatewaySessionStatus{IdField(*r, "status"), IdField(*r, "paymentId")};
}

Result<std::string> HttpGateway::Refund(const std::string& payment_id, int64_t amount,
                                        const std::string& idempotency_key) {
  auto r = Call(options_, "POST", "/v1/refunds",
                json{{"paymentId", payment_id}, {"amount", amount}}.dump(),
                {{"Idempotency-Key", idempotency_key}}, 201);
  if (!r.ok()) return r.status();
  std::string refund_id = IdField(*r, "refundId");
  if (refund_id.empty()) return Status(Code::kInternal, "gateway refund without refundId");
  return refund_id;
}

}  // namespace boxoffice
