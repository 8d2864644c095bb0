#pragma once
// `tessera-bench motion`: what moving things cost a frame. An instanced scene (tessera-pack
// --instances) rendered for N frames with its clock running (each frame: SceneMotion::set_time, the
// top level rebuilt and placed on the device, the frame rendered) against the same N frames frozen
// at time 0 (placed once), on one device. The difference is the price of motion: the rebuild and
// upload, and the top level's changing shape.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace tessera::bench {

class MotionCommand {
 public:
  explicit MotionCommand(CLI::App& app);
  bool parsed() const { return command_->parsed(); }
  int run();  // prints one table (or JSON); throws Error on bad input

 private:
  CLI::App* command_;
  std::string scene_, device_ = "auto", size_ = "640x360";
  uint32_t frames_ = 60;
  double fps_ = 30.0;
  bool json_ = false;
};

}  // namespace tessera::bench
