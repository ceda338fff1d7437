#include "gate/redis_cluster.h"

#include <strings.h>

#include <charconv>

#include "core/status.h"
#include "gate/redis_client.h"

namespace boxoffice {
namespace {

uint16_t Crc16(std::string_view data) {  // XMODEM: polynomial 0x1021, initial value 0
  uint16_t crc = 0;
  for (unsigned char byte : data) {
    crc ^= static_cast<uint16_t>(byte) << 8;
    for (int bit = 0; bit < 8; ++bit)
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
  }
  return crc;
}

bool ParseInt(std::string_view text, int* out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

bool Is(std::string_view a, const char* b) {
  return a.size() == std::char_traits<char>::length(b) && strncasecmp(a.data(), b, a.size()) == 0;
}

}  // namespace

int RedisKeySlot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      key = key.substr(open + 1, close - open - 1);
  }
  return Crc16(key) % kRedisClusterSlots;
}

std::optional<RedisRedirect> ParseRedisRedirect(std::string_view error) {
  RedisRedirect r;
  if (error.rfind("MOVED ", 0) == 0) {
    error.remove_prefix(6);
  } else if (error.rfind("ASK ", 0) == 0) {
    r.ask = true;
    error.remove_prefix(4);
  } else {
    return std::nullopt;
  }
  const size_t space = error.find(' ');
  if (space == std::string_view::npos || !ParseInt(error.substr(0, space), &r.slot) || r.slot < 0 ||
      r.slot >= kRedisClusterSlots)
    return std::nullopt;
  const std::string_view where = error.substr(space + 1);
  const size_t colon = where.rfind(':');
  if (colon == std::string_view::npos || colon == 0 ||
      !ParseInt(where.substr(colon + 1), &r.to.port) || r.to.port <= 0 || r.to.port > 65535)
    return std::nullopt;
  r.to.host = std::string(where.substr(0, colon));
  return r;
}

Result<RedisSlotMap> ParseClusterSlots(const RedisReply& reply) {
  const Status bad(Code::kInternal, "redis: not a CLUSTER SLOTS reply");
  if (reply.type != RedisReply::Type::kArray) return bad;
  RedisSlotMap map;
  map.master_of.assign(kRedisClusterSlots, -1);
  auto endpoint = [](const RedisReply& node, RedisEndpoint* out) {
    if (node.type != RedisReply::Type::kArray || node.elements.size() < 2 ||
        node.elements[0].type != RedisReply::Type::kString ||
        node.elements[1].type != RedisReply::Type::kInteger)
      return false;
    out->host = node.elements[0].text;
    out->port = static_cast<int>(node.elements[1].integer);
    return !out->host.empty() && out->host != "?" && out->port > 0 && out->port <= 65535;
  };
  auto index_of = [](std::vector<RedisEndpoint>& list, const RedisEndpoint& e) {
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i] == e) return i;
    list.push_back(e);
    return list.size() - 1;
  };
  bool any = false;
  for (const RedisReply& range : reply.elements) {
    if (range.type != RedisReply::Type::kArray || range.elements.size() < 3 ||
        range.elements[0].type != RedisReply::Type::kInteger ||
        range.elements[1].type != RedisReply::Type::kInteger)
      return bad;
    const int64_t first = range.elements[0].integer, last = range.elements[1].integer;
    if (first < 0 || last >= kRedisClusterSlots || first > last) return bad;
    RedisEndpoint master;
    if (!endpoint(range.elements[2], &master)) continue;  // a master with no known address
    const size_t m = index_of(map.masters, master);
    for (int64_t slot = first; slot <= last; ++slot) map.master_of[slot] = static_cast<int16_t>(m);
    any = true;
  }
  if (!any) return bad;
  map.nodes = map.masters;
  for (const RedisReply& range : reply.elements) {
    for (size_t i = 3; i < range.elements.size(); ++i) {
      RedisEndpoint replica;
      if (endpoint(range.elements[i], &replica)) index_of(map.nodes, replica);
    }
  }
  // What the client relies on, whatever the reply held: a master, a slot table, and the
  // masters among the nodes.
  BOX_ASSERT(!map.masters.empty() &&
             map.master_of.size() == static_cast<size_t>(kRedisClusterSlots));
  BOX_ASSERT(map.nodes.size() >= map.masters.size());
  return map;
}

std::optional<std::string_view> RedisRoutingKey(const std::vector<std::string>& argv) {
  if (argv.empty()) return std::nullopt;
  const std::string_view name = argv[0];
  if (Is(name, "EVALSHA") || Is(name, "EVAL")) {
    int keys = 0;
    if (argv.size() < 4 || !ParseInt(argv[2], &keys) || keys < 1) return std::nullopt;
    return std::string_view(argv[3]);
  }
  if (Is(name, "PING") || Is(name, "SCRIPT") || Is(name, "PUBLISH") || Is(name, "CLUSTER") ||
      Is(name, "ASKING") || Is(name, "INFO") || argv.size() < 2)
    return std::nullopt;
  return std::string_view(argv[1]);
}

}  // namespace boxoffice
