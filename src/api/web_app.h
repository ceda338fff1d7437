// The seat picker (web/): its page at "/" and its scripts and styles under
// "/app/<version>/<name>", from the files compiled into the binary.
//
// <version> is a hash of every file, so an asset's URL changes whenever any file does:
// assets are cached for a year as immutable, the page itself is revalidated on each visit
// (its ETag is the version). A request for another version (a page from before an upgrade,
// behind a proxy that mixes instances) gets today's file, not cached.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "http/router.h"

namespace boxoffice::api {

struct WebFile {
  std::string_view name;  // "app.js": flat, no directories
  std::string_view content;
};

// web/*, embedded at build time (cmake/embed_web.cmake).
const std::vector<WebFile>& EmbeddedWebFiles();

class WebApp {
 public:
  // `files` must hold index.html (the picker, at "/") and door.html (the door page, at
  // "/door"); their text "{{APP}}" becomes "/app/<version>".
  explicit WebApp(const std::vector<WebFile>& files = EmbeddedWebFiles());

  // GET /, GET /door and GET /app/{version}/{file}; answered on the I/O thread.
  void Register(http::Router* router) const;

  const std::string& version() const { return version_; }
  http::Response Page(const http::Request& request) const { return PageOf(request, page_); }
  http::Response DoorPage(const http::Request& request) const { return PageOf(request, door_); }
  http::Response Asset(const http::Request& request) const;

 private:
  struct Entry {
    std::shared_ptr<const std::string> body;
    std::string content_type;
  };
  http::Response Answer(const http::Request& request, const Entry& entry,
                        std::string cache_control) const;
  http::Response PageOf(const http::Request& request, const Entry& page) const;

  std::string version_;
  std::string etag_;
  Entry page_;
  Entry door_;
  std::map<std::string, Entry, std::less<>> assets_;
};

}  // namespace boxoffice::api
