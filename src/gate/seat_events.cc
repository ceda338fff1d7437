#include "gate/seat_events.h"

#include <hiredis/hiredis.h>
#include <sys/socket.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "core/crypto.h"
#include "core/log.h"
#include "core/status.h"
#include "core/time_format.h"

namespace boxoffice {

const char* SeatChangeName(SeatChange::Type type) {
  switch (type) {
    case SeatChange::Type::kHeld:
      return "SeatsHeld";
    case SeatChange::Type::kReleased:
      return "SeatsReleased";
    case SeatChange::Type::kBooked:
      return "SeatsBooked";
  }
  return "SeatsHeld";
}

std::string SeatChangeJson(const SeatChange& change) {
  return nlohmann::json{{"type", SeatChangeName(change.type)},
                        {"showtimeId", change.showtime_id},
                        {"seats", change.seats},
                        {"at", FormatRfc3339(change.at)}}
      .dump();
}

namespace {

constexpr char kTypeLetters[] = {'H', 'R', 'B'};

bool ParseInt(std::string_view text, int64_t* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

}  // namespace

// origin|type|showtime|at_ms|A1,A2
std::string EncodeSeatChange(std::string_view origin, const SeatChange& change) {
  // The origin is an instance's own tag (hex): a '|' in it would shift every field.
  BOX_ASSERT(origin.find('|') == std::string_view::npos);
  BOX_ASSERT(static_cast<size_t>(change.type) < std::size(kTypeLetters));
  std::string out(origin);
  out += '|';
  out += kTypeLetters[static_cast<int>(change.type)];
  out +=
      '|' + std::to_string(change.showtime_id) + '|' + std::to_string(ToEpochMs(change.at)) + '|';
  for (size_t i = 0; i < change.seats.size(); ++i) {
    if (i) out += ',';
    out += change.seats[i];
  }
  return out;
}

std::optional<std::pair<std::string, SeatChange>> DecodeSeatChange(std::string_view text) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t bar; parts.size() < 4 && (bar = text.find('|', start)) != std::string_view::npos;
       start = bar + 1) {
    parts.push_back(text.substr(start, bar - start));
  }
  if (parts.size() != 4) return std::nullopt;
  SeatChange change;
  if (parts[1].size() != 1) return std::nullopt;
  const char* found = std::find(std::begin(kTypeLetters), std::end(kTypeLetters), parts[1][0]);
  if (found == std::end(kTypeLetters)) return std::nullopt;
  change.type = static_cast<SeatChange::Type>(found - std::begin(kTypeLetters));
  int64_t at_ms = 0;
  if (!ParseInt(parts[2], &change.showtime_id) || !ParseInt(parts[3], &at_ms)) return std::nullopt;
  change.at = FromEpochMs(at_ms);
  std::string_view seats = text.substr(start);
  while (!seats.empty()) {
    const size_t comma = seats.find(',');
    change.seats.emplace_back(seats.substr(0, comma));
    if (comma == std::string_view::npos) break;
    seats.remove_prefix(comma + 1);
  }
  return std::make_pair(std::string(parts[0]), std::move(change));
}

uint64_t SeatEvents::Subscribe(Listener listener) {
  MutexLock lock(mu_);
  listeners_.emplace(next_id_, std::move(listener));
  return next_id_++;
}

void SeatEvents::Unsubscribe(uint64_t id) {
  MutexLock lock(mu_);
  listeners_.erase(id);
}

void SeatEvents::Deliver(const SeatChange& change) {
  MutexLock lock(mu_);
  for (auto& [id, listener] : listeners_) listener(change);
}

RedisSeatEvents::RedisSeatEvents(RedisOptions options, Metrics* metrics)
    : origin_(NewUuid().substr(0, 8)),
      options_(options),
      publisher_([&] {
        options.pool_size = 1;
        return options;
      }()),
      dropped_(metrics->GetCounter("boxoffice_seat_changes_dropped_total",
                                   "Seat changes not sent to other instances (queue full or "
                                   "Redis unavailable); caches then catch up within 1 s.")),
      received_(metrics->GetCounter("boxoffice_seat_changes_received_total",
                                    "Seat changes heard from other instances.")) {
  metrics->AddGauge("boxoffice_seat_changes_subscribed",
                    "1 while this instance hears other instances' seat changes from Redis.",
                    [this] { return subscribed_.load() ? 1.0 : 0.0; });
  publish_thread_ = std::thread([this] { PublishLoop(); });
  subscribe_thread_ = std::thread([this] { SubscribeLoop(); });
}

RedisSeatEvents::~RedisSeatEvents() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
    if (subscriber_fd_ >= 0) ::shutdown(subscriber_fd_, SHUT_RDWR);
  }
  wake_.notify_all();
  publish_thread_.join();
  subscribe_thread_.join();
}

void RedisSeatEvents::Publish(const SeatChange& change) {
  Deliver(change);
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      dropped_.Inc();
      return;
    }
    queue_.push_back(EncodeSeatChange(origin_, change));
    BOX_ASSERT(queue_.size() <= kMaxQueued);
  }
  wake_.notify_all();
}

void RedisSeatEvents::PublishLoop() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::string message = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    if (!publisher_.Command({"PUBLISH", std::string(kChannel), message}).ok()) dropped_.Inc();
    lock.lock();
  }
}

// In a Redis Cluster a PUBLISH reaches the subscribers of every node (the cluster bus
// carries it), so one subscription anywhere hears every instance; when its node goes
// away, the next node the client knows of is tried.
void RedisSeatEvents::SubscribeLoop() {
  bool was_down = false;
  size_t attempt = 0;
  for (;;) {
    const timeval connect{static_cast<time_t>(options_.connect_timeout.count() / 1000),
                          static_cast<suseconds_t>(options_.connect_timeout.count() % 1000 * 1000)};
    const std::vector<RedisEndpoint> nodes = publisher_.Nodes();
    BOX_ASSERT(!nodes.empty());  // the node given comes first, always
    const RedisEndpoint node = nodes[attempt++ % nodes.size()];
    redisContext* c = redisConnectWithTimeout(node.host.c_str(), node.port, connect);
    bool subscribed = false;
    if (c && !c->err) {
      redisSetTimeout(c, timeval{0, 0});  // a subscriber waits as long as there is silence
      redisEnableKeepAlive(c);            // and learns of a dead peer from TCP
      const std::string channel(kChannel);
      auto* reply =
          static_cast<redisReply*>(redisCommand(c, "SUBSCRIBE %b", channel.data(), channel.size()));
      subscribed = reply && reply->type == REDIS_REPLY_ARRAY;
      if (reply) freeReplyObject(reply);
    }
    if (subscribed) {
      // Stopping meanwhile: the destructor found no fd to shut down, so do not block.
      std::lock_guard lock(mu_);
      if (stop_) {
        subscribed = false;
      } else {
        subscriber_fd_ = c->fd;
      }
    }
    if (subscribed && was_down) LogInfo("seat changes: subscribed again");
    if (subscribed) was_down = false;
    subscribed_ = subscribed;
    while (subscribed) {
      void* raw = nullptr;
      if (redisGetReply(c, &raw) != REDIS_OK || !raw) break;
      auto* reply = static_cast<redisReply*>(raw);
      // ["message", channel, payload]
      if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 3 &&
          reply->element[2]->type == REDIS_REPLY_STRING) {
        auto decoded =
            DecodeSeatChange(std::string_view(reply->element[2]->str, reply->element[2]->len));
        if (decoded && decoded->first != origin_) {
          received_.Inc();
          decoded->second.remote = true;
          Deliver(decoded->second);
        }
      }
      freeReplyObject(reply);
    }
    subscribed_ = false;
    {
      std::lock_guard lock(mu_);
      subscriber_fd_ = -1;
    }
    if (c) redisFree(c);
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (!was_down) LogWarn("seat changes: not subscribed to Redis; retrying every second");
    was_down = true;
    wake_.wait_for(lock, std::chrono::seconds(1), [this] { return stop_; });
    if (stop_) return;
  }
}

}  // namespace boxoffice
