// How every PostgreSQL connection of the store is opened (the blocking pool's and the I/O
// loops' pipelines alike): libpq's keywords for a postgresql:// URL.
//
// * TCP keepalives and a TCP user timeout, so that a database host that falls silent (a
//   dropped link, a frozen machine) fails the connection within about a minute instead of
//   leaving a job or a pool connection waiting on a socket that never answers. They come
//   before the URL in the keyword list, so a URL that sets its own wins.
// * A host named in the URL is resolved by the caller, off the I/O loops (libpq would call
//   getaddrinfo synchronously inside PQconnectStart), and the address passed as hostaddr
//   after the URL; the name stays the host libpq checks certificates and passwords
//   against. A URL with several hosts, a socket directory, an address or a hostaddr of its
//   own is left to libpq as it is.
#pragma once

#include <string>
#include <vector>

#include "core/clock.h"
#include "core/status.h"

namespace boxoffice {

// Keepalives: the first probe after kPgKeepaliveIdle of silence, then every
// kPgKeepaliveInterval, the connection dead after kPgKeepaliveCount unanswered ones; data
// unacknowledged for kPgTcpUserTimeout also ends it.
inline constexpr Millis kPgKeepaliveIdle{30'000};
inline constexpr Millis kPgKeepaliveInterval{10'000};
inline constexpr int kPgKeepaliveCount = 3;
inline constexpr Millis kPgTcpUserTimeout{60'000};

class PgConnectParams {
 public:
  // hostaddr: the resolved address of the URL's host, or "" (libpq resolves, or needs not).
  PgConnectParams(const std::string& url, Millis connect_timeout,
                  const std::string& application_name, const std::string& hostaddr = "");
  // NULL-terminated arrays for PQconnectdbParams / PQconnectStartParams (expand_dbname 1),
  // valid while this object lives.
  const char* const* keys() const { return keys_.data(); }
  const char* const* values() const { return values_.data(); }

 private:
  std::vector<std::string> storage_;  // keys and values, in pairs
  std::vector<const char*> keys_;
  std::vector<const char*> values_;
};

// The one host the URL names by name (not an address, not a socket directory, not one of
// several, without a hostaddr of its own), which the caller should resolve; "" otherwise.
std::string PgHostToResolve(const std::string& url);
// The host's first address (IPv4 first), numeric; kUnavailable when it has none. Blocks:
// never on an I/O loop.
Result<std::string> ResolvePgHost(const std::string& host);

}  // namespace boxoffice
