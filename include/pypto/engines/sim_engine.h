// The `sim` engine: interprets one Kernel's instruction stream on one virtual core, with
// the core's on-chip buffers (UB, L1, L0A, L0B, L0C, bias) sized from the chip model and
// tile arithmetic from the reference library.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/engines/cycle_model.h"
#include "pypto/engines/reference.h"
#include "pypto/engines/scalar_machine.h"
#include "pypto/engines/tensor.h"

namespace pypto::engines {

class SimEngine {
 public:
  explicit SimEngine(const isa::ChipSpec& chip);
  // Runs `kernel` to completion; `args` are in the kernel's parameter order (tensors and
  // scalars; scalars are preloaded into registers 0..k-1). Errors are PyptoError.
  void run(const isa::Kernel& kernel, const std::vector<HostArg>& args);
  // The core's buffer that holds `memory` (empty for DDR).
  std::vector<uint8_t>& buffer(MemorySpace memory) { return buffers_[static_cast<size_t>(memory)]; }
  const isa::ChipSpec& chip() const { return chip_; }
  // The modelled timeline of the last run (cycle model; events only when recording is on).
  const Timeline& timeline() const { return timeline_; }
  void set_record_events(bool on) { record_events_ = on; }

 private:
  isa::ChipSpec chip_;
  std::array<std::vector<uint8_t>, kMemorySpaceCount> buffers_;  // indexed by MemorySpace
  Timeline timeline_;
  bool record_events_ = false;
};

// Checks `args` against the parameters of function `callee` (count, tensor vs scalar,
// dtype, static dims); a mismatch is a user error naming the parameter.
void check_args(const std::string& callee, const std::vector<isa::ParamDesc>& params, const std::vector<HostArg>& args);

}  // namespace pypto::engines
