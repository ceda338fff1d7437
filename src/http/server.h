// Server: HTTP/1.1 on Boost.Beast with one io_context per I/O thread.
//
// Design note. Sockets are accepted on one acceptor and handed round-robin to the I/O
// contexts, each run by one thread, so every core serves connections. A session is one
// coroutine: read the header (header timeout), read the body (read timeout, body limit),
// route, answer, repeat while keep-alive. Handlers that may block on the database run on a
// separate worker pool and the session awaits them, so an I/O thread never waits on the
// database; at most max_pending_jobs such requests may wait for a worker, past that the
// answer is 503 at once. Coroutine routes run on the I/O thread and await what they wait
// on (Redis, PostgreSQL pipelines, the payment gateway, io::Offload for what blocks); the
// workers are the io::Loop's blocking pool. Every response carries X-Request-Id. A response with a body stream
// (Server-Sent Events) is sent with chunked encoding, chunk by chunk as the stream wakes the
// session, with a heartbeat after each stream_heartbeat of silence; the connection closes
// when the stream ends. Stop() closes the acceptor, ends open streams with their last chunk,
// lets in-flight requests finish (up to drain_timeout), then closes the rest.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "core/clock.h"
#include "core/metrics.h"
#include "http/router.h"

namespace boxoffice::http {

struct ServerOptions {
  std::string host = "127.0.0.1";
  unsigned short port = 8080;             // 0: any free port (see Server::port())
  size_t io_threads = 2;                  // one io_context each; default: one per core
  size_t worker_threads = 8;              // blocking handlers; match the database pool
  size_t max_connections = 10'000;        // past this, new connections are closed at once
  size_t max_pending_jobs = 4'096;        // blocking requests waiting for a worker, then 503
  size_t body_limit_bytes = 64 * 1024;    // API.md: 413 past 64 KiB
  size_t header_limit_bytes = 16 * 1024;  // request line and headers
  Millis header_timeout{10'000};          // slowloris bound: the whole header within this
  Millis read_timeout{30'000};            // the body within this
  Millis idle_timeout{60'000};      // a keep-alive connection waits this long for the next request
  Millis drain_timeout{10'000};     // on Stop(), in-flight requests get this long
  Millis stream_heartbeat{15'000};  // a body stream sends its heartbeat after this silence
};

class Server {
 public:
  Server(ServerOptions options, const Router* router, Metrics* metrics);
  ~Server();

  // Binds and starts the threads. Returns false (and logs) if the address is unusable.
  bool Start();
  // The bound port (useful with port 0).
  unsigned short port() const;
  // Graceful stop; blocks until the threads are joined.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace boxoffice::http
