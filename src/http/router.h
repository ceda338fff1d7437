// Router: maps a method and a path pattern ("/holds/{holdId}/extend") to a handler.
//
// A path that matches no pattern is 404; a path that matches with another method is 405
// with the Allow header, as API.md asks. Each route carries its pattern (the bounded
// metrics label) and where its handler runs: on the I/O thread (it never waits, or it is
// a coroutine that awaits without blocking), or on the worker pool (it blocks on the
// database).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "http/message.h"
#include "io/loop.h"

namespace boxoffice::http {

using Handler = std::function<Response(Request&)>;
// Tried on the I/O thread before the route's handler: an answer it can give without
// waiting (a cache hit, with no coroutine), or nullopt to let the handler run.
using FastPath = std::function<std::optional<Response>(Request&)>;
// A handler that runs on the I/O thread and awaits what it waits on (Redis, PostgreSQL in
// pipeline mode, io::Offload for what still blocks): it never blocks the thread.
using AsyncHandler = std::function<io::asio::awaitable<Response>(Request&)>;

struct Route {
  std::string method;
  std::string pattern;
  bool blocking = true;  // touches the database: run on the worker pool
  Handler handler;
  std::vector<std::string> segments;  // pattern split on '/'
  FastPath fast;                      // optional, tried first on the I/O thread
  AsyncHandler async;                 // set: a coroutine on the I/O thread (blocking unused)
};

struct Match {
  const Route* route = nullptr;  // null: see allow
  std::string allow;             // non-empty: the path exists with these methods (405)
};

class Router {
 public:
  void Add(std::string method, std::string pattern, Handler handler, bool blocking = true);
  // A route whose handler is a coroutine on the I/O thread.
  void AddAsync(std::string method, std::string pattern, AsyncHandler handler);
  // A coroutine route with a fast path tried first.
  void AddAsyncWithFastPath(std::string method, std::string pattern, FastPath fast,
                            AsyncHandler handler);
  // Finds the route and fills request.params. Thread-safe after setup.
  Match Find(Request& request) const;

 private:
  std::vector<Route> routes_;
};

}  // namespace boxoffice::http
