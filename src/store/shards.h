// Which PostgreSQL shard a showtime, a booking, a hold or a checkout claim lives on, read
// from its id alone (DESIGN.md "Beyond one machine"): no lookup service, no directory.
//
// Showtime and booking ids carry the shard in their high bits: shard k issues ids in
// [k·2^40 + 1, (k+1)·2^40) (its identity sequences are bounded so, migration 0021 and
// PgStore::Number). Shard 0's ids are the small ids a single database has always issued,
// so a deployment that grows from one database to several keeps every id it gave out.
// Up to kMaxShards shards keep every id below 2^53, exact in a browser's numbers.
//
// Hold ids and checkout-claim tokens are UUIDs. On shard 0 they are random (version 4);
// on shard k > 0 they are version 8 (RFC 9562's layout for custom UUIDs) with k in their
// first 16 bits and 106 random bits. Whoever makes a hold id knows its showtime
// (NewHoldId); a claim's token is made by the store from the hold id it claims for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace boxoffice {

constexpr int kShardIdBits = 40;
constexpr int64_t kShardIdSpan = int64_t{1} << kShardIdBits;
constexpr int kMaxShards = 8192;  // 8192 · 2^40 = 2^53

// The shard of a showtime or booking id; nullopt for ids no shard issues (≤ 0, or 2^53
// and above).
std::optional<int> ShardOfId(int64_t id);
// The smallest and largest id shard k issues.
int64_t FirstIdOfShard(int shard);
int64_t LastIdOfShard(int shard);

// A fresh UUID that says `shard` (version 4 for shard 0).
std::string NewUuidOnShard(int shard);
// The shard a UUID made by NewUuidOnShard says; 0 for any other UUID (or text).
int ShardOfUuid(std::string_view uuid);

// A fresh hold id for a hold of this showtime: it says the showtime's shard.
std::string NewHoldId(int64_t showtime_id);

}  // namespace boxoffice
