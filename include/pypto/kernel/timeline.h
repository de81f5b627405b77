// The modelled instruction timeline of a lowered kernel and the step-by-step debugger.
// Timeline: in-order issue per pipe, an instruction starts when its pipe is free, its input
// tiles are written (RAW), the tiles it overwrites are read (WAR) and, in a pipeline, the
// stage it follows has finished for the same iteration. Costs come from the ISA table.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "pypto/kernel/lower_lanes.h"
#include "pypto/engines/sim_engine.h"

namespace pypto::kernel {

struct TimelineEntry {
  int instr = 0;              // user-visible instruction index (LoweredKernel::lane_pcs)
  double start = 0, end = 0;  // modelled cycles
  std::string pipe;
};

// One entry per executed user-visible instruction (a loop body once per iteration), in order.
std::vector<TimelineEntry> model_timeline(const LoweredKernel& lowered);

// Executes an unrolled lowered kernel one user-visible instruction at a time on one sim
// core, keeping the core's buffers between steps (straight-line code, immediate operands;
// InsertSync's flags are skipped). pc() counts user-visible instructions.
class KernelStepper {
 public:
  KernelStepper(std::shared_ptr<LoweredKernel> lowered, const std::string& platform);
  int pc() const { return pc_; }
  bool done() const { return pc_ >= static_cast<int>(lowered_->lane_pcs.size()); }
  void step();  // runs user-visible instruction pc and advances
  // fp32 contents of tile `tile` (valid region of its first row, or all of it).
  std::vector<float> tile_values(int tile, int64_t from, int64_t count);
  const LoweredKernel& lowered() const { return *lowered_; }

 private:
  std::shared_ptr<LoweredKernel> lowered_;
  engines::SimEngine core_;
  isa::Kernel one_;
  int pc_ = 0;
};

}  // namespace pypto::kernel
