// SeatMapView: what the hold path may ask of this instance's seat maps (api/seat_map_cache.h
// keeps them; SeatMapCacheView adapts it). Only Load may query the store; the others answer
// from what the instance already has.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "domain/showtime.h"
#include "io/loop.h"

namespace boxoffice {

class SeatMapView {
 public:
  virtual ~SeatMapView() = default;

  // The showtime's map the first time a hold needs its layout, through the instance's
  // single flight, so a storm's first holds do not each load it. kNotFound for an unknown
  // showtime.
  virtual io::asio::awaitable<Result<std::shared_ptr<const SeatMap>>> Load(int64_t showtime_id) = 0;
  // The latest map this instance has, if recent enough to suggest alternatives from (it
  // lags behind holds in flight and other instances'); else null.
  virtual std::shared_ptr<const SeatMap> Recent(int64_t showtime_id) = 0;
  // Whether this instance's map shows every one of the seats AVAILABLE.
  virtual bool ShowsAvailable(int64_t showtime_id, const std::vector<std::string>& seats) = 0;
};

}  // namespace boxoffice
