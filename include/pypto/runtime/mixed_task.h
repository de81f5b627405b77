// Running a mixed task (a Group kernel): its parts run at once, one thread each, on their
// own virtual cores, sharing the cluster's FIFOs (cluster.h).
#pragma once
#include <memory>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/engines/cycle_model.h"
#include "pypto/runtime/task_pool.h"

namespace pypto::engines {
class SimEngine;
}

namespace pypto::runtime {

// A worker's virtual cores for the parts of mixed tasks (one per role), made on first use
// and kept for the worker's later mixed tasks.
struct MixedCores {
  MixedCores();
  ~MixedCores();
  std::vector<std::unique_ptr<engines::CoreRunner>> runners;  // engine cores (from the factory)
  std::vector<std::unique_ptr<engines::SimEngine>> sims;      // sim cores (no factory)
};

struct MixedResult {
  double cycles = -1;                  // sim: the latest part's end (modelled cycles)
  std::vector<isa::PartRole> roles;    // per part (group.parts order)
  std::vector<engines::Timeline> timelines;     // sim: per part
};

// The arguments of `part` from the group's arguments (parameters or constants).
std::vector<engines::HostArg> part_args(const isa::Kernel& part_kernel, const isa::KernelPart& part, const std::vector<engines::HostArg>& args);

// Runs the parts of `group` (part_kernels[i] is the kernel of group.parts[i]) concurrently.
// Errors: the first part error (others are cancelled), a FIFO deadlock report, or tiles
// left in a FIFO when every part has finished.
MixedResult run_mixed_task(const isa::Kernel& group, const std::vector<const isa::Kernel*>& part_kernels,
                           const std::vector<engines::HostArg>& args, const isa::ChipSpec& chip, const engines::CoreFactory& factory,
                           MixedCores& cores, bool record_events);

}  // namespace pypto::runtime
