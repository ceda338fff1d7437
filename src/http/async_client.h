// HttpPool: calls to one HTTP service (the payment gateway) from the I/O loops, awaited by
// the request's coroutine: no thread waits on the service, however slow it is.
//
// Each loop keeps its own keep-alive connections to the service (at most kMaxIdle idle
// ones); a call takes an idle connection or opens one, and gives it back when the answer
// allows. At most max_in_flight calls run at once per loop: past that a call is refused at
// once with kUnavailable, so a service that stops answering costs a bounded number of
// sockets and coroutines, never a queue. Every call is bounded by one deadline (resolving,
// connecting, writing and reading together). A kept-alive connection the service closed
// meanwhile is noticed on use and the call is made once more on a fresh one; one idle for
// more than 15 s is not reused.
//
// Off the loops (jobs, tests, through io::RunSync), a call gets a connection of its own on
// the caller's executor, under the same deadline, and keeps nothing.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/status.h"
#include "http/client.h"
#include "io/loop.h"

namespace boxoffice::http {

class HttpPool {
 public:
  static constexpr size_t kMaxIdle = 32;  // idle connections kept per loop

  HttpPool(std::string host, unsigned short port, size_t max_in_flight);
  ~HttpPool();

  io::asio::awaitable<Result<ClientResponse>> Fetch(
      std::string method, std::string target, std::string body,
      std::vector<std::pair<std::string, std::string>> headers, Millis timeout);

 private:
  struct Connections;
  const std::string host_;
  const unsigned short port_;
  const size_t max_in_flight_;
  io::PerLoop<Connections> loops_;
};

}  // namespace boxoffice::http
