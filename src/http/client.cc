#include "http/client.h"

// clang-format off
#include <utility>  // before Asio: Boost 1.74's coroutine headers need std::exchange
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <cctype>

#include "http/async_client.h"

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
  // Beast's blocking calls ignore timeouts: the call runs asynchronously on a private
  // io_context instead, where the deadline holds.
  HttpPool once(host, port, 1);
  return io::RunSync(once.Fetch(method, target, body, headers, timeout));
}

}  // namespace boxoffice::http
