// AdmissionStore: each showtime's waiting room settings (the queue itself is in Redis,
// gate/waiting_room.h). A role of Store.
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

class AdmissionStore {
 public:
  virtual ~AdmissionStore() = default;

  // Sets a showtime's waiting room; kNotFound for an unknown showtime.
  virtual Status SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) = 0;
  // The same, awaited on an I/O loop (by default on the loop's blocking pool).
  virtual io::asio::awaitable<Status> SetWaitingRoomAsync(int64_t showtime_id,
                                                          WaitingRoomConfig config);
  // The showtimes whose waiting room is on.
  virtual Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> EnabledWaitingRooms() = 0;
};

}  // namespace boxoffice
