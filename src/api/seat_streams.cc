#include "api/seat_streams.h"

namespace boxoffice::api {

class SeatStreams::Stream final : public http::BodyStream {
 public:
  Stream(SeatStreams* owner, int64_t showtime_id) : owner_(owner), showtime_id_(showtime_id) {}
  ~Stream() override { owner_->Close(this); }

  int64_t showtime_id() const { return showtime_id_; }

  void Attach(std::function<void()> wake) override {
    MutexLock lock(mu_);
    wake_ = std::move(wake);
    if (!queue_.empty() || overflowed_) wake_();
  }

  bool Pull(std::string* out) override {
    MutexLock lock(mu_);
    if (first_) {
      // Tells EventSource how soon to reconnect should the stream end.
      *out += "retry: 2000\n\n";
      first_ = false;
    }
    for (const auto& event : queue_) *out += "data: " + event + "\n\n";
    queue_.clear();
    return !overflowed_;
  }

  std::string Heartbeat() const override { return ": heartbeat\n\n"; }

  void Push(const std::string& event) {
    MutexLock lock(mu_);
    if (overflowed_) return;
    if (queue_.size() >= kMaxQueuedPerStream) {
      overflowed_ = true;
      queue_.clear();
    } else {
      queue_.push_back(event);
    }
    if (wake_) wake_();
  }

 private:
  SeatStreams* owner_;
  const int64_t showtime_id_;
  Mutex mu_;  // a leaf: wake_ only posts to the connection's loop
  std::function<void()> wake_ BOX_GUARDED_BY(mu_);
  std::deque<std::string> queue_ BOX_GUARDED_BY(mu_);
  bool first_ BOX_GUARDED_BY(mu_) = true;
  bool overflowed_ BOX_GUARDED_BY(mu_) = false;
};

SeatStreams::SeatStreams(SeatEvents* events, size_t max_streams, Metrics* metrics)
    : events_(events),
      max_streams_(max_streams),
      subscription_(events->Subscribe([this](const SeatChange& c) { OnChange(c); })),
      refused_(metrics->GetCounter("boxoffice_seat_streams_refused_total",
                                   "Seat-change streams refused: the per-instance bound.")) {
  metrics->AddGauge("boxoffice_seat_streams_open", "Open seat-change streams (SSE).",
                    [this] { return static_cast<double>(open()); });
}

SeatStreams::~SeatStreams() { events_->Unsubscribe(subscription_); }

Result<std::shared_ptr<http::BodyStream>> SeatStreams::Open(int64_t showtime_id) {
  MutexLock lock(mu_);
  if (by_showtime_.size() >= max_streams_) {
    refused_.Inc();
    return Status(Code::kUnavailable,
                  "too many open seat streams (" + std::to_string(max_streams_) + ")");
  }
  auto stream = std::make_shared<Stream>(this, showtime_id);
  by_showtime_.emplace(showtime_id, stream.get());
  return std::shared_ptr<http::BodyStream>(std::move(stream));
}

size_t SeatStreams::open() const {
  MutexLock lock(mu_);
  return by_showtime_.size();
}

void SeatStreams::OnChange(const SeatChange& change) {
  MutexLock lock(mu_);
  auto [first, last] = by_showtime_.equal_range(change.showtime_id);
  if (first == last) return;
  const std::string event = SeatChangeJson(change);
  for (auto it = first; it != last; ++it) it->second->Push(event);
}

void SeatStreams::Close(Stream* stream) {
  MutexLock lock(mu_);
  auto [first, last] = by_showtime_.equal_range(stream->showtime_id());
  for (auto it = first; it != last; ++it) {
    if (it->second == stream) {
      by_showtime_.erase(it);
      return;
    }
  }
}

}  // namespace boxoffice::api
