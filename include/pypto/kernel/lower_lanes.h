// Lowering a lane program for one launch into a PTO instruction stream (isa::Kernel). All
// scalar arguments are known at launch, so the lowering partially evaluates the program:
// a chunk of consecutive blocks becomes one tile row (lane l of the chunk is column l),
// get_global_id() is the chunk base plus the column, `if i < n` becomes the valid width.
// Chunks whose code repeats with advancing tile offsets become one loop over a base
// register (the grid is unrolled only on request: the debugger steps unrolled code), and
// InsertSync adds the pipe flags, as for compiled kernels.
#pragma once
#include <string>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/kernel/lane_program.h"
#include "pypto/engines/tensor.h"

namespace pypto::kernel {

// What one emitted instruction means in lane terms (debugger, timeline, profile).
struct InstrNote {
  std::string cls;               // LOAD, ADD, MUL, FMA, MAD, STORE, MMA, MOV, FILL ...
  std::string stage, after;      // pipeline stage of the instruction and the stage it follows
  int64_t iteration = 0;         // block (pipeline iteration) the instruction belongs to
  int64_t first_lane = 0, lanes = 0;  // global lanes covered
  int tensor_arg = -1;           // launch argument read or written (LOAD / STORE)
  int64_t tensor_offset = 0;     // element offset of the first lane
  int tile = -1;                 // the tile written (or read, for STORE)
  int64_t repeat = 1;            // times it runs (a loop body: the loop's iterations)
};

struct LoweredKernel {
  isa::Kernel kernel;
  std::vector<engines::HostArg> args;   // views of the launch's buffers, in parameter order
  std::vector<InstrNote> notes;         // one per kernel.code entry (cls SYNC / LOOP / SCALAR for
                                        // InsertSync's flags and the loop's scalar code)
  // The user-visible instructions: pcs of the tile instructions the lane program became, in
  // order (no set_flag / wait_flag, no loop control). Debugger indices, breakpoints and the
  // timeline count these.
  std::vector<int> lane_pcs;
  int64_t chunk_lanes = 0;              // lanes per tile row
  int64_t total_lanes = 0;              // grid x block
  bool pipelined = false;
  // Loop-lowered lane kernels take two trailing scalar parameters chunk_lo, chunk_hi (args
  // default 0, total_lanes): the code runs the chunks whose lane base b has lo <= b < hi.
  bool chunk_range = false;
  // Chunks touch disjoint elements of every written buffer (each buffer is accessed at one
  // lane-relative offset), so chunk ranges may run on different cores in any order.
  bool independent_chunks = false;
};

// True when the program can be lowered to tiles (no barriers: those run on the warp simulator).
bool lowers_to_tiles(const LaneProgram& program);
// Lowers `program` for `args` and `shape`. `chunk_blocks` = blocks per tile row (0: as many
// as fit the vector buffer, up to 16K lanes). `unroll`: straight-line code, one copy per
// chunk (the debugger's form); otherwise repeating chunks become a loop. User errors name
// the kernel's source line.
LoweredKernel lower_lanes(const LaneProgram& program, const std::vector<LaunchArg>& args, LaunchShape shape,
                          const std::string& platform, int64_t chunk_blocks = 0, bool unroll = false);

// Runs a lowered kernel on `engine` and waits for it: a launch on the launch stream
// (src/kernel/launch_queue.cpp), ordered after the launches queued before it. A kernel with
// independent chunks becomes up to `cores` SPMD block tasks of the stream's task pool (0: one
// per host CPU, at most the chip's vector cores) that take contiguous chunk ranges from a
// shared counter; results equal the in-order run, and an error is the first range's. Returns
// the number of blocks.
int run_lowered(const LoweredKernel& lowered, const std::string& platform, const std::string& engine, int cores = 0);

// Runs a lane program lane by lane with warps of 32 lanes scheduled independently (the
// sim engine's warp model) and checks every shared access: two lanes touching the same
// element, one of them writing, with no barrier covering both in between, is a data race
// reported as a user error naming the lanes.
void run_warps(const LaneProgram& program, const std::vector<LaunchArg>& args, LaunchShape shape);

}  // namespace pypto::kernel
