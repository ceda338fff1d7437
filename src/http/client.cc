#include "http/client.h"

// clang-format off
#include <utility>  // before Asio: Boost 1.74's coroutine headers need std::exchange
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <cctype>

namespace boxoffice::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

std::optional<HttpUrl> ParseHttpUrl(const std::string& url) {
  constexpr std::string_view kScheme = "http://";
  if (url.rfind(kScheme, 0) != 0) return std::nullopt;
  const std::string rest = url.substr(kScheme.size());
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  HttpUrl out;
  out.target = slash == std::string::npos ? "/" : rest.substr(slash);
  const size_t colon = authority.rfind(':');
  out.host = authority.substr(0, colon);
  if (out.host.empty()) return std::nullopt;
  if (colon != std::string::npos) {
    int port = 0;
    for (char c : authority.substr(colon + 1)) {
      if (c < '0' || c > '9') return std::nullopt;
      port = port * 10 + (c - '0');
      if (port > 65535) return std::nullopt;
    }
    if (port == 0) return std::nullopt;
    out.port = static_cast<unsigned short>(port);
  }
  return out;
}

Result<ClientResponse> Fetch(const std::string& host, unsigned short port,
                             const std::string& method, const std::string& target,
                             const std::string& body,
                             const std::vector<std::pair<std::string, std::string>>& headers,
                             Millis timeout) {
  try {
    asio::io_context ioc;
    tcp::resolver resolver(ioc);
    beast::tcp_stream stream(ioc);
    stream.expires_after(timeout);
    stream.connect(resolver.resolve(host, std::to_string(port)));
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    req.set(bhttp::field::host, host);
    if (!body.empty()) req.set(bhttp::field::content_type, "application/json");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(kMaxClientResponseBytes);
    parser.skip(method == "HEAD");
    bhttp::read(stream, buffer, parser);
    auto& res = parser.get();
    ClientResponse out;
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(f.value());
    }
    out.body = std::move(res.body());
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return out;
  } catch (const std::exception& e) {
    return Status(Code::kUnavailable, std::string("http ") + method + " " + host + ":" +
                                          std::to_string(port) + target + ": " + e.what());
  }
}

}  // namespace boxoffice::http
