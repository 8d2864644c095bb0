#pragma once
// `tessera-bench instances`: what rebuilding the top level of an instanced scene costs the worker
// (common/scene/top_level_bvh.h), which it does whenever a transform changes: N instances scattered
// and rotated at random, the build timed over many rounds on this CPU, and the top level's device
// bytes per instance beside the objects it places.
#include <CLI/CLI.hpp>
#include <cstdint>

namespace tessera::bench {

class InstanceCommand {
 public:
  explicit InstanceCommand(CLI::App& app);
  bool parsed() const { return command_->parsed(); }
  int run();  // prints one table (or JSON); throws Error on bad input

 private:
  CLI::App* command_;
  uint32_t count_ = 1000;
  int rounds_ = 101;
  bool json_ = false;
};

}  // namespace tessera::bench
