// QR codes of ticket codes (GET /tickets/{code}.svg and .png), drawn from the module matrix
// libqrencode makes: the SVG written here (one path, a run of dark modules per subpath), the
// PNG through libpng's simplified API. Both keep the quiet zone of 4 modules the standard
// asks for, without which phone cameras misread codes on dark screens.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace boxoffice {

struct QrMatrix {
  int width = 0;              // modules per side, without the quiet zone
  std::vector<uint8_t> dark;  // width × width, row by row: 1 dark, 0 light
};

inline constexpr int kQrQuietZone = 4;     // modules of light border on every side
inline constexpr int kQrPngModulePx = 8;   // a 25-module code: 264 px, sharp on a phone
inline constexpr size_t kMaxQrText = 256;  // ticket codes are at most 48 characters

// The QR code of text (byte mode, error correction level M: a scratched print or a cracked
// screen still reads), or nullopt when libqrencode cannot encode it.
std::optional<QrMatrix> EncodeQr(std::string_view text);
// An SVG document drawing the matrix in a viewBox of modules (scales to any size).
std::string QrSvg(const QrMatrix& qr);
// A grayscale PNG, kQrPngModulePx pixels per module; empty if libpng fails.
std::string QrPng(const QrMatrix& qr);

}  // namespace boxoffice
