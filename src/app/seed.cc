// `boxoffice seed`: the demo's few showtimes, or a chain's cinemas × halls × days.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "app/config.h"
#include "app/subcommands.h"
#include "core/log.h"
#include "core/time_format.h"

namespace boxoffice::app {
namespace {

NewShowtime HallShowtime(int cinema, int hall, Instant starts_at) {
  static const char* kTitles[] = {"Dune: Part Three", "The Last Projectionist",
                                  "Paddington in Peru", "Night Train to Lisbon",
                                  "Coraline (re-release)"};
  NewShowtime s;
  s.title = kTitles[(cinema + hall + ToEpochMs(starts_at) / 3'600'000) % 5];
  s.cinema = cinema == 1 ? "Boxoffice Demo Cinema" : "Boxoffice Cinema " + std::to_string(cinema);
  s.hall = "Screen " + std::to_string(hall);
  s.starts_at = starts_at;
  // Halls grow with their number: 100, 150, 200… seats, the back three rows premium, two
  // aisles a quarter in from each side, four wheelchair places at the ends of the front row.
  const int rows = 8 + 2 * ((hall - 1) % 5);
  const int per_row = 12 + 2 * ((hall - 1) % 5);
  for (int r = 0; r < rows; ++r) {
    s.rows.push_back(
        RowLayout{std::string(1, static_cast<char>('A' + r)),
                  per_row,
                  r >= rows - 3 ? "premium" : "standard",
                  {per_row / 4, per_row - per_row / 4},
                  r == 0 ? std::vector<int>{1, 2, per_row - 1, per_row} : std::vector<int>{}});
  }
  s.prices["standard"] = Price{1250, "EUR"};
  s.prices["premium"] = Price{1650, "EUR"};
  return s;
}

// The demo: one cinema's few showtimes, four a day, created one by one.
int SeedDemo(Store* store, const SeedFlags& f, Instant today) {
  auto count = store->CountShowtimes();
  if (!count.ok()) return Fail("cannot count showtimes", count.status());
  if (count.value() > 0) {
    LogInfo("demo data already present", {{"showtimes", count.value()}});
    return 0;
  }
  using namespace std::chrono;
  int done = 0;
  for (int c = 1; c <= f.cinemas; ++c) {
    for (int h = 1; h <= f.halls_per_cinema; ++h) {
      for (int d = 1; d <= f.days; ++d) {
        for (int slot = 0; slot < 4; ++slot) {
          const Instant starts = time_point_cast<Millis>(today + days{d} + hours{14 + 3 * slot} +
                                                         minutes{15 * (h % 4)});
          auto id = store->CreateShowtime(HallShowtime(c, h, starts));
          if (!id.ok()) return Fail("cannot create showtime", id.status());
          ++done;
        }
      }
    }
  }
  LogInfo("seeded", {{"showtimes", done}, {"demo", true}});
  return 0;
}

// "1h02m", "45s": an ETA for the progress line.
std::string ShortDuration(double seconds) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(seconds + 0.5));
  char text[32];
  if (s >= 3600) {
    std::snprintf(text, sizeof text, "%lldh%02lldm", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60));
  } else if (s >= 60) {
    std::snprintf(text, sizeof text, "%lldm%02llds", static_cast<long long>(s / 60),
                  static_cast<long long>(s % 60));
  } else {
    std::snprintf(text, sizeof text, "%llds", static_cast<long long>(s));
  }
  return text;
}

// The chain (the seeds' scale): cinemas × halls × days, kShowtimesPerHallAndDay a day per
// hall, written as one batch per cinema and day (Store::SeedBatch: COPY on PostgreSQL, each
// batch with its name in one transaction), batch i on shard i mod N, one writer per shard.
// A run interrupted and started again with the same flags writes only the batches missing.
constexpr int kShowtimesPerHallAndDay = 5;

int SeedChain(Store* store, size_t databases, const SeedFlags& f, Instant first_day) {
  using namespace std::chrono;
  const int64_t batches = static_cast<int64_t>(f.cinemas) * f.days;
  const std::string day_text = FormatRfc3339(first_day).substr(0, 10);
  // Every batch has the same halls, so the same seats (HallShowtime's layouts).
  int64_t seats_per_batch = 0;
  for (int h = 1; h <= f.halls_per_cinema; ++h) {
    int64_t hall = 0;
    for (const RowLayout& row : HallShowtime(1, h, first_day).rows) hall += row.seats;
    seats_per_batch += hall * kShowtimesPerHallAndDay;
  }
  const int64_t showtimes_per_batch = int64_t{f.halls_per_cinema} * kShowtimesPerHallAndDay;
  std::atomic<int64_t> next{0}, written{0}, skipped{0};
  std::atomic<bool> failed{false};
  std::mutex error_mu;
  Status error = Status::Ok();
  const size_t writers = std::max<size_t>(2, databases);
  auto write = [&](size_t writer) {
    // Writer w takes the batches i with i mod writers == w: each shard has its writers.
    for (int64_t i = static_cast<int64_t>(writer); i < batches && !failed.load();
         i += static_cast<int64_t>(writers)) {
      const int cinema = static_cast<int>(i / f.days) + 1;
      const int day = static_cast<int>(i % f.days);
      std::vector<NewShowtime> showtimes;
      for (int h = 1; h <= f.halls_per_cinema; ++h) {
        for (int slot = 0; slot < kShowtimesPerHallAndDay; ++slot) {
          // 12:00, 14:45, 17:30, 20:15, 23:00, each hall a few minutes after the last.
          const Instant starts = time_point_cast<Millis>(first_day + days{day} + hours{12} +
                                                         minutes{165 * slot + 5 * ((h - 1) % 6)});
          showtimes.push_back(HallShowtime(cinema, h, starts));
        }
      }
      const std::string name = "chain " + std::to_string(f.cinemas) + "x" +
                               std::to_string(f.halls_per_cinema) + "x" + std::to_string(f.days) +
                               " from " + day_text + ": cinema " + std::to_string(cinema) +
                               " day " + std::to_string(day + 1);
      auto r = store->SeedBatch(name, showtimes, i);
      if (!r.ok()) {
        std::lock_guard lock(error_mu);
        if (error.ok()) error = r.status();
        failed = true;
        return;
      }
      (r.value() ? written : skipped).fetch_add(1);
      next.fetch_add(1);
    }
  };
  const auto started = steady_clock::now();
  std::vector<std::thread> threads;
  for (size_t w = 0; w < writers; ++w) threads.emplace_back(write, w);
  const bool tty = isatty(STDERR_FILENO);
  auto last_log = started;
  for (;;) {
    const int64_t done = next.load();
    const bool finished = done >= batches || failed.load();
    const double elapsed = duration<double>(steady_clock::now() - started).count();
    const double rate = elapsed > 0 ? written.load() * seats_per_batch / elapsed : 0;
    const double eta =
        written.load() > 0 ? elapsed / written.load() * static_cast<double>(batches - done) : 0;
    char line[256];
    const int width = 30;
    const int filled = batches ? static_cast<int>(width * done / batches) : width;
    std::snprintf(line, sizeof line,
                  "[%s%s] %lld/%lld cinema-days · %lld showtimes · %.1fM seats · %.0fk seats/s · "
                  "ETA %s",
                  std::string(filled, '#').c_str(), std::string(width - filled, '.').c_str(),
                  static_cast<long long>(done), static_cast<long long>(batches),
                  static_cast<long long>(done * showtimes_per_batch),
                  static_cast<double>(done * seats_per_batch) / 1e6, rate / 1000,
                  ShortDuration(eta).c_str());
    if (tty) {
      std::fprintf(stderr, "\r%s   ", line);
      if (finished) std::fprintf(stderr, "\n");
    } else if (finished || steady_clock::now() - last_log > seconds(10)) {
      std::fprintf(stderr, "seed: %s\n", line);
      last_log = steady_clock::now();
    }
    if (finished) break;
    std::this_thread::sleep_for(milliseconds(250));
  }
  for (auto& t : threads) t.join();
  if (!error.ok()) return Fail("cannot seed (run it again to resume)", error);
  const double seconds_taken = duration<double>(steady_clock::now() - started).count();
  auto size = store->SizeOnDisk();
  LogInfo("seeded", {{"showtimes", batches * showtimes_per_batch},
                     {"seats", batches * seats_per_batch},
                     {"batchesWritten", written.load()},
                     {"batchesAlreadyThere", skipped.load()},
                     {"seconds", seconds_taken},
                     {"databaseBytes", size.ok() ? size.value() : -1},
                     {"cinemas", f.cinemas},
                     {"hallsPerCinema", f.halls_per_cinema},
                     {"days", f.days},
                     {"from", day_text}});
  std::printf(
      "result seed showtimes=%lld seats=%lld seconds=%.1f seats_per_s=%.0f database_bytes=%lld "
      "batches_written=%lld batches_skipped=%lld\n",
      static_cast<long long>(batches * showtimes_per_batch),
      static_cast<long long>(batches * seats_per_batch), seconds_taken,
      seconds_taken > 0 ? written.load() * seats_per_batch / seconds_taken : 0.0,
      static_cast<long long>(size.ok() ? size.value() : -1), static_cast<long long>(written.load()),
      static_cast<long long>(skipped.load()));
  return 0;
}

}  // namespace

int Seed(const SeedFlags& f) {
  SystemClock clock;
  auto store = OpenAndMigrate(f.common.store, &clock);
  if (!store.ok()) return Fail("cannot open the database", store.status());
  using namespace std::chrono;
  const Instant today = floor<days>(clock.Now());
  if (f.demo) return SeedDemo(store.value().store.get(), f, today);
  Instant first_day = today + days{1};
  if (!f.from.empty()) {
    auto parsed = ParseRfc3339(f.from + "T00:00:00Z");
    if (!parsed) {
      LogError("--from must be a date YYYY-MM-DD");
      return 2;
    }
    first_day = *parsed;
  }
  return SeedChain(store.value().store.get(), store.value().databases.size(), f, first_day);
}

}  // namespace boxoffice::app
