// A blocking Server-Sent Events client for end-to-end tests: GET a stream, then read its
// events one by one (chunked transfer decoded, comments and retry lines kept apart).
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace boxoffice::testing {

class SseClient {
 public:
  // Connects, sends the GET and reads the status line and headers (up to 5 s).
  SseClient(unsigned short port, const std::string& target);
  ~SseClient();
  SseClient(const SseClient&) = delete;
  SseClient& operator=(const SseClient&) = delete;

  int status() const { return status_; }
  const std::string& headers() const { return headers_; }  // raw, lower-cased
  // The data of the next event (its `data:` lines joined), or nullopt when none came within
  // `timeout` or the stream ended. Comments (heartbeats) are counted in comments().
  std::optional<std::string> Next(std::chrono::milliseconds timeout);
  int comments() const { return comments_; }
  // True once the server ended the body (last chunk) or closed the connection.
  bool ended() const { return ended_; }
  // True when the body ended with its last chunk (a clean close, not a dropped connection).
  bool ended_cleanly() const { return clean_end_; }
  // Waits up to timeout for the end of the body.
  bool WaitEnd(std::chrono::milliseconds timeout);

 private:
  bool Fill(std::chrono::steady_clock::time_point deadline);  // more raw bytes, false: none
  bool Decode();  // moves complete chunks from raw_ to body_

  int fd_ = -1;
  int status_ = 0;
  std::string headers_;
  std::string raw_;   // received, not yet de-chunked
  std::string body_;  // de-chunked, not yet split into events
  int comments_ = 0;
  bool ended_ = false;
  bool clean_end_ = false;
};

}  // namespace boxoffice::testing
