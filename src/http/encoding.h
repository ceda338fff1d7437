// Content codings for responses read often and written rarely (the seat map): the coding a
// request's Accept-Encoding prefers among those we make (RFC 9110 12.5.3), and the codings
// themselves through Debian's zlib (gzip) and libbrotli (br).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace boxoffice::http {

enum class Encoding { kIdentity = 0, kGzip = 1, kBrotli = 2 };
inline constexpr int kEncodings = 3;

// The Content-Encoding value ("gzip", "br"); "" for identity.
const char* EncodingName(Encoding e);

// What we send for this Accept-Encoding (the header's value; absent: identity): the coding
// of highest weight among br and gzip ("x-gzip" too; "*" stands for those not named), br
// on a tie; identity when neither is acceptable (q=0). An element that does not parse (a
// bad weight) is ignored. Identity is sent even if refused ("identity;q=0"): a map has no
// other form to offer, and RFC 9110 12.5.3 lets a server send it rather than 415.
Encoding PreferredEncoding(const std::string* accept_encoding);

// `text` in the coding (gzip at zlib level 6, brotli at quality 5: a 300-seat map's 24 KB
// in about a tenth of a millisecond each). nullopt only if the library fails (out of memory).
std::optional<std::string> Compress(Encoding e, std::string_view text);
// The reverse, for clients and tests; nullopt for data not in the coding or that would
// decode to more than max_bytes.
std::optional<std::string> Decompress(Encoding e, std::string_view data,
                                      size_t max_bytes = size_t{64} << 20);

}  // namespace boxoffice::http
