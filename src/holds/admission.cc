#include "holds/admission.h"

#include <charconv>
#include <cmath>
#include <vector>

#include "core/crypto.h"
#include "core/text.h"
#include "core/log.h"
#include "core/status.h"

namespace boxoffice {

namespace {

// Splits on '.', at most `max` parts.
std::vector<std::string_view> Split(std::string_view text, size_t max) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max) {
    const size_t dot = text.find('.');
    if (dot == std::string_view::npos) break;
    parts.push_back(text.substr(0, dot));
    text.remove_prefix(dot + 1);
  }
  parts.push_back(text);
  return parts;
}

std::optional<int64_t> Number(std::string_view text) { return ParseDecimalId(text); }

constexpr size_t kMaxTokenLength = 128;

}  // namespace

Admission::Admission(WaitingRoom* room, AdmissionStore* store, const std::string& secret, const Clock* clock,
                     Metrics* metrics)
    : room_(room),
      store_(store),
      key_(HmacSha256(secret, "boxoffice waiting room")),
      clock_(clock),
      refused_(metrics->GetCounter("boxoffice_holds_total", "Hold attempts by outcome.",
                                   "outcome=\"not_admitted\"")),
      errors_(metrics->GetCounter("boxoffice_waiting_room_errors_total",
                                  "Waiting-room calls the backend did not answer.")) {
  BOX_ASSERT(room_ != nullptr && store_ != nullptr && clock_ != nullptr);
  // Registered once, here, never under mu_ (see core/metrics.h's lock order): each scrape
  // lists the rooms open as of the last round, so a closed room's series disappear.
  queued_gauge_ = metrics->AddCollector(
      "boxoffice_waiting_room_queued", "Customers waiting in a showtime's waiting room.",
      [this](Metrics::Samples* out) { Sizes(&RoomSizes::queued, out); });
  admitted_gauge_ = metrics->AddCollector(
      "boxoffice_waiting_room_admitted", "Customers admitted to a showtime's seats right now.",
      [this](Metrics::Samples* out) { Sizes(&RoomSizes::admitted, out); });
}

Admission::~Admission() { Stop(); }

void Admission::Start(Millis interval) {
  BOX_ASSERT(interval > Millis(0));  // the service's constant
  RunOnce();
  keeper_.Start(interval, [this] {
    RunOnce();
    return false;
  });
}

void Admission::Stop() { keeper_.Stop(); }

bool Admission::RunOnce() {
  auto rooms = store_->EnabledWaitingRooms();
  if (!rooms.ok()) {
    LogWarn("waiting rooms: cannot read their settings", {{"error", rooms.status().message()}});
    return false;
  }
  std::map<int64_t, WaitingRoomConfig> enabled(rooms->begin(), rooms->end());
  std::vector<int64_t> closed;
  {
    MutexLock lock(mu_);
    for (const auto& [showtime_id, sizes] : sizes_) {
      if (!enabled.count(showtime_id)) closed.push_back(showtime_id);
    }
    rooms_ = enabled;
    rooms_version_.fetch_add(1, std::memory_order_release);
  }
  for (int64_t showtime_id : closed) room_->Forget(showtime_id);
  std::map<int64_t, RoomSizes> sizes;
  for (const auto& [showtime_id, config] : enabled) {
    auto s = room_->Advance(showtime_id, config, clock_->Now());
    if (s.ok()) {
      sizes[showtime_id] = s.value();
    } else {
      errors_.Inc();
    }
  }
  MutexLock lock(mu_);
  sizes_ = std::move(sizes);
  return true;
}

void Admission::Sizes(int64_t RoomSizes::*size, Metrics::Samples* out) {
  MutexLock lock(mu_);
  for (const auto& [showtime_id, sizes] : sizes_) {
    out->emplace_back("showtime=\"" + std::to_string(showtime_id) + "\"",
                      static_cast<double>(sizes.*size));
  }
}

Status Admission::CheckConfig(const WaitingRoomConfig& config) {
  if (config.active_limit < 1 || config.active_limit > kMaxActiveLimit) {
    return Status(Code::kInvalid, "activeLimit must be 1.." + std::to_string(kMaxActiveLimit));
  }
  if (config.admission_ttl < kMinAdmissionTtl || config.admission_ttl > kMaxAdmissionTtl) {
    return Status(Code::kInvalid, "admissionTtlSeconds must be " +
                                      std::to_string(kMinAdmissionTtl.count() / 1000) + ".." +
                                      std::to_string(kMaxAdmissionTtl.count() / 1000));
  }
  return Status::Ok();
}

void Admission::Apply(int64_t showtime_id, const WaitingRoomConfig& config) {
  BOX_ASSERT(CheckConfig(config).ok());  // Configure's callers checked it first
  {
    MutexLock lock(mu_);
    rooms_version_.fetch_add(1, std::memory_order_release);
    if (config.enabled) {
      rooms_[showtime_id] = config;
      return;
    }
    rooms_.erase(showtime_id);
    sizes_.erase(showtime_id);
  }
  room_->Forget(showtime_id);  // (local only: a Redis room keeps nothing per instance)
}

Status Admission::Configure(int64_t showtime_id, const WaitingRoomConfig& config) {
  if (Status s = CheckConfig(config); !s.ok()) return s;
  if (Status s = store_->SetWaitingRoom(showtime_id, config); !s.ok()) return s;
  Apply(showtime_id, config);
  return Status::Ok();
}

io::asio::awaitable<Status> Admission::ConfigureAsync(int64_t showtime_id,
                                                      WaitingRoomConfig config) {
  if (Status s = CheckConfig(config); !s.ok()) co_return s;
  Status s = co_await store_->SetWaitingRoomAsync(showtime_id, config);
  if (!s.ok()) co_return s;
  Apply(showtime_id, config);
  co_return Status::Ok();
}

std::optional<WaitingRoomConfig> Admission::RoomOf(int64_t showtime_id) {
  struct Copy {
    uint64_t instance = 0;
    uint64_t version = 0;
    std::map<int64_t, WaitingRoomConfig> rooms;
  };
  thread_local Copy copy;
  if (copy.instance != instance_ ||
      copy.version != rooms_version_.load(std::memory_order_acquire)) {
    MutexLock lock(mu_);
    copy.rooms = rooms_;
    copy.version = rooms_version_.load(std::memory_order_relaxed);
    copy.instance = instance_;
  }
  auto it = copy.rooms.find(showtime_id);
  if (it == copy.rooms.end()) return std::nullopt;
  return it->second;
}

std::string Admission::Sign(const std::string& what) const {
  return Base64UrlEncode(HmacSha256(key_, what)).substr(0, 22);  // 128 bits
}

std::string Admission::QueueToken(int64_t showtime_id, int64_t customer_id) const {
  const std::string body = "q." + std::to_string(showtime_id) + "." + std::to_string(customer_id);
  std::string token = body + "." + Sign(body);
  // Two int64s and a signature fit: FindAsync never refuses a token this issued as too long.
  BOX_ASSERT(token.size() <= kMaxTokenLength);
  return token;
}

std::string Admission::AdmissionToken(int64_t showtime_id, int64_t customer_id,
                                      Instant until) const {
  const std::string body = "a." + std::to_string(showtime_id) + "." + std::to_string(customer_id) +
                           "." + std::to_string(ToEpochMs(until));
  std::string token = body + "." + Sign(body);
  BOX_ASSERT(token.size() <= kMaxTokenLength);  // as QueueToken: CheckToken takes it
  return token;
}

QueueView Admission::View(int64_t showtime_id, int64_t customer_id, const QueuePlace& place,
                          const WaitingRoomConfig& config) const {
  QueueView view;
  view.queue_token = QueueToken(showtime_id, customer_id);
  view.place = place;
  if (place.admitted) {
    view.admission_token = AdmissionToken(showtime_id, customer_id, place.admitted_until);
  } else if (place.position > 0) {
    // Admissions per second: as measured lately, or, before any, the room's worst case
    // (every slot turning over once per admission TTL).
    const double seconds = std::chrono::duration<double>(WaitingRoom::kRateWindow).count();
    double rate = static_cast<double>(place.recent_admissions) / seconds;
    if (place.recent_admissions == 0) {
      rate = config.active_limit / std::chrono::duration<double>(config.admission_ttl).count();
    }
    view.estimated_wait_seconds = static_cast<int64_t>(std::ceil(place.position / rate));
  }
  return view;
}

io::asio::awaitable<Result<QueueView>> Admission::JoinAsync(int64_t showtime_id,
                                                            int64_t customer_id) {
  auto config = RoomOf(showtime_id);
  if (!config) {
    co_return Status(Code::kNotFound,
                     "showtime " + std::to_string(showtime_id) + " has no waiting room open");
  }
  auto place = co_await room_->PlaceAsync(WaitingRoom::PlaceOp::kJoin, showtime_id, customer_id,
                                          *config, clock_->Now());
  if (!place.ok()) {
    if (place.status().code() == Code::kUnavailable) errors_.Inc();
    co_return place.status();
  }
  co_return View(showtime_id, customer_id, place.value(), *config);
}

io::asio::awaitable<Result<QueueView>> Admission::FindAsync(int64_t showtime_id,
                                                            std::string queue_token) {
  const Status unknown(Code::kNotFound, "no such place in this waiting room");
  if (queue_token.size() > kMaxTokenLength) co_return unknown;
  auto parts = Split(queue_token, 4);
  if (parts.size() != 4 || parts[0] != "q") co_return unknown;
  auto showtime = Number(parts[1]);
  auto customer = Number(parts[2]);
  if (!showtime || !customer || *showtime != showtime_id ||
      !ConstantTimeEquals(queue_token, QueueToken(*showtime, *customer))) {
    co_return unknown;
  }
  auto config = RoomOf(showtime_id);
  if (!config) {
    co_return Status(Code::kNotFound,
                     "showtime " + std::to_string(showtime_id) + " has no waiting room open");
  }
  auto place = co_await room_->PlaceAsync(WaitingRoom::PlaceOp::kFind, showtime_id, *customer,
                                          *config, clock_->Now());
  if (!place.ok()) {
    if (place.status().code() == Code::kNotFound) {
      co_return Status(Code::kNotFound,
                       "not in the waiting room (the admission ended): join again");
    }
    if (place.status().code() == Code::kUnavailable) errors_.Inc();
    co_return place.status();
  }
  co_return View(showtime_id, *customer, place.value(), *config);
}

Result<QueueView> Admission::Join(int64_t showtime_id, int64_t customer_id) {
  return io::RunSync(JoinAsync(showtime_id, customer_id));
}

Result<QueueView> Admission::Find(int64_t showtime_id, const std::string& queue_token) {
  return io::RunSync(FindAsync(showtime_id, queue_token));
}

Status Admission::CheckToken(int64_t showtime_id, int64_t customer_id,
                             const std::string* admission_token) {
  if (!RoomOf(showtime_id)) return Status::Ok();
  const Status refused(Code::kNotAdmitted,
                       "showtime " + std::to_string(showtime_id) +
                           " has a waiting room: join its queue and hold with the "
                           "X-Admission-Token it gives");
  if (!admission_token || admission_token->size() > kMaxTokenLength) {
    refused_.Inc();
    return refused;
  }
  auto parts = Split(*admission_token, 5);
  std::optional<int64_t> showtime, customer, until;
  if (parts.size() == 5 && parts[0] == "a") {
    showtime = Number(parts[1]);
    customer = Number(parts[2]);
    until = Number(parts[3]);
  }
  const Instant now = clock_->Now();
  if (!showtime || !customer || !until || *showtime != showtime_id || *customer != customer_id ||
      FromEpochMs(*until) <= now ||
      !ConstantTimeEquals(*admission_token,
                          AdmissionToken(*showtime, *customer, FromEpochMs(*until)))) {
    refused_.Inc();
    return refused;
  }
  return Status::Ok();
}

Status Admission::CheckHold(int64_t showtime_id, int64_t customer_id,
                            const std::string* admission_token) {
  return io::RunSync(CheckHoldAsync(showtime_id, customer_id, admission_token));
}

io::asio::awaitable<Status> Admission::CheckHoldAsync(int64_t showtime_id, int64_t customer_id,
                                                      const std::string* admission_token,
                                                      bool token_checked) {
  if (!RoomOf(showtime_id)) co_return Status::Ok();
  if (!token_checked) {
    if (Status s = CheckToken(showtime_id, customer_id, admission_token); !s.ok()) co_return s;
  }
  auto admitted = co_await room_->AdmittedAsync(showtime_id, customer_id, clock_->Now());
  if (!admitted.ok()) {
    errors_.Inc();
    co_return admitted.status();
  }
  if (!admitted.value()) {
    refused_.Inc();
    co_return Status(Code::kNotAdmitted, "the admission has ended: join the queue again");
  }
  co_return Status::Ok();
}

void Admission::BookingConfirmed(int64_t showtime_id, int64_t customer_id) {
  auto config = RoomOf(showtime_id);
  if (!config) return;
  if (!room_->Leave(showtime_id, customer_id, *config, clock_->Now()).ok()) errors_.Inc();
}

}  // namespace boxoffice
