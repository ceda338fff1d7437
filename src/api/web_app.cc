#include "api/web_app.h"

#include "core/crypto.h"
#include "core/status.h"

namespace boxoffice::api {
namespace {

constexpr std::string_view kPageName = "index.html";
constexpr std::string_view kDoorPageName = "door.html";
constexpr std::string_view kAppPlaceholder = "{{APP}}";
constexpr size_t kVersionHexDigits = 16;  // 64 bits of the hash: collisions are no concern

// What the page may load and talk to: only this origin (no third-party host, no inline
// script), and it may not be framed.
constexpr const char* kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

std::string ContentTypeOf(std::string_view name) {
  auto ends = [&](std::string_view ext) {
    return name.size() >= ext.size() && name.substr(name.size() - ext.size()) == ext;
  };
  if (ends(".html")) return "text/html; charset=utf-8";
  if (ends(".js")) return "text/javascript; charset=utf-8";
  if (ends(".css")) return "text/css; charset=utf-8";
  if (ends(".svg")) return "image/svg+xml";
  return "application/octet-stream";
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

}  // namespace

WebApp::WebApp(const std::vector<WebFile>& files) {
  std::string all;
  for (const WebFile& f : files) {
    all.append(f.name).push_back('\0');
    all.append(f.content).push_back('\0');
  }
  version_ = HexEncode(HmacSha256("boxoffice-web", all)).substr(0, kVersionHexDigits);
  etag_ = "\"" + version_ + "\"";
  const std::string app = "/app/" + version_;
  for (const WebFile& f : files) {
    Entry entry{std::make_shared<const std::string>(f.content), ContentTypeOf(f.name)};
    if (f.name == kPageName || f.name == kDoorPageName) {
      (f.name == kPageName ? page_ : door_) =
          Entry{std::make_shared<const std::string>(
                    ReplaceAll(std::string(f.content), kAppPlaceholder, app)),
                entry.content_type};
    } else {
      assets_.emplace(std::string(f.name), std::move(entry));
    }
  }
  // web/index.html and web/door.html are part of the build.
  BOX_ASSERT(page_.body != nullptr && door_.body != nullptr);
}

http::Response WebApp::Answer(const http::Request& request, const Entry& entry,
                              std::string cache_control) const {
  http::Response r;
  r.Header("ETag", etag_);
  r.Header("Cache-Control", std::move(cache_control));
  r.Header("X-Content-Type-Options", "nosniff");
  const std::string* inm = request.headers.Find("If-None-Match");
  if (inm && http::IfNoneMatchHits(*inm, etag_)) {
    r.status = 304;
    return r;
  }
  r.content_type = entry.content_type;
  r.shared_body = entry.body;
  return r;
}

http::Response WebApp::PageOf(const http::Request& request, const Entry& page) const {
  http::Response r = Answer(request, page, "no-cache");
  r.Header("Content-Security-Policy", kContentSecurityPolicy);
  r.Header("Referrer-Policy", "no-referrer");
  return r;
}

http::Response WebApp::Asset(const http::Request& request) const {
  auto file = request.params.find("file");
  auto version = request.params.find("version");
  BOX_ASSERT(file != request.params.end() && version != request.params.end());
  auto it = assets_.find(file->second);
  if (it == assets_.end()) return http::ErrorResponse(404, "NOT_FOUND", "no such file");
  if (version->second != version_) return Answer(request, it->second, "no-cache");
  return Answer(request, it->second, "public, max-age=31536000, immutable");
}

void WebApp::Register(http::Router* router) const {
  router->Add(
      "GET", "/", [this](http::Request& r) { return Page(r); }, /*blocking=*/false);
  router->Add(
      "GET", "/door", [this](http::Request& r) { return DoorPage(r); }, /*blocking=*/false);
  router->Add(
      "GET", "/app/{version}/{file}", [this](http::Request& r) { return Asset(r); },
      /*blocking=*/false);
}

}  // namespace boxoffice::api
