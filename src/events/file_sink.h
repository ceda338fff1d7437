// FileSink: appends each event's JSON as one line to a file and fdatasync()s it before
// reporting success, so "delivered" means "on disk". The directory is created if missing.
#pragma once

#include <mutex>
#include <string>

#include "core/sync.h"
#include "events/event_sink.h"

namespace boxoffice {

class FileSink final : public EventSink {
 public:
  explicit FileSink(std::string path);
  ~FileSink() override;
  // kUnavailable when the file cannot be opened or written (the relay retries later).
  Status Deliver(const std::vector<OutboxEvent>& events) override;
  // A local write and fsync: a second is far more than it takes.
  Millis MaxDeliveryTime() const override { return Millis(1'000); }

 private:
  Mutex mu_;  // one Deliver at a time (each shard's relay may share this sink)
  std::string path_;
  int fd_ BOX_GUARDED_BY(mu_) = -1;
};

}  // namespace boxoffice
