#include "store/pg_connect.h"

#include <arpa/inet.h>
#include <libpq-fe.h>
#include <netdb.h>
#include <sys/socket.h>

#include <memory>

#include "core/status.h"

namespace boxoffice {
namespace {

bool IsNumericAddress(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::string Seconds(Millis d) { return std::to_string(std::max<int64_t>(1, d.count() / 1000)); }

}  // namespace

PgConnectParams::PgConnectParams(const std::string& url, Millis connect_timeout,
                                 const std::string& application_name, const std::string& hostaddr) {
  storage_ = {"keepalives",
              "1",
              "keepalives_idle",
              Seconds(kPgKeepaliveIdle),
              "keepalives_interval",
              Seconds(kPgKeepaliveInterval),
              "keepalives_count",
              std::to_string(kPgKeepaliveCount),
              "tcp_user_timeout",
              std::to_string(kPgTcpUserTimeout.count()),
              "dbname",
              url,
              "connect_timeout",
              Seconds(connect_timeout),
              "application_name",
              application_name};
  if (!hostaddr.empty()) {
    storage_.push_back("hostaddr");
    storage_.push_back(hostaddr);
  }
  for (size_t i = 0; i < storage_.size(); i += 2) {
    keys_.push_back(storage_[i].c_str());
    values_.push_back(storage_[i + 1].c_str());
  }
  keys_.push_back(nullptr);
  values_.push_back(nullptr);
  // libpq reads the two arrays side by side, up to their null ends.
  BOX_ASSERT(storage_.size() % 2 == 0 && keys_.size() == values_.size() &&
             keys_.size() == storage_.size() / 2 + 1);
}

std::string PgHostToResolve(const std::string& url) {
  char* error = nullptr;
  std::unique_ptr<PQconninfoOption, decltype(&PQconninfoFree)> options(
      PQconninfoParse(url.c_str(), &error), &PQconninfoFree);
  if (error) PQfreemem(error);
  if (!options) return "";
  std::string host;
  for (const PQconninfoOption* o = options.get(); o->keyword; ++o) {
    const std::string keyword = o->keyword;
    if (keyword == "hostaddr" && o->val && *o->val) return "";
    if (keyword == "host" && o->val) host = o->val;
  }
  if (host.empty() || host.front() == '/' || host.find(',') != std::string::npos ||
      IsNumericAddress(host)) {
    return "";
  }
  return host;
}

Result<std::string> ResolvePgHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &found);
  if (rc != 0 || !found) {
    return Status(Code::kUnavailable,
                  "cannot resolve " + host + ": " + (rc != 0 ? gai_strerror(rc) : "no address"));
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  // IPv4 first, as libpq's own order would mostly give.
  const addrinfo* chosen = nullptr;
  for (const addrinfo* a = found; a; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      chosen = a;
      break;
    }
    if (!chosen && a->ai_family == AF_INET6) chosen = a;
  }
  if (!chosen) return Status(Code::kUnavailable, "cannot resolve " + host + ": no address");
  char text[INET6_ADDRSTRLEN] = {};
  const void* address =
      chosen->ai_family == AF_INET
          ? static_cast<const void*>(
                &reinterpret_cast<const sockaddr_in*>(chosen->ai_addr)->sin_addr)
          : static_cast<const void*>(
                &reinterpret_cast<const sockaddr_in6*>(chosen->ai_addr)->sin6_addr);
  if (!inet_ntop(chosen->ai_family, address, text, sizeof text)) {
    return Status(Code::kUnavailable, "cannot resolve " + host);
  }
  return std::string(text);
}

}  // namespace boxoffice
