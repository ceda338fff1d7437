// The seat picker's files as WebApp serves them: the page names its assets by a version that
// changes with any file, assets are immutable under their version, everything is revalidated
// by ETag.
#include "api/web_app.h"

#include <gtest/gtest.h>

namespace boxoffice::api {
namespace {

http::Request Get(std::string path, std::map<std::string, std::string> params = {},
                  std::string if_none_match = "") {
  http::Request r;
  r.method = "GET";
  r.path = std::move(path);
  r.params = std::move(params);
  if (!if_none_match.empty()) r.headers.Add("If-None-Match", if_none_match);
  return r;
}

std::string HeaderOf(const http::Response& r, const std::string& name) {
  for (const auto& [k, v] : r.headers)
    if (k == name) return v;
  return "";
}

std::string BodyOf(const http::Response& r) { return r.shared_body ? *r.shared_body : r.body; }

TEST(WebApp, ThePageNamesItsAssetsByAVersionThatFollowsEveryFile) {
  const std::vector<WebFile> files = {
      {"index.html", "<script src=\"{{APP}}/app.js\"></script><link href=\"{{APP}}/s.css\">"},
      {"door.html", "<script src=\"{{APP}}/door.js\"></script>"},
      {"app.js", "import './x.js';"},
      {"s.css", "body{}"}};
  const WebApp app(files);
  ASSERT_EQ(app.version().size(), 16u);
  auto page = app.Page(Get("/"));
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_EQ(BodyOf(page), "<script src=\"/app/" + app.version() + "/app.js\"></script><link href=\"/app/" +
                              app.version() + "/s.css\">");
  EXPECT_EQ(HeaderOf(page, "Cache-Control"), "no-cache");
  EXPECT_EQ(app.Page(Get("/", {}, HeaderOf(page, "ETag"))).status, 304);
  EXPECT_EQ(app.Page(Get("/", {}, "W/" + HeaderOf(page, "ETag") + ", \"x\"")).status, 304);

  auto css = app.Asset(Get("", {{"version", app.version()}, {"file", "s.css"}}));
  EXPECT_EQ(css.status, 200);
  EXPECT_EQ(css.content_type, "text/css; charset=utf-8");
  EXPECT_EQ(BodyOf(css), "body{}");
  EXPECT_EQ(HeaderOf(css, "Cache-Control"), "public, max-age=31536000, immutable");
  EXPECT_EQ(app.Asset(Get("", {{"version", "old"}, {"file", "s.css"}})).status, 200);
  EXPECT_EQ(HeaderOf(app.Asset(Get("", {{"version", "old"}, {"file", "s.css"}})), "Cache-Control"),
            "no-cache");
  EXPECT_EQ(app.Asset(Get("", {{"version", app.version()}, {"file", "index.html"}})).status, 404);
  EXPECT_EQ(app.Asset(Get("", {{"version", app.version()}, {"file", "door.html"}})).status, 404);
  // The door page, the same way.
  EXPECT_EQ(BodyOf(app.DoorPage(Get("/door"))),
            "<script src=\"/app/" + app.version() + "/door.js\"></script>");
  EXPECT_NE(HeaderOf(app.DoorPage(Get("/door")), "Content-Security-Policy"), "");
  EXPECT_EQ(app.Asset(Get("", {{"version", app.version()}, {"file", "nope.js"}})).status, 404);

  // One byte more in any file: another version, so no browser keeps a stale asset.
  std::vector<WebFile> changed = files;
  changed[3].content = "body{ }";
  EXPECT_NE(WebApp(changed).version(), app.version());
  EXPECT_EQ(WebApp(files).version(), app.version());
}

TEST(WebApp, TheEmbeddedSeatPickerHasItsPageAndScripts) {
  const WebApp app;
  auto page = BodyOf(app.Page(Get("/")));
  EXPECT_NE(page.find("/app/" + app.version() + "/app.js"), std::string::npos);
  EXPECT_EQ(page.find("{{APP}}"), std::string::npos);
  for (const char* name : {"app.js", "api.js", "seatmap.js", "format.js", "admin.js", "style.css"}) {
    EXPECT_EQ(app.Asset(Get("", {{"version", app.version()}, {"file", name}})).status, 200) << name;
  }
}

}  // namespace
}  // namespace boxoffice::api
