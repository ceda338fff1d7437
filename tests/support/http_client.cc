#include "support/http_client.h"

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
  HttpResult out;
  try {
    asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::seconds(30));
    stream.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port));
    bhttp::request<bhttp::string_body> req{bhttp::string_to_verb(method), target, 11};
    req.set(bhttp::field::host, "127.0.0.1");
    if (!body.empty()) req.set(bhttp::field::content_type, "application/json");
    for (const auto& [k, v] : headers) req.set(k, v);
    req.body() = body;
    req.prepare_payload();
    bhttp::write(stream, req);
    beast::flat_buffer buffer;
    bhttp::response_parser<bhttp::string_body> parser;
    parser.body_limit(64 * 1024 * 1024);
    parser.skip(method == "HEAD");
    bhttp::read(stream, buffer, parser);
    auto& res = parser.get();
    out.status = static_cast<int>(res.result_int());
    for (const auto& f : res) {
      std::string name(f.name_string());
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      out.headers[name] = std::string(f.value());
    }
    out.body = res.body();
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
  } catch (const std::exception&) {
    out.status = 0;
  }
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
