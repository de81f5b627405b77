// The instruction-level @pto.kernel API in C++: the lane program the Python front end
// parses a kernel into (a flat list of lane operations on numbered values), device buffers
// (pto.alloc_tensor) and the launch shape. Lowering, the warp simulator, the launch queue,
// the timeline model and the debugger all read these.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "pypto/base/error.h"

namespace pypto::kernel {

enum class LaneOpKind : uint8_t {
  kConst,         // dst = value
  kParam,         // dst = kernel parameter #args[0] (tensor or scalar)
  kGlobalId,      // dst = block_id * block + lane  (pto.get_global_id())
  kBlockId,       // dst = block id                 (pto.get_block_id())
  kLaneId,        // dst = lane within the block    (pto.get_lane_id())
  kBinary,        // dst = args[0] <name> args[1]; name: + - * / // % min max < <= > >= == !=
  kLoad,          // dst = *args[0]                 (pto.load(ptr))
  kStore,         // *args[0] = args[1]             (pto.store(ptr, value))
  kFma,           // *args[0] = args[1] + args[2] + args[3]   (the seed's pto.fma)
  kMad,           // *args[0] = args[1] * args[2] + args[3]   (pto.mad)
  kIf,            // lanes where args[0] is true run until the matching kEndIf
  kEndIf,
  kBarrier,       // orders the 32 lanes of one warp
  kBarrierBlock,  // orders every lane of the block
  kAllocLocal,    // dst = on-chip buffer of args[0] fp32 elements (pto.alloc_local)
  kAsyncLoad,     // local args[0] <- args[2] bytes at pointer args[1]
  kWaitAll,       // waits for this iteration's async loads
  kMma,           // local args[0] += local args[1] (m x k) @ local args[2] (k x n); args[3..5] = m, n, k
  kStoreLocal,    // args[2] bytes of local args[1] -> pointer args[0]
  kStageBegin,    // pipeline stage `name`; `after` names the stage it follows
  kStageEnd,
  kPipelineRun,   // pl.run(): the declared stages run over the launch's blocks
};

struct LaneOp {
  LaneOpKind kind = LaneOpKind::kConst;
  int dst = -1;
  std::vector<int> args;
  double value = 0.0;          // kConst
  bool is_float = false;       // kConst
  std::string name, after;     // kBinary operator; kStageBegin name / after
  Span span;
};

struct LaneProgram {
  std::string name;
  std::vector<std::string> params;
  std::vector<LaneOp> ops;
  int num_values = 0;
  bool uses(LaneOpKind k) const {
    for (const LaneOp& op : ops)
      if (op.kind == k) return true;
    return false;
  }
};

// Memory from pto.alloc_tensor (host memory: the virtual device shares the host's): untyped bytes (viewed as fp32 by the lane ops). Launches
// hold a reference for as long as they run, so dropping the Python object never frees
// memory a kernel still uses; `free()` (pto.Tensor's with-exit) waits for those kernels.
class DeviceBuffer {
 public:
  DeviceBuffer(int64_t nbytes, std::string label);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  int64_t nbytes() const { return nbytes_; }
  uint8_t* data(const char* use);  // a freed buffer is a user error naming `use`
  bool freed() const { return freed_; }
  const std::string& label() const { return label_; }
  void set_label(std::string l) { label_ = std::move(l); }
  void retain_for_launch();        // a queued launch uses this buffer
  void release_from_launch();
  void wait_idle();                // until no queued or running launch uses it
  bool wait_idle_for(int ms);      // wait_idle for at most `ms` milliseconds; true: idle
  int pending() const { return pending_.load(); }
  void free();                     // wait_idle, then release the memory

 private:
  // Zeroed host memory from calloc: large blocks are fresh zero pages, so allocating costs no
  // pass over the memory (pages are touched by the first copy or kernel writing them).
  uint8_t* bytes_ = nullptr;
  int64_t nbytes_ = 0;
  std::string label_;
  bool freed_ = false;
  std::atomic<int> pending_{0};
  std::mutex mu_;
  std::condition_variable idle_;
};

// One launch argument: a device buffer or a scalar.
struct LaunchArg {
  std::shared_ptr<DeviceBuffer> buffer;  // null for a scalar
  bool is_float = false;
  double f = 0.0;
  int64_t i = 0;
};

struct LaunchShape {
  int64_t grid = 1;   // blocks (grid x*y*z)
  int64_t block = 1;  // lanes per block (block x*y*z)
};

// Lanes one launch may have (grid x block): 2**32, far beyond any tensor a lane can index
// here; a larger launch would run for hours computing nothing.
constexpr int64_t kMaxLaunchLanes = int64_t{1} << 32;
// Positive sizes and at most kMaxLaunchLanes lanes, else a user error naming the launch.
void check_launch_shape(const LaneProgram& program, LaunchShape shape);

}  // namespace pypto::kernel
