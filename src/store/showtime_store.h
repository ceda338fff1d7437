// ShowtimeStore: the showtimes, their halls' layouts and their seats' state as read. A role
// of Store (store/store.h), implemented by every engine; on shards a showtime's reads go to
// its shard and lists fan out.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "domain/showtime.h"
#include "io/loop.h"

namespace boxoffice {

class ShowtimeStore {
 public:
  virtual ~ShowtimeStore() = default;

  // kInvalid when the layout breaks a schema rule the caller should have checked.
  virtual Result<int64_t> CreateShowtime(const NewShowtime& showtime) = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<int64_t>> CreateShowtimeAsync(NewShowtime showtime);
  virtual Result<Showtime> GetShowtime(int64_t showtime_id) = 0;
  virtual Result<std::vector<Showtime>> ListShowtimes(const ShowtimeQuery& query) = 0;
  // The same reads, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<Showtime>> GetShowtimeAsync(int64_t showtime_id);
  virtual io::asio::awaitable<Result<std::vector<Showtime>>> ListShowtimesAsync(
      ShowtimeQuery query);
  virtual Result<int64_t> CountShowtimes() = 0;
  // `boxoffice seed` at chain scale: writes `showtimes` as the batch named `batch`, all or
  // nothing, and false (nothing written) when a batch of that name was written before, so
  // an interrupted seed resumes where it stopped. `route` picks the shard of a store of
  // several (batch i on shard i mod N, whatever the instance). PostgreSQL copies the seats
  // (COPY) in one transaction with the batch's name; by default each showtime is created
  // on its own (SQLite: the demo's few, not resumable).
  virtual Result<bool> SeedBatch(const std::string& batch,
                                 const std::vector<NewShowtime>& showtimes, int64_t route);
  // kNotFound for an unknown showtime.
  virtual Result<SeatMap> GetSeatMap(int64_t showtime_id) = 0;
  // The same read, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Result<SeatMap>> GetSeatMapAsync(int64_t showtime_id);
  virtual Result<std::vector<SeatOwner>> GetSeatOwners(int64_t showtime_id) = 0;
};

}  // namespace boxoffice
