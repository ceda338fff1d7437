// Log lines from a thread that must not block (an I/O loop) are queued and written by the
// writer thread: after FlushLogs every one is on stderr, whole, one JSON object per line,
// in the order that thread logged them.
#include "core/log.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/test_env.h"

namespace boxoffice {
namespace {

TEST(Logs, QueuedLinesAreAllWrittenWholeAndInOrder) {
  const std::string path = testing::TempDir() + "/stderr.log";
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  ASSERT_TRUE(std::freopen(path.c_str(), "w", stderr));
  std::thread loop([] {
    SetLogAsync(true);
    for (int i = 0; i < 2'000; ++i) LogInfo("queued", {{"i", i}});
    SetLogAsync(false);
  });
  loop.join();
  FlushLogs();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::ifstream in(path);
  int next = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    ASSERT_TRUE(j.is_object()) << line;
    if (j.value("msg", "") != "queued") continue;
    EXPECT_EQ(j.value("i", -1), next) << "in order";
    ++next;
  }
  EXPECT_EQ(next, 2'000);
}

}  // namespace
}  // namespace boxoffice
