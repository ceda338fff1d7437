#include "gate/waiting_room.h"

#include "core/status.h"

namespace boxoffice {

// ---- in process ----

bool InProcessWaitingRoom::Present(const Room& room, int64_t customer_id) const {
  return room.admitted.count(customer_id) || room.seq_of.count(customer_id);
}

RoomSizes InProcessWaitingRoom::AdvanceLocked(Room& room, const WaitingRoomConfig& config,
                                              Instant now) {
  const int64_t now_ms = ToEpochMs(now);
  while (!room.by_end.empty() && room.by_end.begin()->first <= now_ms) {
    room.admitted.erase(room.by_end.begin()->second);
    room.by_end.erase(room.by_end.begin());
  }
  while (!room.granted.empty() && *room.granted.begin() <= now_ms - kRateWindow.count())
    room.granted.erase(room.granted.begin());
  while (static_cast<int64_t>(room.admitted.size()) < config.active_limit && !room.queue.empty()) {
    const auto [seq, customer] = *room.queue.begin();
    room.queue.erase(room.queue.begin());
    room.seq_of.erase(customer);
    const int64_t end = now_ms + config.admission_ttl.count();
    room.admitted[customer] = end;
    room.by_end.emplace(end, customer);
    room.granted.insert(now_ms);
  }
  // Two structures, kept in step: nobody is counted without their entry in the other, and
  // nobody waits while a slot is free (whatever limit the setting read from the store has).
  BOX_ASSERT(room.admitted.size() == room.by_end.size() &&
             room.queue.size() == room.seq_of.size());
  BOX_ASSERT(room.queue.empty() ||
             static_cast<int64_t>(room.admitted.size()) >= config.active_limit);
  return RoomSizes{static_cast<int64_t>(room.queue.size()),
                   static_cast<int64_t>(room.admitted.size())};
}

QueuePlace InProcessWaitingRoom::PlaceOf(const Room& room, int64_t customer_id) const {
  QueuePlace place;
  place.recent_admissions = static_cast<int64_t>(room.granted.size());
  if (auto it = room.admitted.find(customer_id); it != room.admitted.end()) {
    place.admitted = true;
    place.admitted_until = FromEpochMs(it->second);
  } else if (auto q = room.seq_of.find(customer_id); q != room.seq_of.end()) {
    place.position = static_cast<int64_t>(room.queue.order_of_key({q->second, customer_id})) + 1;
  }
  return place;
}

void InProcessWaitingRoom::DropIfEmpty(std::unordered_map<int64_t, Room>::iterator it) {
  if (it->second.queue.empty() && it->second.admitted.empty()) rooms_.erase(it);
}

void InProcessWaitingRoom::Forget(int64_t showtime_id) {
  MutexLock lock(mu_);
  rooms_.erase(showtime_id);
}

size_t InProcessWaitingRoom::RoomCount() {
  MutexLock lock(mu_);
  return rooms_.size();
}

Result<QueuePlace> InProcessWaitingRoom::Join(int64_t showtime_id, int64_t customer_id,
                                              const WaitingRoomConfig& config, Instant now) {
  MutexLock lock(mu_);
  Room& room = rooms_[showtime_id];
  AdvanceLocked(room, config, now);
  if (!Present(room, customer_id)) {
    if (static_cast<int64_t>(room.queue.size()) >= kMaxQueued)
      return Status(Code::kUnavailable, "the waiting room is full");
    const int64_t seq = ++room.next_seq;
    room.queue.insert({seq, customer_id});
    room.seq_of[customer_id] = seq;
    AdvanceLocked(room, config, now);
  }
  BOX_ASSERT(Present(room, customer_id));  // queued or admitted: an admission ends only later
  return PlaceOf(room, customer_id);
}

Result<QueuePlace> InProcessWaitingRoom::Find(int64_t showtime_id, int64_t customer_id,
                                              const WaitingRoomConfig& config, Instant now) {
  MutexLock lock(mu_);
  auto it = rooms_.find(showtime_id);
  if (it == rooms_.end()) return Status(Code::kNotFound, "not in the waiting room");
  AdvanceLocked(it->second, config, now);
  if (!Present(it->second, customer_id)) {
    DropIfEmpty(it);
    return Status(Code::kNotFound, "not in the waiting room");
  }
  return PlaceOf(it->second, customer_id);
}

Result<bool> InProcessWaitingRoom::Admitted(int64_t showtime_id, int64_t customer_id, Instant now) {
  MutexLock lock(mu_);
  auto it = rooms_.find(showtime_id);
  if (it == rooms_.end()) return false;
  auto a = it->second.admitted.find(customer_id);
  return a != it->second.admitted.end() && a->second > ToEpochMs(now);
}

Status InProcessWaitingRoom::Leave(int64_t showtime_id, int64_t customer_id,
                                   const WaitingRoomConfig& config, Instant now) {
  MutexLock lock(mu_);
  auto it = rooms_.find(showtime_id);
  if (it == rooms_.end()) return Status::Ok();
  Room& room = it->second;
  if (auto a = room.admitted.find(customer_id); a != room.admitted.end()) {
    room.by_end.erase({a->second, customer_id});
    room.admitted.erase(a);
  }
  if (auto q = room.seq_of.find(customer_id); q != room.seq_of.end()) {
    room.queue.erase({q->second, customer_id});
    room.seq_of.erase(q);
  }
  BOX_ASSERT(!Present(room, customer_id));
  AdvanceLocked(room, config, now);
  DropIfEmpty(it);
  return Status::Ok();
}

Result<RoomSizes> InProcessWaitingRoom::Advance(int64_t showtime_id,
                                                const WaitingRoomConfig& config, Instant now) {
  MutexLock lock(mu_);
  auto it = rooms_.find(showtime_id);
  if (it == rooms_.end()) return RoomSizes{};
  const RoomSizes sizes = AdvanceLocked(it->second, config, now);
  DropIfEmpty(it);
  return sizes;
}

// ---- Redis ----

namespace {

// KEYS: queue (customer by arrival seq), admitted (customer by end of admission, ms),
//       granted (admission times in the rate window), seq.
// ARGV: op (1 join, 2 find, 3 leave, 4 advance), customer, now ms, active limit,
//       admission ttl ms, max queued, rate window ms, key lifetime ms.
// Returns {state, value, recent admissions, queued, admitted}: state 1 admitted (value: the
// end of the admission), 0 queued (value: position), -1 absent, -2 queue full.
const RedisScript kRoomScript(R"lua(
local queue, admitted, granted, seq = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local op, customer, now = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3])
local limit, ttl, max_queued = tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
local window, lifetime = tonumber(ARGV[7]), tonumber(ARGV[8])
local function advance()
  redis.call('ZREMRANGEBYSCORE', admitted, '-inf', now)
  redis.call('ZREMRANGEBYSCORE', granted, '-inf', now - window)
  local free = limit - redis.call('ZCARD', admitted)
  if free > 0 then
    local next = redis.call('ZPOPMIN', queue, free)
    for i = 1, #next, 2 do
      redis.call('ZADD', admitted, now + ttl, next[i])
      redis.call('ZADD', granted, now, next[i] .. ':' .. now)
    end
  end
end
advance()
if op == 1 then
  if not redis.call('ZSCORE', admitted, customer) and not redis.call('ZSCORE', queue, customer) then
    if redis.call('ZCARD', queue) >= max_queued then return {-2, 0, 0, 0, 0} end
    redis.call('ZADD', queue, redis.call('INCR', seq), customer)
    advance()
  end
  for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, lifetime) end
elseif op == 3 then
  redis.call('ZREM', admitted, customer)
  redis.call('ZREM', queue, customer)
  advance()
end
local recent = redis.call('ZCARD', granted)
local queued, inside = redis.call('ZCARD', queue), redis.call('ZCARD', admitted)
local till = redis.call('ZSCORE', admitted, customer)
if till then return {1, tonumber(till), recent, queued, inside} end
local rank = redis.call('ZRANK', queue, customer)
if rank then return {0, rank + 1, recent, queued, inside} end
return {-1, 0, recent, queued, inside}
)lua");

std::vector<std::string> RoomKeys(int64_t showtime_id) {
  const std::string prefix = "room:{" + std::to_string(showtime_id) + "}:";
  return {prefix + "queue", prefix + "admitted", prefix + "granted", prefix + "seq"};
}

}  // namespace

io::asio::awaitable<Result<std::vector<RedisReply>>> RedisWaitingRoom::RunAsync(
    int op, int64_t showtime_id, int64_t customer_id, WaitingRoomConfig config, Instant now) {
  const std::vector<std::string> keys = RoomKeys(showtime_id);
  const std::vector<std::string> args = {
      std::to_string(op),           std::to_string(customer_id),
      std::to_string(ToEpochMs(now)), std::to_string(config.active_limit),
      std::to_string(config.admission_ttl.count()), std::to_string(kMaxQueued),
      std::to_string(kRateWindow.count()), std::to_string(kKeyLifetime.count())};
  RedisPending call = client_->SendEval(kRoomScript, keys, args);
  auto reply = co_await client_->Await(std::move(call));
  if (!reply.ok()) {
    co_return Status(Code::kUnavailable, "waiting room: " + reply.status().message());
  }
  if (reply->type != RedisReply::Type::kArray || reply->elements.size() != 5)
    co_return Status(Code::kInternal, "waiting room: unexpected reply");
  co_return std::move(reply->elements);
}

Result<std::vector<RedisReply>> RedisWaitingRoom::Run(int op, int64_t showtime_id,
                                                      int64_t customer_id,
                                                      const WaitingRoomConfig& config,
                                                      Instant now) {
  return io::RunSync(RunAsync(op, showtime_id, customer_id, config, now));
}

namespace {

// A Join's or Find's place from the script's reply.
Result<QueuePlace> PlaceOf(const std::vector<RedisReply>& e) {
  BOX_ASSERT(e.size() == 5);  // RunAsync answers only a reply of five elements
  const int64_t state = e[0].integer;
  if (state == -2) return Status(Code::kUnavailable, "the waiting room is full");
  if (state == -1) return Status(Code::kNotFound, "not in the waiting room");
  QueuePlace place;
  place.admitted = state == 1;
  if (place.admitted) {
    place.admitted_until = FromEpochMs(e[1].integer);
  } else {
    place.position = e[1].integer;
  }
  place.recent_admissions = e[2].integer;
  return place;
}

}  // namespace

io::asio::awaitable<Result<QueuePlace>> RedisWaitingRoom::PlaceAsync(PlaceOp op,
                                                                     int64_t showtime_id,
                                                                     int64_t customer_id,
                                                                     WaitingRoomConfig config,
                                                                     Instant now) {
  auto reply =
      co_await RunAsync(op == PlaceOp::kJoin ? 1 : 2, showtime_id, customer_id, config, now);
  if (!reply.ok()) co_return reply.status();
  co_return PlaceOf(reply.value());
}

Result<QueuePlace> RedisWaitingRoom::Join(int64_t showtime_id, int64_t customer_id,
                                          const WaitingRoomConfig& config, Instant now) {
  return io::RunSync(PlaceAsync(PlaceOp::kJoin, showtime_id, customer_id, config, now));
}

Result<QueuePlace> RedisWaitingRoom::Find(int64_t showtime_id, int64_t customer_id,
                                          const WaitingRoomConfig& config, Instant now) {
  return io::RunSync(PlaceAsync(PlaceOp::kFind, showtime_id, customer_id, config, now));
}

Result<bool> RedisWaitingRoom::Admitted(int64_t showtime_id, int64_t customer_id, Instant now) {
  return io::RunSync(AdmittedAsync(showtime_id, customer_id, now));
}

io::asio::awaitable<Result<bool>> RedisWaitingRoom::AdmittedAsync(int64_t showtime_id,
                                                                  int64_t customer_id,
                                                                  Instant now) {
  // (The call is built before the co_await: g++ 12 miscompiles a braced list inside one.)
  RedisPending call =
      client_->Send({"ZSCORE", RoomKeys(showtime_id)[1], std::to_string(customer_id)});
  auto reply = co_await client_->Await(std::move(call));
  if (!reply.ok()) {
    co_return Status(Code::kUnavailable, "waiting room: " + reply.status().message());
  }
  if (reply->type != RedisReply::Type::kString) co_return false;
  co_return std::stoll(reply->text) > ToEpochMs(now);
}

Status RedisWaitingRoom::Leave(int64_t showtime_id, int64_t customer_id,
                               const WaitingRoomConfig& config, Instant now) {
  auto r = Run(3, showtime_id, customer_id, config, now);
  if (!r.ok()) return r.status();
  auto place = PlaceOf(r.value());
  return place.ok() || place.status().code() == Code::kNotFound ? Status::Ok() : place.status();
}

Result<RoomSizes> RedisWaitingRoom::Advance(int64_t showtime_id, const WaitingRoomConfig& config,
                                            Instant now) {
  auto reply = Run(4, showtime_id, 0, config, now);
  if (!reply.ok()) return reply.status();
  BOX_ASSERT(reply.value().size() == 5);  // RunAsync's check
  return RoomSizes{reply.value()[3].integer, reply.value()[4].integer};
}

}  // namespace boxoffice
