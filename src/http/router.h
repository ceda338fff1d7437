// Router: maps a method and a path pattern ("/holds/{holdId}/extend") to a handler.
//
// A path that matches no pattern is 404; a path that matches with another method is 405
// with the Allow header, as API.md asks. Each route carries its pattern (the bounded
// metrics label) and whether its handler may block on the database, in which case the
// server runs it on the worker pool instead of an I/O thread.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "http/message.h"

namespace boxoffice::http {

using Handler = std::function<Response(Request&)>;

struct Route {
  std::string method;
  std::string pattern;
  bool blocking = true;  // touches the database: run on the worker pool
  Handler handler;
  std::vector<std::string> segments;  // pattern split on '/'
};

struct Match {
  const Route* route = nullptr;  // null: see allow
  std::string allow;             // non-empty: the path exists with these methods (405)
};

class Router {
 public:
  void Add(std::string method, std::string pattern, Handler handler, bool blocking = true);
  // Finds the route and fills request.params. Thread-safe after setup.
  Match Find(Request& request) const;

 private:
  std::vector<Route> routes_;
};

}  // namespace boxoffice::http
