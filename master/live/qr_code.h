#pragma once
// QR codes of the live session's URL (libqrencode), so a headset's browser opens it from its
// camera instead of a person typing 70 characters: drawn in the terminal with Unicode half blocks,
// and as an SVG the page shows (GET /qr.svg).
#include <string>
#include <vector>

namespace tessera::master::live {

class QrCode {
 public:
  // Error correction M (15 % of the symbol may be unreadable: glare on a screen). Throws Error
  // when the text does not fit a QR code.
  explicit QrCode(const std::string& text);
  int width() const { return width_; }  // modules a side, without the quiet zone
  bool dark(int x, int y) const { return x >= 0 && y >= 0 && x < width_ && y < width_ && modules_[size_t(y) * width_ + x]; }

 private:
  int width_ = 0;
  std::vector<bool> modules_;
};

// Light modules around the symbol, as the standard asks, so scanners find its edges.
constexpr int kQrQuietZone = 4;

// Two module rows a text line (upper, lower or full half block), black on white whatever the
// terminal's colours, each line ending in a colour reset and '\n'.
std::string qr_terminal_text(const QrCode& code);

// One module a unit, quiet zone included (viewBox 0 0 N N, N = width + 2 * quiet zone): a white
// square and a black path of one `M x y h n v 1 h -n z` run per dark stretch of a row.
std::string qr_svg(const QrCode& code);

}  // namespace tessera::master::live
