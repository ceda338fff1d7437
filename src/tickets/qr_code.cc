#include "tickets/qr_code.h"

#include <png.h>
#include <qrencode.h>

#include <memory>

namespace boxoffice {

std::optional<QrMatrix> EncodeQr(std::string_view text) {
  if (text.empty() || text.size() > kMaxQrText) return std::nullopt;
  const std::string copy(text);  // libqrencode reads a NUL-terminated string
  if (copy.find('\0') != std::string::npos) return std::nullopt;
  std::unique_ptr<QRcode, decltype(&QRcode_free)> code(
      QRcode_encodeString8bit(copy.c_str(), 0, QR_ECLEVEL_M), &QRcode_free);
  if (!code || code->width <= 0) return std::nullopt;
  QrMatrix qr;
  qr.width = code->width;
  const size_t n = static_cast<size_t>(code->width) * static_cast<size_t>(code->width);
  qr.dark.resize(n);
  // libqrencode: bit 0 of each byte is the module's colour (1: dark).
  for (size_t i = 0; i < n; ++i) qr.dark[i] = code->data[i] & 1;
  return qr;
}

std::string QrSvg(const QrMatrix& qr) {
  const int side = qr.width + 2 * kQrQuietZone;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " +
                    std::to_string(side) + " " + std::to_string(side) +
                    "\" shape-rendering=\"crispEdges\">" +
                    "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/><path fill=\"#000\" d=\"";
  for (int y = 0; y < qr.width; ++y) {
    for (int x = 0; x < qr.width;) {
      if (!qr.dark[static_cast<size_t>(y * qr.width + x)]) {
        ++x;
        continue;
      }
      int run = 1;
      while (x + run < qr.width && qr.dark[static_cast<size_t>(y * qr.width + x + run)]) ++run;
      out += "M" + std::to_string(x + kQrQuietZone) + " " + std::to_string(y + kQrQuietZone) + "h" +
             std::to_string(run) + "v1h-" + std::to_string(run) + "z";
      x += run;
    }
  }
  out += "\"/></svg>\n";
  return out;
}

std::string QrPng(const QrMatrix& qr) {
  const int side_px = (qr.width + 2 * kQrQuietZone) * kQrPngModulePx;
  std::vector<uint8_t> pixels(static_cast<size_t>(side_px) * static_cast<size_t>(side_px), 0xff);
  for (int y = 0; y < qr.width; ++y) {
    for (int x = 0; x < qr.width; ++x) {
      if (!qr.dark[static_cast<size_t>(y * qr.width + x)]) continue;
      for (int dy = 0; dy < kQrPngModulePx; ++dy) {
        const size_t row = static_cast<size_t>((y + kQrQuietZone) * kQrPngModulePx + dy);
        const size_t col = static_cast<size_t>((x + kQrQuietZone) * kQrPngModulePx);
        std::fill_n(
            pixels.begin() + static_cast<ptrdiff_t>(row * static_cast<size_t>(side_px) + col),
            kQrPngModulePx, uint8_t{0});
      }
    }
  }
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(side_px);
  image.height = static_cast<png_uint_32>(side_px);
  image.format = PNG_FORMAT_GRAY;
  png_alloc_size_t size = 0;
  // Asked once for the size, then written (libpng's simplified API; no setjmp here).
  if (!png_image_write_to_memory(&image, nullptr, &size, 0, pixels.data(), 0, nullptr)) {
    png_image_free(&image);
    return {};
  }
  std::string out(size, '\0');
  if (!png_image_write_to_memory(&image, out.data(), &size, 0, pixels.data(), 0, nullptr)) {
    png_image_free(&image);
    return {};
  }
  out.resize(size);
  return out;
}

}  // namespace boxoffice
