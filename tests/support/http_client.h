// A small blocking HTTP/1.1 client for end-to-end tests (Beast), one connection per call.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace boxoffice::testing {

struct HttpResult {
  int status = 0;                              // 0: no response (connection failed)
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string Header(const std::string& lower_name) const {
    auto it = headers.find(lower_name);
    return it == headers.end() ? "" : it->second;
  }
};

HttpResult HttpCall(unsigned short port, const std::string& method, const std::string& target,
                    const std::string& body = "",
                    const std::vector<std::pair<std::string, std::string>>& headers = {});

// Sends raw bytes and returns whatever comes back until the server closes (or 5 s).
std::string RawExchange(unsigned short port, const std::string& bytes);

}  // namespace boxoffice::testing
