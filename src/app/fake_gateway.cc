#include "app/fake_gateway.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include "core/crypto.h"
#include "core/gateway_signature.h"
#include "core/log.h"
#include "core/text.h"
#include "core/time_format.h"
#include "http/async_client.h"
#include "http/client.h"

namespace boxoffice::app {
namespace {

using http::ErrorResponse;
using http::Request;
using http::Response;
using nlohmann::json;

constexpr int kMaxDeliveryAttempts = 8;  // then the callback is given up, as gateways do
constexpr Millis kFirstRetryDelay{100};  // doubled after each failed attempt
constexpr Millis kMaxRetryDelay{5'000};
constexpr Millis kDeliveryTimeout{5'000};     // per attempt
constexpr int64_t kMaxDelayMs = 10 * 60'000;  // test control: the longest "delayed" delivery
constexpr size_t kMaxSessions = 1'000'000;    // memory bound of the in-memory state
// Deliveries are coroutines on the gateway's I/O loop, over keep-alive connections to each
// receiver: a premiere's callbacks cost a socket each only while they are in flight.
constexpr size_t kMaxDeliveriesInFlight = 8'192;
constexpr size_t kMaxReceivers = 64;  // distinct callback host:port pairs (one pool each)

Response Json(int status, const json& body) {
  Response r;
  r.status = status;
  r.body = body.dump();
  return r;
}

// The origin of an absolute http URL, "http://host:port" with the host lower-cased and the
// port explicit (80 by default), or nullopt. The authority ends where a browser ends it, at
// the first '/', '?', '#' or '\', and must be a plain host[:port] (no user info): so
// "http://evil.example?@127.0.0.1:8080/" is evil.example's, as a browser reads it.
std::optional<std::string> OriginOf(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.substr(0, kScheme.size()) != kScheme) return std::nullopt;
  const std::string_view rest = url.substr(kScheme.size());
  const std::string_view authority = rest.substr(0, rest.find_first_of("/?#\\"));
  if (authority.empty() || !http::IsValidHost(authority)) return std::nullopt;
  // IsValidHost: "[v6]" or a name without ':', then ":digits" or nothing.
  const size_t host_end = authority.front() == '[' ? authority.find(']') + 1 : authority.find(':');
  std::string host(authority.substr(0, host_end));
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  int port = 80;
  if (host_end < authority.size() && host_end + 1 < authority.size()) {
    port = 0;
    for (char c : authority.substr(host_end + 1)) port = port * 10 + (c - '0');
  }
  return std::string(kScheme) + host + ":" + std::to_string(port);
}

// 2500 EUR → "25.00 EUR" (every currency the tests use has two decimals).
std::string FormatAmount(int64_t minor, const std::string& currency) {
  std::string cents = std::to_string(minor % 100);
  if (cents.size() < 2) cents.insert(0, "0");
  return std::to_string(minor / 100) + "." + cents + " " + currency;
}

// The pay page: the amount, and Pay and Fail buttons while the session is open; a press
// posts the form back to this page.
Response PayPageHtml(const std::string& session_id, int64_t amount, const std::string& currency,
                     const std::string& reference, const std::string& status,
                     const std::string& return_url) {
  const std::string money = HtmlEscape(FormatAmount(amount, currency));
  std::string html =
      "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<title>Pay " +
      money +
      " - fake gateway</title><style>"
      "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;"
      "color:#1a1a1a}main{border:1px solid #888;border-radius:8px;padding:1.5rem}"
      "button{font-size:1.1rem;padding:.6rem 1.2rem;margin-right:.8rem;border-radius:6px;"
      "border:2px solid #1a1a1a;cursor:pointer}button:focus-visible{outline:3px solid #0057b8;"
      "outline-offset:2px}.pay{background:#0b6b2b;color:#fff}.fail{background:#fff}"
      "</style></head><body><main><h1>Fake payment gateway</h1>"
      "<p>Amount: <strong id=\"amount\">" +
      money +
      "</strong></p>"
      "<p>Reference: " +
      HtmlEscape(reference) +
      "</p>"
      "<p>Session status: <strong id=\"status\">" +
      HtmlEscape(status) + "</strong></p>";
  if (status == "OPEN") {
    html += "<form method=\"post\" action=\"/pay/" + HtmlEscape(session_id) +
            "\"><button class=\"pay\" name=\"outcome\" value=\"SUCCEEDED\">Pay " + money +
            "</button><button class=\"fail\" name=\"outcome\" value=\"FAILED\">Fail"
            "</button></form>";
  } else if (!return_url.empty()) {
    html += "<p><a href=\"" + HtmlEscape(return_url) + "\">Back to the shop</a></p>";
  }
  html += "</main></body></html>";
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body = std::move(html);
  r.Header("Cache-Control", "no-store");
  r.Header("Content-Security-Policy",
           "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' http: https:; "
           "frame-ancestors 'none'");
  return r;
}

struct Session {
  std::string id;
  int64_t amount = 0;
  std::string currency;
  std::string reference;
  std::string callback_url;
  std::string return_url;  // where the pay page sends the browser; may be empty
  Instant expires_at;
  std::string status = "OPEN";  // OPEN, PAID, FAILED (EXPIRED is derived)
  std::string payment_id;
};

// Test control (POST /v1/test/foreign-session): the next session opened is one as if
// another user of the same gateway account had opened it first under the same idempotency
// key, with these fields in place of the request's.
struct ForeignSession {
  std::optional<int64_t> amount;
  std::optional<std::string> currency;
  std::optional<std::string> reference;
  bool expired = false;
};

struct RefundRecord {
  std::string refund_id;
  std::string payment_id;
  int64_t amount = 0;
};

}  // namespace

struct FakeGateway::State {
  FakeGatewayOptions options;
  const Clock* clock;
  std::mutex mu;
  std::map<std::string, Session> sessions;
  std::map<std::string, std::string> session_by_key;  // Idempotency-Key → session id
  std::map<std::string, RefundRecord> refund_by_key;  // Idempotency-Key → refund
  std::map<std::string, std::string> paid_sessions;   // payment id → session id
  std::optional<ForeignSession> foreign_next;         // test control, for the next session
  std::set<std::string> service_origins;              // of options.service_urls
  std::condition_variable idle;
  size_t deliveries = 0;
  bool stopping = false;

  std::string StatusOf(const Session& s) const {
    return s.status == "OPEN" && s.expires_at < clock->Now() ? "EXPIRED" : s.status;
  }

  // A session as a real gateway describes it (the answer to opening one, and to asking
  // about one): what it is for and where it stands, so the caller can check it got the
  // session it asked for.
  json SessionJson(const Session& s) const {
    json body = {{"sessionId", s.id},
                 {"url", options.public_url + "/pay/" + s.id},
                 {"amount", s.amount},
                 {"currency", s.currency},
                 {"reference", s.reference},
                 {"status", StatusOf(s)},
                 {"expiresAt", FormatRfc3339(s.expires_at)}};
    if (!s.payment_id.empty()) body["paymentId"] = s.payment_id;
    return body;
  }

  // Whether the request carries the gateway's secret (Authorization: Bearer <secret>), as
  // the calls that reveal or rig other people's sessions require.
  bool Authorized(const Request& req) const {
    const std::string* header = req.headers.Find("Authorization");
    return header && !options.secret.empty() &&
           ConstantTimeEquals(*header, "Bearer " + options.secret);
  }

  // One keep-alive pool per receiver (callback host and port), made on first use and kept
  // until the gateway ends; null past kMaxReceivers (Pay then answers 503). Its bound on
  // calls in flight is the deliveries' own, so it never refuses one.
  std::map<std::string, std::unique_ptr<http::HttpPool>> receivers;

  http::HttpPool* ReceiverOf(const http::HttpUrl& url) {
    const std::string key = url.host + ":" + std::to_string(url.port);
    std::lock_guard lock(mu);
    auto it = receivers.find(key);
    if (it != receivers.end()) return it->second.get();
    if (receivers.size() >= kMaxReceivers) return nullptr;
    auto pool = std::make_unique<http::HttpPool>(url.host, url.port, kMaxDeliveriesInFlight);
    return receivers.emplace(key, std::move(pool)).first->second.get();
  }

  // Counts a delivery in flight from its coroutine's start until it ends, or is destroyed
  // with its loop. (Counted from the start, not from the pay: a coroutine its loop never
  // started leaves no count behind for ~FakeGateway to wait for.)
  struct Counted {
    explicit Counted(State* s) : s(s) {
      std::lock_guard lock(s->mu);
      ++s->deliveries;
    }
    ~Counted() {
      std::lock_guard lock(s->mu);
      --s->deliveries;
      s->idle.notify_all();
    }
    Counted(const Counted&) = delete;
    Counted& operator=(const Counted&) = delete;
    State* s;
  };

  // Delivers one signed callback, retrying non-2xx answers with exponential backoff; a
  // coroutine on the loop that took the pay, awaiting the receiver without a thread.
  io::asio::awaitable<bool> Deliver(Session s, std::string outcome) {
    const std::string body =
        json{{"paymentId", s.payment_id}, {"sessionId", s.id},  {"reference", s.reference},
             {"status", outcome},         {"amount", s.amount}, {"currency", s.currency}}
            .dump();
    auto url = http::ParseHttpUrl(s.callback_url);
    if (!url) co_return true;
    http::HttpPool* receiver = ReceiverOf(*url);
    if (!receiver) {
      LogWarn("callback not delivered: too many receivers", {{"sessionId", s.id}});
      co_return true;
    }
    Millis delay = kFirstRetryDelay;
    for (int attempt = 1; attempt <= kMaxDeliveryAttempts; ++attempt) {
      std::vector<std::pair<std::string, std::string>> headers{
          {"X-Gateway-Signature", SignGatewayPayload(options.secret, clock->Now(), body)}};
      std::string method = "POST";  // (named: g++ 12 and temporaries inside a co_await)
      auto r = co_await receiver->Fetch(std::move(method), url->target, body, std::move(headers),
                                        kDeliveryTimeout);
      if (r.ok() && r->status >= 200 && r->status < 300) co_return true;
      LogWarn("callback delivery failed",
              {{"sessionId", s.id}, {"attempt", attempt}, {"status", r.ok() ? r->status : 0}});
      if (!co_await Wait(delay)) co_return false;
      delay = std::min(delay * 2, kMaxRetryDelay);
    }
    co_return true;
  }

  // Waits delay on the loop; false once the gateway is stopping.
  io::asio::awaitable<bool> Wait(Millis delay) {
    io::asio::steady_timer timer(co_await io::asio::this_coro::executor, delay);
    boost::system::error_code ec;
    co_await timer.async_wait(io::asio::redirect_error(io::asio::use_awaitable, ec));
    std::lock_guard lock(mu);
    co_return !stopping;
  }

  // A pay's deliveries: at once, late, or twice, as asked.
  io::asio::awaitable<void> Deliveries(Session settled, std::string outcome, std::string delivery,
                                       int64_t delay_ms) {
    Counted counted(this);
    if (delivery == "delayed" && !co_await Wait(Millis(delay_ms))) co_return;
    if (!co_await Deliver(settled, outcome)) co_return;
    if (delivery == "twice") co_await Deliver(settled, outcome);
  }

  Response CreateSession(Request& req) {
    const json j = json::parse(req.body, nullptr, false);
    if (!j.is_object()) return ErrorResponse(400, "BAD_JSON", "body must be a JSON object");
    Session s;
    try {
      s.amount = j.at("amount").get<int64_t>();
      s.currency = j.at("currency").get<std::string>();
      s.reference = j.at("reference").get<std::string>();
      s.callback_url = j.at("callbackUrl").get<std::string>();
      s.return_url = j.value("returnUrl", "");
      auto expires = ParseRfc3339(j.at("expiresAt").get<std::string>());
      if (!expires) throw std::invalid_argument("expiresAt");
      s.expires_at = *expires;
    } catch (const std::exception&) {
      return ErrorResponse(400, "VALIDATION_FAILED",
                           "amount, currency, reference, callbackUrl, expiresAt required");
    }
    // returnUrl goes into a Location header and a link: printable ASCII without spaces. It
    // may only lead back to the service that opened the session, the origin its callbacks
    // go to: the pay page is never a redirect to anywhere else (an open redirect).
    const bool printable = std::all_of(s.return_url.begin(), s.return_url.end(),
                                       [](char c) { return c > 0x20 && c < 0x7f; });
    if (s.amount < 0 || !http::ParseHttpUrl(s.callback_url) ||
        (!s.return_url.empty() && (!printable || !http::ParseHttpUrl(s.return_url)))) {
      return ErrorResponse(400, "VALIDATION_FAILED", "bad amount, callbackUrl or returnUrl");
    }
    if (!service_origins.empty()) {
      // Only the configured services: a session can neither call back nor send a browser
      // anywhere else, whoever opens it.
      auto known = [this](const std::string& url) {
        const auto origin = OriginOf(url);
        return origin && service_origins.count(*origin) > 0;
      };
      if (!known(s.callback_url) || (!s.return_url.empty() && !known(s.return_url))) {
        return ErrorResponse(400, "VALIDATION_FAILED",
                             "callbackUrl and returnUrl must lead to a configured service");
      }
    } else if (!s.return_url.empty()) {
      const auto service = OriginOf(s.callback_url);
      if (!service || OriginOf(s.return_url) != service) {
        return ErrorResponse(400, "VALIDATION_FAILED",
                             "returnUrl must lead to the callbackUrl's origin");
      }
    }
    const std::string* key = req.headers.Find("Idempotency-Key");
    std::lock_guard lock(mu);
    if (key) {
      // Whoever asks: the session opened under this key, as it stands now.
      if (auto it = session_by_key.find(*key); it != session_by_key.end()) {
        return Json(201, SessionJson(sessions.at(it->second)));
      }
    }
    if (sessions.size() >= kMaxSessions)
      return ErrorResponse(503, "UNAVAILABLE", "too many sessions");
    if (foreign_next) {
      if (foreign_next->amount) s.amount = *foreign_next->amount;
      if (foreign_next->currency) s.currency = *foreign_next->currency;
      if (foreign_next->reference) s.reference = *foreign_next->reference;
      if (foreign_next->expired) s.expires_at = clock->Now() - Millis(60'000);
      foreign_next.reset();
    }
    s.id = "ses_" + NewUuid();
    sessions[s.id] = s;
    if (key) session_by_key[*key] = s.id;
    return Json(201, SessionJson(s));
  }

  // Test control, with the gateway's secret: the next session opened is rigged as
  // ForeignSession says; body {"amount"?, "currency"?, "reference"?, "status"?: "OPEN" or
  // "EXPIRED"}.
  Response RigNextSession(Request& req) {
    if (!Authorized(req)) {
      return ErrorResponse(401, "UNAUTHENTICATED", "the gateway secret is required");
    }
    const json j = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    if (!j.is_object()) return ErrorResponse(400, "BAD_JSON", "body must be a JSON object");
    ForeignSession rigged;
    try {
      if (j.contains("amount")) rigged.amount = j.at("amount").get<int64_t>();
      if (j.contains("currency")) rigged.currency = j.at("currency").get<std::string>();
      if (j.contains("reference")) rigged.reference = j.at("reference").get<std::string>();
      const std::string status = j.value("status", "OPEN");
      if (status != "OPEN" && status != "EXPIRED") throw std::invalid_argument("status");
      rigged.expired = status == "EXPIRED";
    } catch (const std::exception&) {
      return ErrorResponse(400, "VALIDATION_FAILED",
                           "amount (integer), currency, reference (strings), status OPEN|EXPIRED");
    }
    std::lock_guard lock(mu);
    foreign_next = rigged;
    return Json(200, {{"rigged", true}});
  }

  // The sessions opened for a reference (a booking id), for tests to count them; with the
  // gateway's secret, as they are other people's.
  Response ListSessions(Request& req) {
    if (!Authorized(req)) {
      return ErrorResponse(401, "UNAUTHENTICATED", "the gateway secret is required");
    }
    const auto reference = req.QueryParam("reference");
    json list = json::array();
    std::lock_guard lock(mu);
    for (const auto& [id, s] : sessions) {
      if (!reference || *reference == s.reference) {
        list.push_back({{"sessionId", id},
                        {"reference", s.reference},
                        {"amount", s.amount},
                        {"status", StatusOf(s)}});
      }
    }
    return Json(200, {{"sessions", list}});
  }

  Response GetSession(Request& req) {
    std::lock_guard lock(mu);
    auto it = sessions.find(req.params["sessionId"]);
    if (it == sessions.end()) return ErrorResponse(404, "NOT_FOUND", "no such session");
    return Json(200, SessionJson(it->second));
  }

  // Test control: settle a session and deliver its callback as asked, from this loop once
  // the pay is answered.
  io::asio::awaitable<Response> Pay(Request& req) {
    const json j = json::parse(req.body.empty() ? "{}" : req.body, nullptr, false);
    if (!j.is_object()) co_return ErrorResponse(400, "BAD_JSON", "body must be a JSON object");
    const std::string outcome = j.value("outcome", "SUCCEEDED");
    const std::string delivery = j.value("delivery", "normal");
    const int64_t delay_ms = j.value("delayMs", int64_t{0});
    co_return co_await Settle(req.params["sessionId"], outcome, delivery, delay_ms);
  }

  // The customer's pay page (the session's `url`).
  Response PayPage(Request& req) {
    std::lock_guard lock(mu);
    auto it = sessions.find(req.params["sessionId"]);
    if (it == sessions.end()) return ErrorResponse(404, "NOT_FOUND", "no such session");
    const Session& s = it->second;
    return PayPageHtml(s.id, s.amount, s.currency, s.reference, StatusOf(s), s.return_url);
  }

  // A press of Pay or Fail on the pay page (a form post, outcome=SUCCEEDED|FAILED): settles
  // the session as /pay with normal delivery, then sends the browser to the session's
  // returnUrl (back to the page when it has none). A second press, on a session no longer
  // open, settles nothing and goes back the same way.
  io::asio::awaitable<Response> PayPagePress(Request& req) {
    Request form;
    form.query = req.body;
    const std::string outcome = form.QueryParam("outcome").value_or("");
    const std::string id = req.params["sessionId"];
    if (outcome != "SUCCEEDED" && outcome != "FAILED")
      co_return ErrorResponse(400, "VALIDATION_FAILED", "outcome must be SUCCEEDED or FAILED");
    std::string return_url;
    {
      std::lock_guard lock(mu);
      auto it = sessions.find(id);
      if (it == sessions.end()) co_return ErrorResponse(404, "NOT_FOUND", "no such session");
      return_url = it->second.return_url;
    }
    std::string delivery = "normal";
    Response settled = co_await Settle(id, outcome, delivery, 0);
    if (settled.status != 200 && settled.status != 409) co_return settled;
    Response r;
    r.status = 303;
    r.content_type = "text/plain; charset=utf-8";
    r.Header("Location", return_url.empty() ? "/pay/" + id : return_url);
    co_return r;
  }

  io::asio::awaitable<Response> Settle(std::string session_id, std::string outcome,
                                       std::string delivery, int64_t delay_ms) {
    if ((outcome != "SUCCEEDED" && outcome != "FAILED") ||
        (delivery != "normal" && delivery != "twice" && delivery != "never" &&
         delivery != "delayed") ||
        delay_ms < 0 || delay_ms > kMaxDelayMs) {
      co_return ErrorResponse(400, "VALIDATION_FAILED", "bad outcome, delivery or delayMs");
    }
    const std::string callback_url = CallbackUrlOf(session_id);
    if (delivery != "never" && !callback_url.empty()) {
      auto url = http::ParseHttpUrl(callback_url);
      if (!url || !ReceiverOf(*url))
        co_return ErrorResponse(503, "UNAVAILABLE", "too many callback receivers");
    }
    Session settled;
    {
      std::lock_guard lock(mu);
      auto it = sessions.find(session_id);
      if (it == sessions.end()) co_return ErrorResponse(404, "NOT_FOUND", "no such session");
      if (StatusOf(it->second) != "OPEN")
        co_return ErrorResponse(409, "NOT_OPEN", "session is " + StatusOf(it->second));
      if (deliveries >= kMaxDeliveriesInFlight)
        co_return ErrorResponse(503, "UNAVAILABLE", "too many deliveries");
      it->second.status = outcome == "SUCCEEDED" ? "PAID" : "FAILED";
      it->second.payment_id = "pay_" + NewUuid();
      paid_sessions[it->second.payment_id] = it->second.id;
      settled = it->second;
    }
    Response answer = Json(
        200,
        {{"sessionId", settled.id}, {"status", settled.status}, {"paymentId", settled.payment_id}});
    if (delivery != "never") {
      auto executor = co_await io::asio::this_coro::executor;
      io::asio::co_spawn(executor, Deliveries(std::move(settled), outcome, delivery, delay_ms),
                         io::asio::detached);
    }
    co_return answer;
  }

  // The session's callback URL, or "" for no such session.
  std::string CallbackUrlOf(const std::string& session_id) {
    std::lock_guard lock(mu);
    auto it = sessions.find(session_id);
    return it == sessions.end() ? "" : it->second.callback_url;
  }

  Response CreateRefund(Request& req) {
    const std::string* key = req.headers.Find("Idempotency-Key");
    if (!key || key->empty())
      return ErrorResponse(400, "IDEMPOTENCY_KEY_REQUIRED", "Idempotency-Key required");
    const json j = json::parse(req.body, nullptr, false);
    if (!j.is_object() || !j.contains("paymentId") || !j["paymentId"].is_string() ||
        !j.contains("amount") || !j["amount"].is_number_integer()) {
      return ErrorResponse(400, "VALIDATION_FAILED", "paymentId and amount required");
    }
    std::lock_guard lock(mu);
    if (auto it = refund_by_key.find(*key); it != refund_by_key.end()) {
      return Json(201, {{"refundId", it->second.refund_id}});
    }
    const std::string payment_id = j["paymentId"];
    if (!paid_sessions.count(payment_id)) return ErrorResponse(404, "NOT_FOUND", "no such payment");
    RefundRecord r{"ref_" + NewUuid(), payment_id, j["amount"].get<int64_t>()};
    refund_by_key[*key] = r;
    return Json(201, {{"refundId", r.refund_id}});
  }

  Response ListRefunds(Request& req) {
    const auto payment_id = req.QueryParam("paymentId");
    json list = json::array();
    std::lock_guard lock(mu);
    for (const auto& [key, r] : refund_by_key) {
      if (!payment_id || *payment_id == r.payment_id) {
        list.push_back(
            {{"refundId", r.refund_id}, {"paymentId", r.payment_id}, {"amount", r.amount}});
      }
    }
    return Json(200, {{"refunds", list}});
  }
};

FakeGateway::FakeGateway(FakeGatewayOptions options, const Clock* clock)
    : state_(std::make_unique<State>()) {
  state_->options = std::move(options);
  state_->clock = clock;
  for (const std::string& url : state_->options.service_urls) {
    if (auto origin = OriginOf(url)) state_->service_origins.insert(*origin);
  }
}

FakeGateway::FakeGateway(FakeGatewayOptions options, const Clock* clock, Millis answer_delay)
    : FakeGateway(std::move(options), clock) {
  answer_delay_ = std::clamp(answer_delay, Millis(0), Millis(kMaxDelayMs));
}

FakeGateway::~FakeGateway() {
  std::unique_lock lock(state_->mu);
  state_->stopping = true;
  state_->idle.notify_all();
  state_->idle.wait(lock, [this] { return state_->deliveries == 0; });
}

void FakeGateway::Register(http::Router* router) {
  State* s = state_.get();
  // Test control: a slow gateway answers session requests this long late.
  const Millis delay = answer_delay_;
  auto bind = [s](Response (State::*method)(Request&)) {
    return [s, method](Request& r) { return (s->*method)(r); };
  };
  auto slow = [s, delay](Response (State::*method)(Request&)) {
    return [s, method, delay](Request& r) {
      std::this_thread::sleep_for(delay);
      return (s->*method)(r);
    };
  };
  router->Add("POST", "/v1/sessions", slow(&State::CreateSession));
  router->Add("GET", "/v1/sessions", bind(&State::ListSessions));
  router->Add("POST", "/v1/test/foreign-session", bind(&State::RigNextSession));
  router->Add("GET", "/v1/sessions/{sessionId}", bind(&State::GetSession));
  router->AddAsync("POST", "/v1/sessions/{sessionId}/pay", [s](Request& r) { return s->Pay(r); });
  router->Add("GET", "/pay/{sessionId}", bind(&State::PayPage));
  router->AddAsync("POST", "/pay/{sessionId}", [s](Request& r) { return s->PayPagePress(r); });
  router->Add("POST", "/v1/refunds", bind(&State::CreateRefund));
  router->Add("GET", "/v1/refunds", bind(&State::ListRefunds));
  router->Add(
      "GET", "/healthz",
      [](Request&) {
        return Json(200, {{"status", "ok"}});
      },
      false);
}

}  // namespace boxoffice::app
