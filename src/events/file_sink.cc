#include "events/file_sink.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace boxoffice {

FileSink::FileSink(std::string path) : path_(std::move(path)) {}

FileSink::~FileSink() {
  if (fd_ >= 0) close(fd_);
}

Status FileSink::Deliver(const std::vector<OutboxEvent>& events) {
  MutexLock lock(mu_);
  if (fd_ < 0) {
    const auto dir = std::filesystem::path(path_).parent_path();
    std::error_code ec;
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd_ < 0)
      return Status(Code::kUnavailable, "cannot open " + path_ + ": " + std::strerror(errno));
  }
  std::string batch;
  for (const auto& e : events) {
    batch += e.payload;
    batch += '\n';
  }
  size_t written = 0;
  while (written < batch.size()) {
    const ssize_t n = write(fd_, batch.data() + written, batch.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      return Status(Code::kUnavailable, "cannot write " + path_ + ": " + std::strerror(errno));
    written += static_cast<size_t>(n);
  }
  if (fdatasync(fd_) != 0)
    return Status(Code::kUnavailable, "cannot sync " + path_ + ": " + std::strerror(errno));
  return Status::Ok();
}

}  // namespace boxoffice
