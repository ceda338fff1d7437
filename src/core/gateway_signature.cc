#include "core/gateway_signature.h"

#include <charconv>

#include "core/crypto.h"
#include "core/status.h"

namespace boxoffice {

std::string SignGatewayPayload(std::string_view secret, Instant t, std::string_view body) {
  const std::string ts = std::to_string(ToEpochMs(t) / 1000);
  std::string message = ts + ".";
  message.append(body);
  return "t=" + ts + ",v1=" + HexEncode(HmacSha256(secret, message));
}

Status VerifyGatewaySignature(std::string_view header, std::string_view body,
                              std::string_view secret, Instant now) {
  if (header.empty()) return Status(Code::kInvalid, "missing signature");
  if (header.size() > kMaxSignatureHeader)
    return Status(Code::kInvalid, "signature header too long");
  std::string_view t_text, v1;
  size_t pos = 0;
  while (pos <= header.size()) {
    size_t end = header.find(',', pos);
    if (end == std::string_view::npos) end = header.size();
    const std::string_view part = header.substr(pos, end - pos);
    if (part.substr(0, 2) == "t=") t_text = part.substr(2);
    if (part.substr(0, 3) == "v1=") v1 = part.substr(3);
    pos = end + 1;
  }
  int64_t t = 0;
  auto [ptr, ec] = std::from_chars(t_text.data(), t_text.data() + t_text.size(), t);
  if (t_text.empty() || ec != std::errc() || ptr != t_text.data() + t_text.size() || v1.empty()) {
    return Status(Code::kInvalid, "malformed signature");
  }
  // |now - t| within the tolerance, exactly, compared in whole seconds so that no t (any
  // int64 a header can carry) overflows: the earliest and latest t allowed are the tolerance
  // bounds in milliseconds, rounded inwards.
  const int64_t now_ms = ToEpochMs(now);
  const int64_t earliest_ms = now_ms - kSignatureTolerance.count();
  const int64_t latest_ms = now_ms + kSignatureTolerance.count();
  auto floor_div = [](int64_t a, int64_t b) { return a / b - (a % b != 0 && (a < 0) != (b < 0)); };
  const int64_t earliest_s = -floor_div(-earliest_ms, 1000);  // ceiling
  const int64_t latest_s = floor_div(latest_ms, 1000);
  BOX_ASSERT(earliest_s <= latest_s);  // a window of whole seconds around now, never empty
  if (t < earliest_s || t > latest_s) {
    return Status(Code::kInvalid, "signature timestamp outside the tolerance");
  }
  std::string message(t_text);
  message += '.';
  message.append(body);
  if (!ConstantTimeEquals(v1, HexEncode(HmacSha256(secret, message)))) {
    return Status(Code::kInvalid, "bad signature");
  }
  return Status::Ok();
}

}  // namespace boxoffice
