#include "http/encoding.h"

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>

#include "core/text.h"
#include "http/header_lists.h"


namespace boxoffice::http {

namespace {

// RFC 9110 12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ), in
// thousandths; nullopt if malformed.
std::optional<int> Weight(std::string_view q) {
  if (q.empty() || (q[0] != '0' && q[0] != '1')) return std::nullopt;
  int value = (q[0] - '0') * 1000;
  if (q.size() == 1) return value;
  if (q[1] != '.' || q.size() > 5) return std::nullopt;
  int scale = 100;
  for (char c : q.substr(2)) {
    if (c < '0' || c > '9') return std::nullopt;
    value += (c - '0') * scale;
    scale /= 10;
  }
  return value <= 1000 ? std::optional<int>(value) : std::nullopt;
}

}  // namespace

const char* EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kGzip:
      return "gzip";
    case Encoding::kBrotli:
      return "br";
    case Encoding::kIdentity:
      break;
  }
  return "";
}

Encoding PreferredEncoding(const std::string* accept_encoding) {
  if (!accept_encoding) return Encoding::kIdentity;
  // Weights in thousandths; -1: not named.
  int gzip = -1;
  int br = -1;
  int any = -1;
  ForEachListItem(*accept_encoding, [&](std::string_view element) {
    const size_t semi = element.find(';');
    const std::string_view coding = TrimOws(element.substr(0, semi));
    std::optional<int> weight = 1000;
    for (std::string_view params = semi == std::string_view::npos ? "" : element.substr(semi + 1);
         !params.empty();) {
      const size_t next = params.find(';');
      const std::string_view param = TrimOws(params.substr(0, next));
      params = next == std::string_view::npos ? std::string_view{} : params.substr(next + 1);
      if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
        weight = Weight(param.substr(2));
      } else {
        weight = std::nullopt;  // Accept-Encoding's elements take no other parameter
      }
      if (!weight) break;
    }
    if (!weight || coding.empty()) return;
    if (EqualsNoCase(coding, "gzip") || EqualsNoCase(coding, "x-gzip")) {
      gzip = std::max(gzip, *weight);
    } else if (EqualsNoCase(coding, "br")) {
      br = std::max(br, *weight);
    } else if (coding == "*") {
      any = std::max(any, *weight);
    }
  });
  if (gzip < 0) gzip = any;
  if (br < 0) br = any;
  if (br > 0 && br >= gzip) return Encoding::kBrotli;
  if (gzip > 0) return Encoding::kGzip;
  return Encoding::kIdentity;
}

std::optional<std::string> Compress(Encoding e, std::string_view text) {
  switch (e) {
    case Encoding::kIdentity:
      return std::string(text);
    case Encoding::kGzip: {
      // One deflate state per thread, reset for each text: making one (a quarter of a
      // megabyte of tables) cost twice the compression of a 24 KB map.
      struct Deflater {
        z_stream z{};
        bool ready = false;
        Deflater() {
          // 15 + 16: a gzip wrapper around deflate's largest window.
          ready = deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
        }
        ~Deflater() {
          if (ready) deflateEnd(&z);
        }
      };
      thread_local Deflater d;
      if (!d.ready || deflateReset(&d.z) != Z_OK) return std::nullopt;
      z_stream& z = d.z;
      std::string out(deflateBound(&z, static_cast<uLong>(text.size())), '\0');
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
      z.avail_in = static_cast<uInt>(text.size());
      z.next_out = reinterpret_cast<Bytef*>(out.data());
      z.avail_out = static_cast<uInt>(out.size());
      const int rc = deflate(&z, Z_FINISH);
      if (rc != Z_STREAM_END) return std::nullopt;  // deflateBound is enough by its contract
      out.resize(out.size() - z.avail_out);
      return out;
    }
    case Encoding::kBrotli: {
      size_t size = BrotliEncoderMaxCompressedSize(text.size());
      if (size == 0) return std::nullopt;
      std::string out(size, '\0');
      if (!BrotliEncoderCompress(5, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_TEXT, text.size(),
                                 reinterpret_cast<const uint8_t*>(text.data()), &size,
                                 reinterpret_cast<uint8_t*>(out.data()))) {
        return std::nullopt;
      }
      out.resize(size);
      return out;
    }
  }
  return std::nullopt;
}

std::optional<std::string> Decompress(Encoding e, std::string_view data, size_t max_bytes) {
  std::string out;
  char chunk[16384];
  switch (e) {
    case Encoding::kIdentity:
      if (data.size() > max_bytes) return std::nullopt;
      return std::string(data);
    case Encoding::kGzip: {
      z_stream z{};
      if (inflateInit2(&z, 15 + 16) != Z_OK) return std::nullopt;
      z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
      z.avail_in = static_cast<uInt>(data.size());
      int rc = Z_OK;
      while (rc == Z_OK) {
        z.next_out = reinterpret_cast<Bytef*>(chunk);
        z.avail_out = sizeof chunk;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(chunk, sizeof chunk - z.avail_out);
        if (out.size() > max_bytes) rc = Z_MEM_ERROR;
        if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // truncated
      }
      const bool whole = rc == Z_STREAM_END && z.avail_in == 0;
      inflateEnd(&z);
      if (!whole) return std::nullopt;
      return out;
    }
    case Encoding::kBrotli: {
      BrotliDecoderState* s = BrotliDecoderCreateInstance(nullptr, nullptr, nullptr);
      if (!s) return std::nullopt;
      size_t in_left = data.size();
      const uint8_t* in = reinterpret_cast<const uint8_t*>(data.data());
      BrotliDecoderResult rc = BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT;
      while (rc == BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT && out.size() <= max_bytes) {
        size_t out_left = sizeof chunk;
        uint8_t* next = reinterpret_cast<uint8_t*>(chunk);
        rc = BrotliDecoderDecompressStream(s, &in_left, &in, &out_left, &next, nullptr);
        out.append(chunk, sizeof chunk - out_left);
      }
      BrotliDecoderDestroyInstance(s);
      if (rc != BROTLI_DECODER_RESULT_SUCCESS || in_left != 0 || out.size() > max_bytes) {
        return std::nullopt;
      }
      return out;
    }
  }
  return std::nullopt;
}

}  // namespace boxoffice::http
