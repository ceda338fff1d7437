#include "payments/gateway.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "core/status.h"
#include "core/text.h"
#include "core/time_format.h"
#include "http/async_client.h"
#include "http/client.h"

namespace boxoffice {
namespace {

using nlohmann::json;

constexpr size_t kMaxGatewayIdLength = 200;    // ids, as a callback's (api/json_io.h)
constexpr size_t kMaxGatewayUrlLength = 2'048;  // a payment page's URL

// Calls the gateway; retries transport failures and 5xx answers (every call made here
// is safe to repeat: reads, or writes with an idempotency key). Through the pool: awaited on
// an I/O loop, blocking elsewhere.
io::asio::awaitable<Result<json>> Call(const HttpGatewayOptions& o, http::HttpPool* pool,
                                       std::string method, std::string path, std::string body,
                                       std::vector<std::pair<std::string, std::string>> headers,
                                       int expected_status) {
  auto url = http::ParseHttpUrl(o.base_url);
  if (!url || !pool) co_return Status(Code::kInvalid, "bad gateway URL " + o.base_url);
  const std::string target = (url->target == "/" ? "" : url->target) + path;
  Millis delay = o.retry_delay;
  Status last(Code::kUnavailable, "gateway not called");
  for (int attempt = 1; attempt <= o.attempts; ++attempt) {
    auto r = co_await pool->Fetch(method, target, body, headers, o.timeout);
    if (r.ok() && r->status == expected_status) {
      auto j = json::parse(r->body, nullptr, false);
      if (j.is_object()) co_return j;
      co_return Status(Code::kInternal,
                       "gateway answered " + path + " with a body that is not JSON");
    }
    if (r.ok() && r->status < 500) {
      // The gateway refused: retrying the same request will not change its mind.
      co_return Status(r->status == 404 ? Code::kNotFound : Code::kInvalid,
                       "gateway answered " + std::to_string(r->status) + " to " + path + ": " +
                           CleanTextPrefix(r->body, 200));
    }
    last = r.ok() ? Status(Code::kUnavailable, "gateway answered " + std::to_string(r->status))
                  : r.status();
    if (attempt < o.attempts) {
      io::asio::steady_timer pause(co_await io::asio::this_coro::executor, delay);
      boost::system::error_code ec;
      co_await pause.async_wait(io::asio::redirect_error(io::asio::use_awaitable, ec));
      delay *= 2;
    }
  }
  BOX_ASSERT(!last.ok());  // every attempt failed: an error, never a success without a body
  co_return last;
}

// An id the gateway gave us, as we store it: short, clean text (PostgreSQL would cut one
// at U+0000 and make two ids one), or empty when absent or not a string.
std::string IdField(const json& body, const char* field, size_t max = kMaxGatewayIdLength) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_string()) return "";
  const std::string& id = it->get_ref<const std::string&>();
  return id.size() <= max && IsCleanText(id) ? id : "";
}

// An amount the gateway gave us: an integer that fits, or nullopt.
std::optional<int64_t> AmountField(const json& body, const char* field) {
  auto it = body.find(field);
  if (it == body.end() || !it->is_number_integer()) return std::nullopt;
  if (it->is_number_unsigned() &&
      it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return it->get<int64_t>();
}

}  // namespace

io::asio::awaitable<Result<GatewaySession>> Gateway::CreateSessionAsync(
    int64_t amount, std::string currency, std::string reference, std::string callback_url,
    std::string return_url, Instant expires_at, std::string idempotency_key) {
  auto work = [this, amount, currency = std::move(currency), reference = std::move(reference),
               callback_url = std::move(callback_url), return_url = std::move(return_url),
               expires_at, key = std::move(idempotency_key)] {
    return CreateSession(amount, currency, reference, callback_url, return_url, expires_at, key);
  };
  co_return co_await io::Offload(std::move(work));
}

HttpGateway::HttpGateway(HttpGatewayOptions options) : options_(std::move(options)) {
  // The service's defaults; --gateway-calls is 1..100,000 (its flag check).
  BOX_ASSERT(options_.attempts >= 1 && options_.timeout > Millis(0));
  BOX_ASSERT(options_.max_in_flight >= 1);
  if (auto url = http::ParseHttpUrl(options_.base_url)) {
    pool_ = std::make_unique<http::HttpPool>(url->host, url->port, options_.max_in_flight);
  }
}

HttpGateway::~HttpGateway() = default;

Result<GatewaySession> HttpGateway::CreateSession(int64_t amount, const std::string& currency,
                                                  const std::string& reference,
                                                  const std::string& callback_url,
                                                  const std::string& return_url,
                                                  Instant expires_at,
                                                  const std::string& idempotency_key) {
  return io::RunSync(CreateSessionAsync(amount, currency, reference, callback_url, return_url,
                                        expires_at, idempotency_key));
}

io::asio::awaitable<Result<GatewaySession>> HttpGateway::CreateSessionAsync(
    int64_t amount, std::string currency, std::string reference, std::string callback_url,
    std::string return_url, Instant expires_at, std::string idempotency_key) {
  json request = {{"amount", amount},
                  {"currency", currency},
                  {"reference", reference},
                  {"callbackUrl", callback_url},
                  {"expiresAt", FormatRfc3339(expires_at)}};
  if (!return_url.empty()) request["returnUrl"] = return_url;
  std::string body = request.dump();
  std::vector<std::pair<std::string, std::string>> headers = {
      {"Idempotency-Key", idempotency_key}};
  std::string method = "POST";
  std::string path = "/v1/sessions";
  auto r = co_await Call(options_, pool_.get(), std::move(method), std::move(path),
                         std::move(body), std::move(headers), 201);
  if (!r.ok()) co_return r.status();
  GatewaySession session;
  session.session_id = IdField(*r, "sessionId");
  session.url = IdField(*r, "url", kMaxGatewayUrlLength);
  if (session.session_id.empty()) {
    co_return Status(Code::kInternal, "gateway session without sessionId");
  }
  // What the session is for, as the gateway says: the checkout compares it with what it
  // asked for before sending a customer there.
  session.amount = AmountField(*r, "amount");
  session.currency = IdField(*r, "currency");
  session.reference = IdField(*r, "reference");
  session.status = IdField(*r, "status");
  if (std::string expires = IdField(*r, "expiresAt"); !expires.empty()) {
    session.expires_at = ParseRfc3339(expires);
  }
  co_return session;
}

Result<GatewaySessionStatus> HttpGateway::GetSession(const std::string& session_id) {
  auto r = io::RunSync(
      Call(options_, pool_.get(), "GET", "/v1/sessions/" + session_id, "", {}, 200));
  if (!r.ok()) return r.status();
  return GatewaySessionStatus{IdField(*r, "status"), IdField(*r, "paymentId")};
}

Result<std::string> HttpGateway::Refund(const std::string& payment_id, int64_t amount,
                                        const std::string& idempotency_key) {
  auto r = io::RunSync(Call(options_, pool_.get(), "POST", "/v1/refunds",
                            json{{"paymentId", payment_id}, {"amount", amount}}.dump(),
                            {{"Idempotency-Key", idempotency_key}}, 201));
  if (!r.ok()) return r.status();
  std::string refund_id = IdField(*r, "refundId");
  if (refund_id.empty()) return Status(Code::kInternal, "gateway refund without refundId");
  BOX_ASSERT(refund_id.size() <= kMaxGatewayIdLength);  // IdField's bound: it fits its column
  return refund_id;
}

}  // namespace boxoffice
