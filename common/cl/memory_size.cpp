#include "common/cl/memory_size.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "common/base/error.h"
#include "common/base/usage_error.h"

namespace tessera::cl {
namespace {

__extension__ typedef unsigned __int128 uint128;  // exact fraction arithmetic; GCC and Clang

[[noreturn]] void reject(std::string_view text, const char* why) {
  throw UsageError("invalid memory size '" + std::string(text) + "': " + why +
              " (examples: 950M, 950MB, 1.5G, 2GiB, 512K, 1048576)");
}

std::string lower(std::string_view text) {
  std::string out;
  for (char c : text) out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

uint64_t parse_memory_size(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size() && text[pos] == ' ') ++pos;
  // Parse the number by hand: strtod would also accept "inf", "0x1p3" and locale commas.
  uint64_t whole = 0;
  size_t whole_digits = 0;
  for (; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos, ++whole_digits) {
    const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (whole > (UINT64_MAX - digit) / 10) reject(text, "too large");
    whole = whole * 10 + digit;
  }
  std::string fraction;
  if (pos < text.size() && text[pos] == '.') {
    for (++pos; pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])); ++pos)
      fraction += text[pos];
    if (fraction.empty()) reject(text, "expected digits after '.'");
  }
  if (whole_digits == 0) reject(text, "expected a number");
  while (pos < text.size() && text[pos] == ' ') ++pos;
  std::string unit = lower(text.substr(pos));
  while (!unit.empty() && unit.back() == ' ') unit.pop_back();

  int shift = -1;
  if (unit.empty() || unit == "b") shift = 0;
  else {
    const char prefix = unit[0];
    const std::string rest = unit.substr(1);
    if (rest.empty() || rest == "b" || rest == "ib") {
      if (prefix == 'k') shift = 10;
      else if (prefix == 'm') shift = 20;
      else if (prefix == 'g') shift = 30;
      else if (prefix == 't') shift = 40;
    }
  }
  if (shift < 0) reject(text, "unknown unit");
  if (shift == 0 && !fraction.empty()) reject(text, "a fraction of a byte");

  const uint64_t multiplier = uint64_t{1} << shift;
  if (whole > UINT64_MAX / multiplier) reject(text, "too large");
  uint64_t bytes = whole * multiplier;
  // Fraction digits beyond 2^64 precision do not matter; 19 keeps the arithmetic exact.
  if (fraction.size() > 19) fraction.resize(19);
  if (!fraction.empty()) {
    // bytes += fraction * multiplier, rounded down, computed as an integer to stay exact.
    uint128 numerator = 0, denominator = 1;
    for (char c : fraction) {
      numerator = numerator * 10 + static_cast<unsigned>(c - '0');
      denominator *= 10;
    }
    const uint128 extra = numerator * multiplier / denominator;
    if (extra > UINT64_MAX - bytes) reject(text, "too large");
    bytes += static_cast<uint64_t>(extra);
  }
  if (bytes == 0) reject(text, "must be more than zero bytes");
  return bytes;
}

std::string format_memory_size(uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static const char* const units[] = {"KB", "MB", "GB", "TB", "PB", "EB"};
  double value = static_cast<double>(bytes) / 1024.0;
  int unit = 0;
  while (value >= 1023.5 && unit < 5) {  // 1023.7 MB would print as "1024 MB"; show "1 GB" instead
    value /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, value >= 99.95 ? "%.0f" : value >= 9.995 ? "%.1f" : "%.2f", value);
  std::string number = text;
  if (number.find('.') != std::string::npos) {
    while (number.back() == '0') number.pop_back();
    if (number.back() == '.') number.pop_back();
  }
  return number + " " + units[unit];
}

}  // namespace tessera::cl
