#include "io/follow_ups.h"

#include <algorithm>

#include "core/log.h"
#include "core/status.h"

namespace boxoffice::io {

FollowUps::FollowUps(Metrics* metrics, std::string name, size_t max_pending)
    : max_pending_(max_pending),
      done_(metrics->GetCounter("boxoffice_follow_ups_total",
                                "Repairs owed after a lost answer, by how they ended.",
                                "owner=\"" + name + "\",outcome=\"done\"")),
      expired_(metrics->GetCounter("boxoffice_follow_ups_total",
                                   "Repairs owed after a lost answer, by how they ended.",
                                   "owner=\"" + name + "\",outcome=\"expired\"")),
      dropped_(metrics->GetCounter("boxoffice_follow_ups_total",
                                   "Repairs owed after a lost answer, by how they ended.",
                                   "owner=\"" + name + "\",outcome=\"dropped\"")),
      attempts_(metrics->GetCounter("boxoffice_follow_up_attempts_total",
                                    "Attempts at repairs owed after a lost answer.",
                                    "owner=\"" + name + "\"")) {
  metrics->AddGauge(
      "boxoffice_follow_ups_pending", "Repairs owed after a lost answer, still being tried.",
      [gauge = pending_gauge_] { return static_cast<double>(gauge->load()); },
      "owner=\"" + name + "\"");
}

FollowUps::~FollowUps() { Stop(); }

bool FollowUps::Add(std::string what, Repair repair, Clock::time_point deadline) {
  BOX_ASSERT(repair != nullptr);  // Run calls it
  {
    std::lock_guard lock(mu_);
    if (stop_ || entries_.size() >= max_pending_) {
      dropped_.Inc();
      LogWarn("repair dropped: too many waiting", {{"what", what}});
      return false;
    }
    entries_.push_back(Entry{std::move(what), std::move(repair), deadline, Clock::now(),
                             kFirstRetry});
    BOX_ASSERT(entries_.size() <= max_pending_);
    pending_gauge_->store(entries_.size());
    if (!thread_.joinable()) thread_ = std::thread([this] { Run(); });
  }
  wake_.notify_one();
  return true;
}

void FollowUps::Stop() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard lock(mu_);
  entries_.clear();
  pending_gauge_->store(0);
  idle_.notify_all();
}

size_t FollowUps::pending() {
  std::lock_guard lock(mu_);
  return entries_.size() + (running_ ? 1 : 0);
}

void FollowUps::Drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return stop_ || (entries_.empty() && !running_); });
}

void FollowUps::Run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    if (entries_.empty()) {
      idle_.notify_all();
      wake_.wait(lock, [this] { return stop_ || !entries_.empty(); });
      continue;
    }
    // The entry due first (entries are few: a scan is enough).
    auto due = std::min_element(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
      return a.next_try < b.next_try;
    });
    const Clock::time_point now = Clock::now();
    if (due->next_try > now) {
      wake_.wait_until(lock, due->next_try);
      continue;
    }
    Entry entry = std::move(*due);
    entries_.erase(due);
    running_ = true;
    lock.unlock();
    attempts_.Inc();
    Outcome outcome = Outcome::kRetry;
    try {
      outcome = entry.repair();
    } catch (const std::exception& e) {  // a repair's throw is a failed attempt, nothing more
      LogWarn("repair threw", {{"what", entry.what}, {"error", e.what()}});
    } catch (...) {
      LogWarn("repair threw", {{"what", entry.what}});
    }
    lock.lock();
    running_ = false;
    if (outcome == Outcome::kDone) {
      done_.Inc();
    } else if (Clock::now() + entry.backoff >= entry.deadline) {
      expired_.Inc();
      LogWarn("repair given up at its deadline", {{"what", entry.what}});
    } else {
      entry.next_try = Clock::now() + entry.backoff;
      entry.backoff = std::min(entry.backoff * 2, kMaxRetry);
      BOX_ASSERT(entry.backoff >= kFirstRetry && entry.backoff <= kMaxRetry);
      entries_.push_back(std::move(entry));
    }
    pending_gauge_->store(entries_.size());
  }
}

}  // namespace boxoffice::io
