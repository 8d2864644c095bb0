// tessera-pack: packs an OBJ/PLY scene into a .tpk (quantized mesh + compact kd-tree + textures).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "common/base/cli.h"
#include "common/base/error.h"
#include "common/base/temporary_files.h"
#include "scene-packer/packer.h"

namespace {

using tessera::Error;
using tessera::UsageError;
namespace cli = tessera::cli;
using namespace tessera::pack;

QuantizeOptions parse_quantize(const std::string& text) {
  if (text == "none") return {false, false, false};
  if (text == "pos") return {true, false, false};
  if (text == "pos,norm") return {true, true, false};
  if (text == "pos,norm,tex" || text == "all") return {true, true, true};
  throw UsageError("unknown --quantize value '" + text + "' (expected none, pos, pos,norm or pos,norm,tex)");
}

KdVariant parse_variant(const std::string& text) {
  if (text == "standard") return KdVariant::Standard;
  if (text == "choi") return KdVariant::Choi;
  if (text == "seo") return KdVariant::Seo;
  throw UsageError("unknown --kdtree value '" + text + "' (expected standard, choi or seo)");
}

std::array<uint32_t, 3> parse_replicate(const std::string& text) {
  std::array<uint32_t, 3> n{};
  char sep1 = 0, sep2 = 0, extra = 0;
  unsigned a = 0, b = 0, c = 0;
  const int got = std::sscanf(text.c_str(), "%u%c%u%c%u%c", &a, &sep1, &b, &sep2, &c, &extra);
  if (got != 5 || (sep1 != ',' && sep1 != 'x') || sep2 != sep1 || a == 0 || b == 0 || c == 0 || a > 64 || b > 64 || c > 64)
    throw UsageError("bad --replicate value '" + text + "' (expected NX,NY,NZ such as 4,3,4; 1 to 64 each)");
  n = {a, b, c};
  return n;
}

void print_summary(const PackReport& r, const std::string& output) {
  const auto& m = r.manifest;
  std::printf("packed %s -> %s\n", m.source().c_str(), output.c_str());
  std::printf("  %llu triangles, %llu vertices (%llu degenerate dropped)\n", (unsigned long long)m.triangles(),
              (unsigned long long)m.vertices(), (unsigned long long)m.degenerate_triangles_dropped());
  std::printf("  mesh %.2f MB (float layout %.2f MB)%s, kd-tree %.2f MB, textures %.2f MB\n", r.mesh_device_bytes / 1e6,
              r.mesh_original_bytes / 1e6,
              r.normal_table_bytes ? (", with the " + std::to_string(r.normal_table_bytes / 1000) + " KB normal table every scene has").c_str() : "",
              r.kdtree_device_bytes / 1e6, r.texture_device_bytes / 1e6);
  std::printf("  %.1f bytes per triangle (mesh + kd-tree), file %.2f MB\n",
              double(r.mesh_device_bytes + r.kdtree_device_bytes) / double(m.triangles()), r.file_bytes / 1e6);
  if (m.objects() > 0)
    std::printf("  %u objects placed by %u instances (each object its own kd-tree)\n", m.objects(), m.instances());
  std::printf("  kd-tree: %llu inner / %llu inner with refs / %llu leaves, depth %u, SAH cost %.2f\n",
              (unsigned long long)r.kdtree.inner_nodes_without_refs, (unsigned long long)r.kdtree.inner_nodes_with_refs,
              (unsigned long long)r.kdtree.leaves, r.kdtree.max_depth, r.kdtree.sah_cost);
  std::printf("  on a device, mesh + kd-tree: fast profile %.1f bytes per triangle, compact profile %.1f\n",
              double(r.fast.mesh_tree) / double(m.triangles()), double(r.compact.mesh_tree) / double(m.triangles()));
  std::printf("  %.2f s (kd-tree %.2f s), peak memory %.0f MB\n", r.seconds_total, r.seconds_kdtree, r.peak_memory_bytes / 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "tessera-pack: pack a triangle scene (OBJ with MTL and textures, .obj.zst, PLY, or glTF 2.0 .gltf/.glb) into a\n"
      "Tessera .tpk file: "
      "quantized mesh (Seo et al. 2022 §3.1), compact SAH kd-tree, materials, lights, textures; zstd sections.\n"
      "Scene settings (camera, lights, material overrides, scale) are read from <name>.scene.txtpb beside the\n"
      "input, or from --settings. The input may also be a .scene.txtpb that composes the scene from included\n"
      "meshes and generated spheres, boxes and quads (see scene-packer/scenes/pt_*.scene.txtpb).",
      "tessera-pack"};
  PackOptions options;
  std::string input, output, quantize = "pos,norm,tex", variant = "seo", replicate;
  std::string settings;
  bool json = false, no_textures = false;
  app.add_option("input", input, "Scene to pack (.obj, .obj.zst, .ply, .gltf or .glb)")->required();
  app.add_option("-o,--output", output, "Output .tpk file (written atomically)")->required();
  app.add_flag("--json", json, "Print sizes, kd-tree statistics, timings, warnings and notes as one JSON object");
  app.add_option("--settings", settings, "Scene settings file (protobuf text format)");
  std::vector<std::string> include_dirs;
  app.add_option("--include-dir", include_dirs,
                 "Folder to search for meshes the settings include (repeatable; after the settings file's folder)");
  app.add_option("--quantize", quantize, "Attributes to quantize: none, pos, pos,norm or pos,norm,tex")->capture_default_str();
  app.add_option("--kdtree", variant, "kd-tree variant: standard, choi (1 ref per inner node) or seo (up to 2)")
      ->capture_default_str()->check(CLI::IsMember({"standard", "choi", "seo"}));
  app.add_option("--tau-occupancy", options.kdtree.tau_occupancy, "Occupancy threshold for inner-node references")
      ->capture_default_str()->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--tau-frequency", options.kdtree.tau_frequency, "Frequency threshold for inner-node references")
      ->capture_default_str()->check(CLI::Range(0.0f, 1.0f));
  app.add_option("--max-path-refs", options.kdtree.max_path_references,
                 "Most inner-node references on any root-to-leaf path")->capture_default_str()->check(CLI::Range(0, 64));
  app.add_option("--sah-traversal-cost", options.kdtree.traversal_cost,
                 "SAH cost of a kd-tree traversal step, relative to a triangle test: lower builds smaller leaves (fewer\n"
                 "triangle tests a ray) at more bytes")
      ->capture_default_str()->check(CLI::Range(0.25, 64.0));
  app.add_option("--sah-empty-bonus", options.kdtree.empty_bonus,
                 "SAH discount of a split that leaves one side empty (cost x (1 - bonus)): higher cuts empty space off\n"
                 "sooner (fewer triangle tests, more inner steps)")
      ->capture_default_str()->check(CLI::Range(0.0, 0.9));
  app.add_option("--compact-sah-traversal-cost", options.compact_traversal_cost,
                 "SAH traversal cost the second kd-tree, the compact scene-memory profile's, is built with before it is\n"
                 "pruned to --compact-tree-budget (docs/scene-memory.md); 0: none (that profile then traverses the first tree)")
      ->capture_default_str()->check(CLI::Range(0.0, 64.0));
  app.add_option("--compact-sah-empty-bonus", options.compact_empty_bonus,
                 "SAH empty-space bonus of the compact profile's kd-tree (as --sah-empty-bonus)")
      ->capture_default_str()->check(CLI::Range(0.0, 0.9));
  app.add_option("--compact-tree-budget", options.compact_tree_budget,
                 "Bytes a triangle the compact profile's kd-tree may take on a device (nodes and narrow leaf lists): the\n"
                 "tree is pruned, cells few rays reach first, until it fits; 0: not pruned")
      ->capture_default_str()->check(CLI::Range(0.0, 1024.0));
  app.add_flag("--paper-tables", options.paper_tables,
               "Also build the standard, Choi and Seo trees at SAH cost 2.75 and report the kd-tree and\n"
               "scene-compression tables of Seo et al. 2022 (Tables 5a, 5b, 6) in --json's paper_tables");
  app.add_flag("--instances", options.instances,
               "Pack a glTF's meshes as objects (each its own kd-tree in object space, stored once however often it is\n"
               "placed), its nodes as instances, and its animations (docs/instances.md); without it the scene is one\n"
               "mesh in its pose at time 0");
  app.add_flag("--keep-obj-groups", options.keep_obj_groups,
               "Pack an OBJ's groups (g, o) as objects, each its own kd-tree under an identity instance");
  app.add_option("--replicate", replicate, "Copy the scene on a grid, NX,NY,NZ (e.g. 4,3,4 = 48 copies)");
  app.add_option("--max-texture-size", options.max_texture_size, "Halve textures until no side exceeds this")
      ->capture_default_str()->check(CLI::Range(1u, 16384u));
  app.add_flag("--no-textures", no_textures, "Leave textures out");
  app.add_option("--zstd-level", options.zstd_level, "zstd compression level of the sections")
      ->capture_default_str()->check(CLI::Range(1, 19));
  app.add_option("--texture-zstd-level", options.texture_zstd_level,
                 "Highest zstd level for the texels (lower of this and --zstd-level)")
      ->capture_default_str()->check(CLI::Range(1, 19));

  if (const auto done = cli::parse(app, argc, argv)) return *done;
  tessera::remove_temporary_files_on_signal();
  try {
    options.input = input;
    options.output = output;
    if (!settings.empty()) options.settings = settings;
    for (const auto& dir : include_dirs) options.include_dirs.push_back(dir);
    options.quantize = parse_quantize(quantize);
    options.kdtree.variant = parse_variant(variant);
    if (!replicate.empty()) options.replicate = parse_replicate(replicate);
    if (options.compact_traversal_cost > 0 && options.compact_traversal_cost < 0.25)
      throw UsageError("--compact-sah-traversal-cost must be 0 (no compact tree) or from 0.25 to 64");
    options.load_textures = !no_textures;
    const PackReport report = pack_scene(options);
    if (!json) {  // with --json they are the object's "warnings" and "notes"
      for (const auto& line : report.warnings) std::fprintf(stderr, "tessera-pack: warning: %s\n", line.c_str());
      for (const auto& line : report.notes) std::fprintf(stderr, "tessera-pack: %s\n", line.c_str());
    }
    if (json)
      std::cout << report_to_json(report).dump(2) << std::endl;
    else
      print_summary(report, output);
    return 0;
  } catch (const std::exception& e) {
    return cli::fail(app, e);
  }
}
