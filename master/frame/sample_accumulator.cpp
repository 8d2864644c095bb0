#include "master/frame/sample_accumulator.h"

namespace tessera::master {

void SampleAccumulator::add(const ImageRgba8& frame) { mean_.add(frame); }

ImageRgba8 SampleAccumulator::resolve() const { return mean_.mean(); }

void SampleAccumulator::reset() { mean_.clear(); }

}  // namespace tessera::master
