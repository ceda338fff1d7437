// SeatStreams: the live seat changes of API.md's GET /showtimes/{id}/seats/stream, as
// Server-Sent Events.
//
// It listens to SeatEvents (this instance's changes and, with Redis, every other
// instance's) and hands each change to the open streams of its showtime. Limits: at most
// max_streams open at once per instance (past that, Open refuses with kUnavailable, 503),
// and at most kMaxQueuedPerStream events waiting for a slow client; a stream that falls
// further behind is ended, and the client's EventSource reconnects and reads the map again,
// rather than the instance buffering without bound.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "core/metrics.h"
#include "core/status.h"
#include "core/sync.h"
#include "gate/seat_events.h"
#include "http/message.h"

namespace boxoffice::api {

class SeatStreams {
 public:
  static constexpr size_t kMaxQueuedPerStream = 256;

  SeatStreams(SeatEvents* events, size_t max_streams, Metrics* metrics);
  ~SeatStreams();

  // A new stream of showtime_id's changes from now on, or kUnavailable when max_streams
  // are open.
  Result<std::shared_ptr<http::BodyStream>> Open(int64_t showtime_id);
  size_t open() const;

 private:
  class Stream;
  void OnChange(const SeatChange& change);
  void Close(Stream* stream);

  SeatEvents* events_;
  const size_t max_streams_;
  uint64_t subscription_;
  Counter& refused_;
  mutable Mutex mu_;
  std::multimap<int64_t, Stream*> by_showtime_ BOX_GUARDED_BY(mu_);
};

}  // namespace boxoffice::api
