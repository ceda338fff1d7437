#include "store/shards.h"

#include <cstdio>

#include "core/crypto.h"
#include "core/status.h"

namespace boxoffice {

std::optional<int> ShardOfId(int64_t id) {
  if (id <= 0) return std::nullopt;
  const int64_t shard = id >> kShardIdBits;
  // Ids from 2^53 up are issued by no shard: they come only from outside (a path, a
  // reference), and name nothing.
  if (shard >= kMaxShards) return std::nullopt;
  return static_cast<int>(shard);
}

int64_t FirstIdOfShard(int shard) {
  BOX_ASSERT(shard >= 0 && shard < kMaxShards);
  return shard * kShardIdSpan + 1;
}

int64_t LastIdOfShard(int shard) {
  BOX_ASSERT(shard >= 0 && shard < kMaxShards);
  return (shard + 1) * kShardIdSpan - 1;
}

std::string NewUuidOnShard(int shard) {
  BOX_ASSERT(shard >= 0 && shard < kMaxShards);
  std::string uuid = NewUuid();
  if (shard == 0) return uuid;
  char tag[5];
  std::snprintf(tag, sizeof tag, "%04x", shard);
  uuid.replace(0, 4, tag);
  uuid[14] = '8';                          // version 8; the variant bits stay RFC 9562's
  BOX_ASSERT(ShardOfUuid(uuid) == shard);  // the id says its shard, read back as written
  return uuid;
}

int ShardOfUuid(std::string_view uuid) {
  if (!IsUuid(uuid) || uuid[14] != '8') return 0;
  int shard = 0;
  for (int i = 0; i < 4; ++i) {
    const char c = uuid[i];
    shard = shard * 16 + (c <= '9' ? c - '0' : c - 'a' + 10);
  }
  return shard < kMaxShards ? shard : 0;
}

std::string NewHoldId(int64_t showtime_id) {
  return NewUuidOnShard(ShardOfId(showtime_id).value_or(0));
}

}  // namespace boxoffice
