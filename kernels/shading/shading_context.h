/* Everything besides geometry that shading reads, and the per-render settings. */
#ifndef TESSERA_KERNELS_SHADING_SHADING_CONTEXT_H
#define TESSERA_KERNELS_SHADING_SHADING_CONTEXT_H
#include "kernels/shading/color.h"
#include "kernels/shading/lights.h"
#include "kernels/shading/material.h"

typedef struct ShadingContext {
  TS_GLOBAL const MaterialGpu* materials;
  TS_GLOBAL const uint* material_runs; /* (first triangle, material) pairs */
  uint material_run_count;
  TS_GLOBAL const TextureGpu* textures;
  TS_GLOBAL const uint* texels;        /* RGBA8, red in the low byte */
  TS_GLOBAL const LightGpu* lights;
  uint light_count;
  TS_GLOBAL const EmitterGpu* emitters;
  uint emitter_count;
  ColorTables color;
} ShadingContext;

/* Passed by value to kernels: scalars only. */
typedef struct RenderSettings {
  uint max_depth;      /* mirror / glass bounces */
  uint light_samples;  /* shadow rays toward emissive triangles per diffuse hit */
  uint seed;
  uint texture_lod;    /* 1: textures filtered over each ray's cone (mip levels), 0: level 0 alone */
  float ambient;       /* share of the albedo shown even where no light reaches */
  float background_r, background_g, background_b;
  float ray_epsilon;   /* offset of secondary ray origins, in scene units */
  float exposure;
  float pad1, pad2;
} RenderSettings;

#endif
