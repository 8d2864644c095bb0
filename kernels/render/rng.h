/* Counter-based random numbers: a PCG-style integer hash of (pixel, sample, dimension), so a
 * sample's random numbers do not depend on which device or thread renders it. */
#ifndef TESSERA_KERNELS_RENDER_RNG_H
#define TESSERA_KERNELS_RENDER_RNG_H
#include "kernels/base/compat.h"

TS_FN uint rng_hash(uint x) {
  uint state = x * 747796405u + 2891336453u;
  uint word = ((state >> ((state >> 28u) + 4u)) ^ state) * 277803737u;
  return (word >> 22u) ^ word;
}

typedef struct Rng {
  uint state;
} Rng;

TS_FN Rng rng_make(uint pixel, uint sample, uint seed) {
  Rng r;
  r.state = rng_hash(pixel ^ rng_hash(sample ^ rng_hash(seed)));
  return r;
}

/* Uniform in [0, 1), 24 bits. */
TS_FN float rng_next(Rng* r) {
  r->state = rng_hash(r->state);
  return (float)(r->state >> 8) * (1.0f / 16777216.0f);
}

#endif
