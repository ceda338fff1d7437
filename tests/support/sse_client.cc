#include "support/sse_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace boxoffice::testing {

SseClient::SseClient(unsigned short port, const std::string& target) {
  fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ended_ = true;
    return;
  }
  const std::string request =
      "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
  if (::send(fd_, request.data(), request.size(), MSG_NOSIGNAL) !=
      static_cast<ssize_t>(request.size())) {
    ended_ = true;
    return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t end;
  while ((end = raw_.find("\r\n\r\n")) == std::string::npos) {
    if (!Fill(deadline)) return;
  }
  headers_ = raw_.substr(0, end);
  std::transform(headers_.begin(), headers_.end(), headers_.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  raw_.erase(0, end + 4);
  if (headers_.size() > 12) status_ = std::atoi(headers_.substr(9, 3).c_str());
  if (headers_.find("transfer-encoding: chunked") == std::string::npos) {
    // Not a stream (an error answer): keep whatever body came as the first event's data.
    body_ = raw_;
    raw_.clear();
  }
}

SseClient::~SseClient() {
  if (fd_ >= 0) ::close(fd_);
}

bool SseClient::Fill(std::chrono::steady_clock::time_point deadline) {
  if (ended_) return false;
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  pollfd p{fd_, POLLIN, 0};
  if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
  char buf[4096];
  const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    ended_ = true;
    return false;
  }
  raw_.append(buf, static_cast<size_t>(n));
  return true;
}

bool SseClient::Decode() {
  bool any = false;
  for (;;) {
    const size_t line_end = raw_.find("\r\n");
    if (line_end == std::string::npos) return any;
    const size_t size = std::strtoul(raw_.substr(0, line_end).c_str(), nullptr, 16);
    if (size == 0) {
      ended_ = clean_end_ = true;
      raw_.clear();
      return any;
    }
    if (raw_.size() < line_end + 2 + size + 2) return any;
    body_.append(raw_, line_end + 2, size);
    raw_.erase(0, line_end + 2 + size + 2);
    any = true;
  }
}

std::optional<std::string> SseClient::Next(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    Decode();
    size_t end;
    while ((end = body_.find("\n\n")) != std::string::npos) {
      const std::string event = body_.substr(0, end);
      body_.erase(0, end + 2);
      std::string data;
      size_t pos = 0;
      while (pos < event.size()) {
        size_t nl = event.find('\n', pos);
        if (nl == std::string::npos) nl = event.size();
        const std::string line = event.substr(pos, nl - pos);
        if (line.rfind("data: ", 0) == 0) data += (data.empty() ? "" : "\n") + line.substr(6);
        if (line.rfind(":", 0) == 0) ++comments_;
        pos = nl + 1;
      }
      if (!data.empty()) return data;
    }
    if (ended_ || !Fill(deadline)) return std::nullopt;
  }
}

bool SseClient::WaitEnd(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!ended_) {
    Decode();
    if (ended_) break;
    if (!Fill(deadline) && !ended_) return false;
  }
  return true;
}

}  // namespace boxoffice::testing
