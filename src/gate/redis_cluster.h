// Redis Cluster's routing rules, as the cluster specification states them: a key belongs
// to one of 16384 slots (CRC16 of its hash tag, or of the whole key), each slot to one
// master; a node that does not own a key's slot answers MOVED (the slot moved for good:
// learn the map again) or ASK (the slot is migrating: ask that node once, after ASKING).
// RedisClient routes by these; they are pure functions, tested on their own.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace boxoffice {

struct RedisReply;

constexpr int kRedisClusterSlots = 16384;

// The slot of a key: CRC16-XMODEM of the part between the first '{' and the next '}' when
// that part is not empty, else of the whole key, modulo 16384.
int RedisKeySlot(std::string_view key);

struct RedisEndpoint {
  std::string host;
  int port = 0;
  std::string Name() const { return host + ":" + std::to_string(port); }
  bool operator==(const RedisEndpoint&) const = default;
};

// "MOVED 3999 127.0.0.1:6381" or "ASK 3999 127.0.0.1:6381".
struct RedisRedirect {
  bool ask = false;
  int slot = 0;
  RedisEndpoint to;
};
std::optional<RedisRedirect> ParseRedisRedirect(std::string_view error);

// Which master serves each slot, and every node the cluster named (masters, then replicas).
struct RedisSlotMap {
  std::vector<RedisEndpoint> masters;
  std::vector<int16_t> master_of;  // by slot: an index into masters, -1 for a slot no one serves
  std::vector<RedisEndpoint> nodes;
};
// From a CLUSTER SLOTS reply. kInternal when it is not one (or covers no slot).
Result<RedisSlotMap> ParseClusterSlots(const RedisReply& reply);

// The key a command is routed by: an EVAL/EVALSHA's first key, a keyed command's first
// argument; nullopt for a command without keys (PING, SCRIPT, PUBLISH, CLUSTER, ASKING).
std::optional<std::string_view> RedisRoutingKey(const std::vector<std::string>& argv);

}  // namespace boxoffice
