#include "support/http_client.h"

#include "http/client.h"

// clang-format off
#include <utility>  // before Asio: Boost 1.74's coroutine headers need std::exchange
#include <boost/asio.hpp>
#include <boost/beast.hpp>
// clang-format on
#include <cctype>

namespace boxoffice::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = asio::ip::tcp;

HttpResult HttpCall(unsigned short port, const std::string& method, const std::string& target,
                    const std::string& body,
                    const std::vector<std::pair<std::string, std::string>>& headers) {
  auto r = http::Fetch("127.0.0.1", port, method, target, body, headers, Millis(30'000));
  HttpResult out;
  if (!r.ok()) return out;
  out.status = r->status;
  out.headers = std::move(r->headers);
  out.body = std::move(r->body);
  return out;
}

std::string RawExchange(unsigned short port, const std::string& bytes) {
  std::string out;
  try {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(5));
    stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    asio::write(stream, asio::buffer(bytes));
    char buf[4096];
    for (;;) {
      beast::error_code ec;
      const size_t n = stream.read_some(asio::buffer(buf), ec);
      out.append(buf, n);
      if (ec) break;
    }
  } catch (const std::exception&) {
  }
  return out;
}

}  // namespace boxoffice::testing
