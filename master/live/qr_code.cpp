#include "master/live/qr_code.h"

#include <qrencode.h>

#include <memory>

#include "common/base/error.h"

namespace tessera::master::live {

QrCode::QrCode(const std::string& text) {
  // Mode detection on (digits of an address and port pack tighter), case kept (the token is case-sensitive).
  const std::unique_ptr<QRcode, void (*)(QRcode*)> code(QRcode_encodeString(text.c_str(), 0, QR_ECLEVEL_M, QR_MODE_8, 1), QRcode_free);
  if (!code) throw Error("cannot make a QR code of " + std::to_string(text.size()) + " characters");
  width_ = code->width;
  modules_.resize(size_t(width_) * width_);
  for (size_t i = 0; i < modules_.size(); ++i) modules_[i] = code->data[i] & 1;  // bit 0: dark; the others tell the module's role
}

std::string qr_terminal_text(const QrCode& code) {
  static constexpr const char* kBlackOnWhite = "\033[30;107m";
  static constexpr const char* kReset = "\033[0m";
  const int from = -kQrQuietZone, to = code.width() + kQrQuietZone;
  std::string text;
  for (int y = from; y < to; y += 2) {
    text += kBlackOnWhite;
    for (int x = from; x < to; ++x) {
      const bool upper = code.dark(x, y), lower = y + 1 < to && code.dark(x, y + 1);
      text += upper && lower ? "\u2588" : upper ? "\u2580" : lower ? "\u2584" : " ";
    }
    text += kReset;
    text += '\n';
  }
  return text;
}

std::string qr_svg(const QrCode& code) {
  const std::string side = std::to_string(code.width() + 2 * kQrQuietZone);
  std::string path;
  for (int y = 0; y < code.width(); ++y) {
    for (int x = 0; x < code.width();) {
      if (!code.dark(x, y)) {
        ++x;
        continue;
      }
      int run = 1;
      while (code.dark(x + run, y)) ++run;
      path += "M" + std::to_string(x + kQrQuietZone) + " " + std::to_string(y + kQrQuietZone) + "h" + std::to_string(run) + "v1h-" +
              std::to_string(run) + "z";
      x += run;
    }
  }
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " + side + " " + side +
         "\" shape-rendering=\"crispEdges\">\n"
         "<rect width=\"" + side + "\" height=\"" + side + "\" fill=\"#fff\"/>\n"
         "<path fill=\"#000\" d=\"" + path + "\"/>\n"
         "</svg>\n";
}

}  // namespace tessera::master::live
