#include "store/sharded_store.h"

#include <algorithm>
#include <charconv>
#include <set>

#include "core/log.h"
#include "core/status.h"
#include "core/text.h"
#include "store/shards.h"

namespace boxoffice {
namespace {

Status NotMigrated() {
  return Status(Code::kUnavailable, "the shards are not migrated and numbered yet");
}

// HOST:PORT/DB of a store's URL, without its user, password or parameters.
std::string Where(const PgStore& store) {
  std::string where = store.url();
  if (size_t scheme = where.find("://"); scheme != std::string::npos) where.erase(0, scheme + 3);
  if (size_t at = where.rfind('@'); at != std::string::npos) where.erase(0, at + 1);
  if (size_t query = where.find('?'); query != std::string::npos) where.erase(query);
  return where;
}

}  // namespace

ShardedStore::ShardedStore(std::vector<std::unique_ptr<PgStore>> shards)
    : owned_(std::move(shards)) {
  BOX_ASSERT(!owned_.empty() && owned_.size() <= static_cast<size_t>(kMaxShards));
}

ShardedStore::~ShardedStore() = default;

std::string ShardedStore::Describe(const Shard& shard) const {
  return "shard " + std::to_string(shard.number) + " (" + Where(*shard.store) + ")";
}

Status ShardedStore::Migrate() {
  for (auto& shard : owned_) {
    if (Status s = shard->Migrate(); !s.ok()) {
      return Status(s.code(), Where(*shard) + ": " + s.message());
    }
  }
  if (!shards_.empty()) return Status::Ok();  // numbered by an earlier call
  // Numbers already taken, then the unnumbered: one holding showtimes must be shard 0.
  std::vector<std::optional<int>> numbers(owned_.size());
  std::set<int> taken;
  for (size_t i = 0; i < owned_.size(); ++i) {
    auto number = owned_[i]->ShardNumber();
    if (!number.ok()) return number.status();
    numbers[i] = number.value();
    if (numbers[i] && !taken.insert(*numbers[i]).second) {
      return Status(Code::kInvalid,
                    "two --db URLs are the same shard " + std::to_string(*numbers[i]));
    }
  }
  // The unnumbered, in an order every instance agrees on whatever the order of its flags:
  // one holding showtimes first (it must be shard 0), then by their random identity.
  struct Unnumbered {
    bool holds_data = false;
    std::string identity;
    size_t index = 0;
  };
  std::vector<Unnumbered> unnumbered;
  for (size_t i = 0; i < owned_.size(); ++i) {
    if (numbers[i]) continue;
    auto count = owned_[i]->CountShowtimes();
    if (!count.ok()) return count.status();
    auto identity = owned_[i]->DatabaseId();
    if (!identity.ok()) return identity.status();
    unnumbered.push_back({count.value() > 0, identity.value(), i});
  }
  std::sort(unnumbered.begin(), unnumbered.end(), [](const Unnumbered& a, const Unnumbered& b) {
    return a.holds_data != b.holds_data ? a.holds_data : a.identity < b.identity;
  });
  for (const Unnumbered& u : unnumbered) {
    int wanted = 0;
    while (taken.count(wanted)) ++wanted;
    if (u.holds_data && wanted != 0) {
      return Status(Code::kInvalid,
                    "a --db URL holds showtimes but is no shard yet, and shard 0 is taken: "
                    "showtimes with shard 0's ids cannot move to another shard");
    }
    // Another instance starting now may have numbered it meanwhile (the same way): the
    // number it has is the one kept.
    auto got = owned_[u.index]->TakeShardNumber(wanted);
    if (!got.ok()) return got.status();
    if (!taken.insert(got.value()).second) {
      return Status(Code::kInvalid,
                    "two --db URLs are the same shard " + std::to_string(got.value()));
    }
    numbers[u.index] = got.value();
    LogInfo("shard numbered", {{"shard", got.value()}});
  }
  std::vector<Shard> shards;
  for (size_t i = 0; i < owned_.size(); ++i) {
    BOX_ASSERT(numbers[i].has_value());  // numbered before, or just now above
    shards.push_back(Shard{*numbers[i], owned_[i].get()});
  }
  std::sort(shards.begin(), shards.end(),
            [](const Shard& a, const Shard& b) { return a.number < b.number; });
  by_number_.assign(shards.back().number + 1, nullptr);
  for (const Shard& s : shards) by_number_[s.number] = s.store;
  shards_ = std::move(shards);
  BOX_ASSERT(shards_.size() == owned_.size());  // every --db URL is a shard, once
  return Status::Ok();
}

PgStore* ShardedStore::ForNumber(int number) const {
  if (number < 0 || static_cast<size_t>(number) >= by_number_.size()) return nullptr;
  return by_number_[number];
}

PgStore* ShardedStore::ForShowtime(int64_t showtime_id) const {
  const std::optional<int> shard = ShardOfId(showtime_id);
  return shard ? ForNumber(*shard) : nullptr;
}

PgStore* ShardedStore::ForBooking(int64_t booking_id) const { return ForShowtime(booking_id); }

PgStore* ShardedStore::ForUuid(const std::string& uuid) const {
  return ForNumber(ShardOfUuid(uuid));
}

Result<PgStore*> ShardedStore::ForPayment(const PaymentReport& report) const {
  if (shards_.empty()) return NotMigrated();
  if (auto id = ParseDecimalId(report.reference)) {
    if (PgStore* shard = ForBooking(*id)) return shard;
    if (const std::optional<int> number = ShardOfId(*id)) {
      // A shard this instance does not know (one just added, its --db not given here yet):
      // recorded as unknown it would be refunded while its own shard confirms it. 503,
      // so the gateway delivers it again, to an instance that knows the shard.
      return Status(Code::kUnavailable, "booking " + report.reference + " is on shard " +
                                            std::to_string(*number) +
                                            ", which is not among this instance's --db");
    }
  }
  return shards_.front().store;  // a reference no shard issued: recorded and refunded there
}

std::vector<Store::Database> ShardedStore::Databases() {
  std::vector<Database> out;
  for (const Shard& s : shards_)
    out.push_back(Database{s.number, "shard " + std::to_string(s.number), s.store, s.store});
  return out;
}

namespace {

io::asio::awaitable<void> PingInto(PgStore* store, std::shared_ptr<io::Completion<Status>> answer) {
  Status status = co_await store->PingAsync();
  answer->Set(std::move(status));
}

}  // namespace

// Every shard is asked at once and waited for until the deadline: one shard that does not
// answer (a host that drops packets waits out the connect timeout) must not make /readyz
// slower than a balancer's health check, or every instance would be taken out.
io::asio::awaitable<std::vector<std::pair<int, Status>>> ShardedStore::PingDatabasesAsync(
    Millis deadline) {
  auto executor = co_await io::asio::this_coro::executor;
  std::vector<std::shared_ptr<io::Completion<Status>>> answers;
  for (const Shard& s : shards_) {
    answers.push_back(std::make_shared<io::Completion<Status>>());
    io::asio::co_spawn(executor, PingInto(s.store, answers.back()), io::asio::detached);
  }
  const auto until = std::chrono::steady_clock::now() + deadline;
  BOX_ASSERT(answers.size() == shards_.size());
  std::vector<std::pair<int, Status>> out;
  for (size_t i = 0; i < shards_.size(); ++i) {
    const auto left = std::max<std::chrono::steady_clock::duration>(
        std::chrono::steady_clock::duration::zero(), until - std::chrono::steady_clock::now());
    std::optional<Status> answer = co_await answers[i]->Wait(left);
    out.emplace_back(shards_[i].number,
                     answer
                         ? std::move(*answer)
                         : Status(Code::kUnavailable,
                                  "no answer within " + std::to_string(deadline.count()) + " ms"));
  }
  co_return out;
}

namespace {

// OK when every shard answered, else kUnavailable naming those that did not.
Status JoinPings(const std::vector<std::string>& down) {
  if (down.empty()) return Status::Ok();
  std::string message;
  for (const std::string& d : down) message += (message.empty() ? "" : "; ") + d;
  return Status(Code::kUnavailable, message);
}

}  // namespace

Status ShardedStore::Ping() {
  if (shards_.empty()) return NotMigrated();
  std::vector<std::string> down;
  for (const Shard& s : shards_) {
    if (Status st = s.store->Ping(); !st.ok())
      down.push_back(Describe(s) + " is down: " + st.message());
  }
  return JoinPings(down);
}

io::asio::awaitable<Status> ShardedStore::PingAsync() {
  if (shards_.empty()) co_return NotMigrated();
  std::vector<std::string> down;
  for (const Shard& s : shards_) {
    Status st = co_await s.store->PingAsync();
    if (!st.ok()) down.push_back(Describe(s) + " is down: " + st.message());
  }
  co_return JoinPings(down);
}

// The shard with the fewest showtimes takes the next (the lowest number among equals), so
// shards fill evenly whichever instance creates, and a shard just added takes the new
// showtimes until it has caught up; one that does not answer is passed over. An admin's
// request, not the hot path: a count per shard.
Result<int64_t> ShardedStore::CreateShowtime(const NewShowtime& showtime) {
  if (shards_.empty()) return NotMigrated();
  std::vector<std::pair<int64_t, const Shard*>> by_load;
  Status last = Status::Ok();
  for (const Shard& s : shards_) {
    auto count = s.store->CountShowtimes();
    if (count.ok()) {
      by_load.emplace_back(count.value(), &s);
    } else {
      last = count.status();  // down or busy: it takes none now
    }
  }
  std::stable_sort(by_load.begin(), by_load.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Only a shard that did not answer its count is passed over: once the insert was sent, a
  // lost answer may hide a commit, and another shard trying too would make the showtime
  // twice (each of its seats then for sale twice). Such a failure answers 503.
  if (by_load.empty()) return last;
  return by_load.front().second->store->CreateShowtime(showtime);
}

Result<Showtime> ShardedStore::GetShowtime(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->GetShowtime(showtime_id);
}

io::asio::awaitable<Result<Showtime>> ShardedStore::GetShowtimeAsync(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) co_return ShowtimeNotFound(showtime_id);
  co_return co_await s->GetShowtimeAsync(showtime_id);
}

namespace {

// Each shard's page, ordered by (starts_at, id): the first `limit` of them all.
std::vector<Showtime> MergePages(std::vector<std::vector<Showtime>> pages, int limit) {
  std::vector<Showtime> all;
  for (auto& page : pages)
    for (auto& s : page) all.push_back(std::move(s));
  std::sort(all.begin(), all.end(), [](const Showtime& a, const Showtime& b) {
    return a.starts_at != b.starts_at ? a.starts_at < b.starts_at : a.id < b.id;
  });
  if (all.size() > static_cast<size_t>(std::max(limit, 0))) all.resize(std::max(limit, 0));
  return all;
}

}  // namespace

Result<std::vector<Showtime>> ShardedStore::ListShowtimes(const ShowtimeQuery& query) {
  if (shards_.empty()) return NotMigrated();
  std::vector<std::vector<Showtime>> pages;
  for (const Shard& s : shards_) {
    auto page = s.store->ListShowtimes(query);
    if (!page.ok()) return page.status();
    pages.push_back(std::move(page.value()));
  }
  return MergePages(std::move(pages), query.limit);
}

io::asio::awaitable<Result<std::vector<Showtime>>> ShardedStore::ListShowtimesAsync(
    ShowtimeQuery query) {
  if (shards_.empty()) co_return NotMigrated();
  std::vector<std::vector<Showtime>> pages;
  for (const Shard& s : shards_) {
    auto page = co_await s.store->ListShowtimesAsync(query);
    if (!page.ok()) co_return page.status();
    pages.push_back(std::move(page.value()));
  }
  co_return MergePages(std::move(pages), query.limit);
}

namespace {

// The sum of what count(shard's store) answers on every shard, or the first failure.
template <class Shards, class F>
Result<int64_t> SumOverShards(const Shards& shards, F count) {
  int64_t total = 0;
  for (const auto& s : shards) {
    Result<int64_t> n = count(*s.store);
    if (!n.ok()) return n.status();
    total += n.value();
  }
  return total;
}

}  // namespace

Result<int64_t> ShardedStore::CountShowtimes() {
  if (shards_.empty()) return NotMigrated();
  return SumOverShards(shards_, [](PgStore& s) { return s.CountShowtimes(); });
}

Result<bool> ShardedStore::SeedBatch(const std::string& batch,
                                     const std::vector<NewShowtime>& showtimes, int64_t route) {
  if (shards_.empty()) return NotMigrated();
  const size_t n = shards_.size();
  const Shard& shard = shards_[static_cast<size_t>(route < 0 ? -route : route) % n];
  return shard.store->SeedBatch(batch, showtimes, route);
}

Result<int64_t> ShardedStore::SizeOnDisk() {
  if (shards_.empty()) return NotMigrated();
  return SumOverShards(shards_, [](PgStore& s) { return s.SizeOnDisk(); });
}

Result<SeatMap> ShardedStore::GetSeatMap(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->GetSeatMap(showtime_id);
}

io::asio::awaitable<Result<SeatMap>> ShardedStore::GetSeatMapAsync(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) co_return ShowtimeNotFound(showtime_id);
  co_return co_await s->GetSeatMapAsync(showtime_id);
}

Result<std::vector<SeatOwner>> ShardedStore::GetSeatOwners(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->GetSeatOwners(showtime_id);
}

namespace {

// A hold id must name its showtime's shard, or later requests about it would miss it.
Status HoldIdOnWrongShard(const HoldRequest& request) {
  return Status(Code::kInvalid, "hold id " + request.hold_id +
                                    " does not name the shard of showtime " +
                                    std::to_string(request.showtime_id) + " (NewHoldId)");
}

bool HoldIdFits(const HoldRequest& request) {
  return ShardOfUuid(request.hold_id) == ShardOfId(request.showtime_id).value_or(-1);
}

}  // namespace

Result<Hold> ShardedStore::HoldSeats(const HoldRequest& request) {
  PgStore* s = ForShowtime(request.showtime_id);
  if (!s) return ShowtimeNotFound(request.showtime_id);
  if (!HoldIdFits(request)) return HoldIdOnWrongShard(request);
  return s->HoldSeats(request);
}

io::asio::awaitable<Result<Hold>> ShardedStore::HoldSeatsAsync(HoldRequest request) {
  PgStore* s = ForShowtime(request.showtime_id);
  if (!s) co_return ShowtimeNotFound(request.showtime_id);
  if (!HoldIdFits(request)) co_return HoldIdOnWrongShard(request);
  co_return co_await s->HoldSeatsAsync(std::move(request));
}

Result<Hold> ShardedStore::GetHold(const std::string& hold_id, int64_t customer_id) {
  PgStore* s = ForUuid(hold_id);
  if (!s) return HoldNotFound(hold_id);
  return s->GetHold(hold_id, customer_id);
}

Result<Hold> ShardedStore::ReleaseHold(const std::string& hold_id, int64_t customer_id) {
  PgStore* s = ForUuid(hold_id);
  if (!s) return HoldNotFound(hold_id);
  return s->ReleaseHold(hold_id, customer_id);
}

Result<Hold> ShardedStore::ExtendHold(const std::string& hold_id, int64_t customer_id, Millis ttl,
                                      Millis max_lifetime) {
  PgStore* s = ForUuid(hold_id);
  if (!s) return HoldNotFound(hold_id);
  return s->ExtendHold(hold_id, customer_id, ttl, max_lifetime);
}

io::asio::awaitable<Result<Hold>> ShardedStore::HoldActionAsync(HoldAction action,
                                                                std::string hold_id,
                                                                int64_t customer_id, Millis ttl,
                                                                Millis max_lifetime) {
  PgStore* s = ForUuid(hold_id);
  if (!s) co_return HoldNotFound(hold_id);
  co_return co_await s->HoldActionAsync(action, std::move(hold_id), customer_id, ttl, max_lifetime);
}

Result<int> ShardedStore::SweepExpired(int batch_limit, std::vector<SeatRef>* freed) {
  if (shards_.empty()) return NotMigrated();
  int total = 0;
  Status first_error = Status::Ok();
  for (const Shard& s : shards_) {
    if (total >= batch_limit) break;
    auto n = s.store->SweepExpired(batch_limit - total, freed);
    if (n.ok()) {
      total += n.value();
    } else if (first_error.ok()) {
      first_error = n.status();
    }
  }
  // Seats freed on one shard are reported even when another failed (they were freed).
  if (total == 0 && !first_error.ok()) return first_error;
  return total;
}

Result<Booking> ShardedStore::StartCheckout(const std::string& hold_id, int64_t customer_id,
                                            Millis ttl, Millis max_lifetime) {
  PgStore* s = ForUuid(hold_id);
  if (!s) return HoldNotFound(hold_id);
  return s->StartCheckout(hold_id, customer_id, ttl, max_lifetime);
}

namespace {

Status ClaimNotHeld() {
  return Status(Code::kInProgress, "the idempotency key's claim is no longer this request's");
}

}  // namespace

Result<Booking> ShardedStore::StartCheckout(const KeyLock& lock, const std::string& hold_id,
                                            Millis ttl, Millis max_lifetime) {
  PgStore* s = ForUuid(lock.token);
  if (!s) return ClaimNotHeld();
  return s->StartCheckout(lock, hold_id, ttl, max_lifetime);
}

// A key lives on the shard of the hold it is used for (its fingerprint): a key reused for
// a hold of another shard is judged there, as a new key (docs/operations.md).
Result<IdempotencyRecord> ShardedStore::ClaimCheckoutKey(const IdempotencyKey& key, Millis lease) {
  PgStore* s = ForUuid(key.fingerprint);
  if (!s) return HoldNotFound(key.fingerprint);
  return s->ClaimCheckoutKey(key, lease);
}

Result<bool> ShardedStore::FinishCheckout(const KeyLock& lock, const std::string& session_id,
                                          const std::string& url, Instant expires_at,
                                          int response_status, const std::string& response_body,
                                          const std::string& email) {
  PgStore* s = ForUuid(lock.token);
  if (!s) return ClaimNotHeld();
  return s->FinishCheckout(lock, session_id, url, expires_at, response_status, response_body,
                           email);
}

io::asio::awaitable<Result<bool>> ShardedStore::FinishCheckoutAsync(
    KeyLock lock, std::string session_id, std::string url, Instant expires_at, int response_status,
    std::string response_body, std::string email) {
  PgStore* s = ForUuid(lock.token);
  if (!s) co_return ClaimNotHeld();
  co_return co_await s->FinishCheckoutAsync(std::move(lock), std::move(session_id), std::move(url),
                                            expires_at, response_status, std::move(response_body),
                                            std::move(email));
}

io::asio::awaitable<Result<bool>> ShardedStore::TryBeginCheckoutAsync(IdempotencyKey key,
                                                                      std::string hold_id,
                                                                      Millis lease, Millis ttl,
                                                                      Millis max_lifetime,
                                                                      CheckoutBegun* begun) {
  PgStore* s = ForUuid(hold_id);
  if (!s || ShardOfUuid(key.fingerprint) != ShardOfUuid(hold_id)) co_return false;
  co_return co_await s->TryBeginCheckoutAsync(std::move(key), std::move(hold_id), lease, ttl,
                                              max_lifetime, begun);
}

io::asio::awaitable<Result<std::optional<Settlement>>> ShardedStore::TryConfirmPaymentAsync(
    PaymentReport report, Booking* confirmed) {
  auto s = ForPayment(report);
  if (!s.ok()) co_return s.status();
  co_return co_await s.value()->TryConfirmPaymentAsync(std::move(report), confirmed);
}

Status ShardedStore::AbortCheckout(const KeyLock& lock) {
  PgStore* s = ForUuid(lock.token);
  if (!s) return Status::Ok();  // no shard has this claim: nothing to undo
  return s->AbortCheckout(lock);
}

Status ShardedStore::EndCheckoutLease(const KeyLock& lock) {
  PgStore* s = ForUuid(lock.token);
  if (!s) return Status::Ok();  // no shard has this claim: no lease to end
  return s->EndCheckoutLease(lock);
}

Result<int> ShardedStore::PurgeCheckoutKeys(Millis older_than, int limit) {
  if (shards_.empty()) return NotMigrated();
  int total = 0;
  for (const Shard& s : shards_) {
    if (total >= limit) break;
    auto n = s.store->PurgeCheckoutKeys(older_than, limit - total);
    if (!n.ok()) return n.status();
    total += n.value();
  }
  return total;
}

Result<std::string> ShardedStore::InstallationId(int64_t booking_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return BookingNotFound(booking_id);
  return s->InstallationId(booking_id);
}

Status ShardedStore::AttachPaymentSession(int64_t booking_id, const std::string& session_id,
                                          const std::string& url, Instant expires_at) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return BookingNotFound(booking_id);
  return s->AttachPaymentSession(booking_id, session_id, url, expires_at);
}

Result<Booking> ShardedStore::GetBooking(int64_t booking_id, int64_t customer_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return BookingNotFound(booking_id);
  return s->GetBooking(booking_id, customer_id);
}

io::asio::awaitable<Result<Booking>> ShardedStore::GetBookingAsync(int64_t booking_id,
                                                                   int64_t customer_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) co_return BookingNotFound(booking_id);
  co_return co_await s->GetBookingAsync(booking_id, customer_id);
}

Result<Settlement> ShardedStore::SettlePayment(const PaymentReport& report, Booking* confirmed) {
  auto s = ForPayment(report);
  if (!s.ok()) return s.status();
  return s.value()->SettlePayment(report, confirmed);
}

Result<std::map<BookingStatus, int64_t>> ShardedStore::CountRecentBookings(Millis window) {
  if (shards_.empty()) return NotMigrated();
  std::map<BookingStatus, int64_t> total;
  for (const Shard& s : shards_) {
    auto counts = s.store->CountRecentBookings(window);
    if (!counts.ok()) return counts.status();
    for (auto& [status, n] : counts.value()) total[status] += n;
  }
  return total;
}

Result<std::vector<Booking>> ShardedStore::ClaimStaleCheckouts(Millis older_than, Millis lease,
                                                               int limit) {
  if (shards_.empty()) return NotMigrated();
  std::vector<Booking> claimed;
  Status first_error = Status::Ok();
  for (const Shard& s : shards_) {
    if (claimed.size() >= static_cast<size_t>(limit)) break;
    auto some =
        s.store->ClaimStaleCheckouts(older_than, lease, limit - static_cast<int>(claimed.size()));
    if (!some.ok()) {
      if (first_error.ok()) first_error = some.status();
      continue;
    }
    for (Booking& b : some.value()) claimed.push_back(std::move(b));
  }
  // Claims taken are handed out even when a shard failed, so they are asked about.
  if (claimed.empty() && !first_error.ok()) return first_error;
  return claimed;
}

Status ShardedStore::ReleaseCheckoutClaims(const std::vector<int64_t>& booking_ids) {
  std::map<PgStore*, std::vector<int64_t>> by_shard;
  for (int64_t id : booking_ids) {
    if (PgStore* s = ForBooking(id)) by_shard[s].push_back(id);
  }
  Status first_error = Status::Ok();
  for (auto& [s, ids] : by_shard) {
    if (Status st = s->ReleaseCheckoutClaims(ids); !st.ok() && first_error.ok()) first_error = st;
  }
  return first_error;
}

Result<bool> ShardedStore::AbandonCheckout(int64_t booking_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return BookingNotFound(booking_id);
  return s->AbandonCheckout(booking_id);
}

Result<AuditReport> ShardedStore::Audit() {
  if (shards_.empty()) return NotMigrated();
  AuditReport total;
  for (const Shard& s : shards_) {
    auto r = s.store->Audit();
    if (!r.ok()) return Status(r.status().code(), Describe(s) + ": " + r.status().message());
    const AuditReport& a = r.value();
    total.booked_seats_without_confirmed_booking += a.booked_seats_without_confirmed_booking;
    total.confirmed_bookings_missing_seats += a.confirmed_bookings_missing_seats;
    total.payments_unaccounted += a.payments_unaccounted;
    total.refunds_pending += a.refunds_pending;
    total.seats_booked += a.seats_booked;
    total.bookings_confirmed += a.bookings_confirmed;
    total.payments_succeeded += a.payments_succeeded;
    total.confirmed_on_cancelled += a.confirmed_on_cancelled;
  }
  return total;
}

Status ShardedStore::SetWaitingRoom(int64_t showtime_id, const WaitingRoomConfig& config) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->SetWaitingRoom(showtime_id, config);
}

io::asio::awaitable<Status> ShardedStore::SetWaitingRoomAsync(int64_t showtime_id,
                                                              WaitingRoomConfig config) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) co_return ShowtimeNotFound(showtime_id);
  co_return co_await s->SetWaitingRoomAsync(showtime_id, config);
}

// A shard that does not answer keeps the rooms it last reported: one shard down must not
// close (or freeze) every other shard's waiting rooms.
Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>> ShardedStore::EnabledWaitingRooms() {
  if (shards_.empty()) return NotMigrated();
  std::vector<Result<std::vector<std::pair<int64_t, WaitingRoomConfig>>>> read;
  for (const Shard& s : shards_) read.push_back(s.store->EnabledWaitingRooms());
  std::vector<std::pair<int64_t, WaitingRoomConfig>> all;
  size_t answered = 0;
  MutexLock lock(rooms_mu_);  // (taken after the reads: no I/O under it)
  for (size_t i = 0; i < shards_.size(); ++i) {
    const int number = shards_[i].number;
    if (read[i].ok()) {
      ++answered;
      last_rooms_[number] = read[i].value();
    } else {
      LogWarn("waiting rooms: a shard did not answer; its rooms as last read",
              {{"shard", number}, {"error", read[i].status().message()}});
    }
    const auto known = last_rooms_.find(number);
    if (known != last_rooms_.end())
      all.insert(all.end(), known->second.begin(), known->second.end());
  }
  BOX_ASSERT(read.size() == shards_.size() && answered <= shards_.size());
  if (answered == 0) return Status(Code::kUnavailable, "waiting rooms: no shard answered");
  return all;
}

// Refunds are rare: their methods ask each shard (a refund id does not name its shard).
Result<std::vector<Refund>> ShardedStore::PendingRefunds(int limit) {
  if (shards_.empty()) return NotMigrated();
  std::vector<Refund> all;
  for (const Shard& s : shards_) {
    if (all.size() >= static_cast<size_t>(limit)) break;
    auto some = s.store->PendingRefunds(limit - static_cast<int>(all.size()));
    if (!some.ok()) return some.status();
    for (Refund& r : some.value()) all.push_back(std::move(r));
  }
  return all;
}

// Applied on every shard: the refund id (a UUID) is on one, and is no row elsewhere.
Status ShardedStore::RefundAttemptFailed(const std::string& refund_id, bool refused,
                                         const std::string& error, Millis retry_after) {
  Status first_error = Status::Ok();
  for (const Shard& s : shards_) {
    Status st = s.store->RefundAttemptFailed(refund_id, refused, error, retry_after);
    if (!st.ok() && first_error.ok()) first_error = st;
  }
  return first_error;
}

Result<RefundBacklog> ShardedStore::CountRefundBacklog() {
  if (shards_.empty()) return NotMigrated();
  RefundBacklog total;
  for (const Shard& s : shards_) {
    auto b = s.store->CountRefundBacklog();
    if (!b.ok()) return b.status();
    total.retrying += b.value().retrying;
    total.refused += b.value().refused;
    // A showtime lives on one shard: the lists never name one twice.
    total.cancelled.insert(total.cancelled.end(), b.value().cancelled.begin(),
                           b.value().cancelled.end());
  }
  std::sort(total.cancelled.begin(), total.cancelled.end(),
            [](const auto& a, const auto& b) { return a.showtime_id < b.showtime_id; });
  return total;
}

Status ShardedStore::CompleteRefund(const std::string& refund_id,
                                    const std::string& gateway_refund_id) {
  for (const Shard& s : shards_) {
    Status st = s.store->CompleteRefund(refund_id, gateway_refund_id);
    if (st.code() != Code::kNotFound) return st;
  }
  return Status(Code::kNotFound, "refund " + refund_id + " not found");
}

}  // namespace boxoffice

namespace boxoffice {

// A customer's bookings may lie on every shard: each shard's newest `limit`, merged.
Result<std::vector<CustomerBooking>> ShardedStore::ListCustomerBookings(
    const CustomerBookingsQuery& query) {
  if (shards_.empty()) return NotMigrated();
  std::vector<CustomerBooking> all;
  for (const Shard& s : shards_) {
    auto page = s.store->ListCustomerBookings(query);
    if (!page.ok()) return page.status();
    for (auto& b : page.value()) all.push_back(std::move(b));
  }
  std::sort(all.begin(), all.end(), [](const CustomerBooking& a, const CustomerBooking& b) {
    return a.booking.created_at != b.booking.created_at
               ? a.booking.created_at > b.booking.created_at
               : a.booking.id > b.booking.id;
  });
  if (all.size() > static_cast<size_t>(std::max(query.limit, 0)))
    all.resize(std::max(query.limit, 0));
  return all;
}

// A check-in lives with its booking, on the showtime's shard (the two ids name the same one
// for every booking a shard issued; a code naming two shards is nobody's ticket).
Result<CheckInResult> ShardedStore::CheckIn(const CheckInRequest& request) {
  PgStore* s = ForShowtime(request.showtime_id);
  if (!s || s != ForBooking(request.booking_id)) return CheckInResult{};
  return s->CheckIn(request);
}

io::asio::awaitable<Result<CheckInResult>> ShardedStore::CheckInAsync(CheckInRequest request) {
  PgStore* s = ForShowtime(request.showtime_id);
  if (!s || s != ForBooking(request.booking_id)) co_return CheckInResult{};
  co_return co_await s->CheckInAsync(std::move(request));
}

Result<DoorCount> ShardedStore::CountAtDoor(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->CountAtDoor(showtime_id);
}

Result<std::optional<MailBooking>> ShardedStore::BookingForMail(int64_t booking_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return std::optional<MailBooking>();
  return s->BookingForMail(booking_id);
}

// A showtime's cancel and its trail live on its shard, with its bookings and seats.
Result<ShowtimeCancel> ShardedStore::CancelShowtime(int64_t showtime_id, const std::string& reason,
                                                    int64_t actor) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->CancelShowtime(showtime_id, reason, actor);
}

Result<BookingCancel> ShardedStore::CancelBooking(int64_t booking_id, int64_t customer_id) {
  PgStore* s = ForBooking(booking_id);
  if (!s) return BookingNotFound(booking_id);
  return s->CancelBooking(booking_id, customer_id);
}

Result<Showtime> ShardedStore::EditShowtime(int64_t showtime_id, const ShowtimeEdit& edit,
                                            int64_t actor) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->EditShowtime(showtime_id, edit, actor);
}

Result<ShowtimeSales> ShardedStore::GetShowtimeSales(int64_t showtime_id) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->GetShowtimeSales(showtime_id);
}

Result<std::vector<Booking>> ShardedStore::ListShowtimeBookings(
    const ShowtimeBookingsQuery& query) {
  PgStore* s = ForShowtime(query.showtime_id);
  if (!s) return ShowtimeNotFound(query.showtime_id);
  return s->ListShowtimeBookings(query);
}

Result<std::vector<AdminChange>> ShardedStore::ListAdminChanges(int64_t showtime_id, int limit) {
  PgStore* s = ForShowtime(showtime_id);
  if (!s) return ShowtimeNotFound(showtime_id);
  return s->ListAdminChanges(showtime_id, limit);
}

}  // namespace boxoffice
