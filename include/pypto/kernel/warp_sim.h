// The warp model of lane programs with barriers, one step at a time. Each block's lanes run
// in warps of 32 that are scheduled independently (a warp runs until pto.barrier_block() or
// the end, then the next warp runs), and every device-memory access is checked for data races
// between lanes not ordered by a barrier. run_warps (pto.launch) and the debugger
// (pypto.debug.debug_kernel of a kernel with barriers) both drive this stepper, so a launch
// and a debug session see the same schedule, the same values and the same race.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pypto/kernel/lower_lanes.h"

namespace pypto::kernel {

// A data race: two lanes of one block touch one element, at least one writes, and no barrier
// covering both lanes lies between the accesses. `second_*` is the access that found it.
struct WarpRace {
  std::string kernel, tensor;  // tensor: the kernel parameter
  int arg = -1;                // its parameter index
  int64_t block = 0, element = 0, byte_offset = 0;
  int64_t first_lane = 0, second_lane = 0;
  bool first_write = false, second_write = false;
  int first_line = 0, second_line = 0;
  int64_t step = 0;  // the step of the second access
  Span span;         // the second access's source line
  std::string message, fix;
  PyptoError error() const { return PyptoError(ErrorKind::kRuntime, span, message, fix); }
};

// One lane's part in a step: the element it read or wrote (arg -1: none) and the value.
struct WarpLaneEffect {
  int64_t lane = 0;  // lane within the block
  int arg = -1;
  int64_t element = 0;
  double value = 0;
};

// What a step ran: lane-program op `op` for the active lanes of warp `warp` of block `block`.
struct WarpStep {
  int64_t index = -1;  // the step number (-1: the kernel had finished, nothing ran)
  int64_t block = 0, warp = 0, first_lane = 0, lanes = 0;
  int op = -1;
  std::string what;  // LOAD STORE FMA MAD IF BARRIER BARRIER_BLOCK, or the operator (ADD ...)
  int line = 0;
  std::vector<WarpLaneEffect> effects;  // the active lanes (recorded when asked for)
  bool raced = false;                   // the step stopped at a data race (WarpStepper::race)
};

// Steps are the ops a user sees: loads, stores, fma / mad, arithmetic on loaded values, `if`
// and barriers. Constants, parameters, ids and address arithmetic run with the next step
// (they only set the lanes' values).
class WarpStepper {
 public:
  WarpStepper(std::shared_ptr<const LaneProgram> program, std::vector<LaunchArg> args, LaunchShape shape,
              bool record_effects);
  ~WarpStepper();
  WarpStepper(const WarpStepper&) = delete;
  WarpStepper& operator=(const WarpStepper&) = delete;

  bool finished() const;  // every block ran to its end
  bool stopped() const;   // a data race stopped the kernel (race() holds it)
  bool done() const { return finished() || stopped(); }
  int64_t steps() const;  // steps run so far: the next step's index
  WarpStep next() const;  // what the next step runs (effects empty); index -1 when done()
  // Runs the next step. A data race stops the stepper at the racing lane (that lane's access
  // has happened, as in a launch); stepping a stopped kernel is an error naming the race.
  WarpStep step();
  const std::optional<WarpRace>& race() const;
  const LaneProgram& program() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pypto::kernel
