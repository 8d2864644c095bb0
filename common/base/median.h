#pragma once
// The median of a benchmark's samples (the middle one, or the mean of the middle two; 0 for none),
// what every benchmark prints.
#include <algorithm>
#include <vector>

namespace tessera {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace tessera
