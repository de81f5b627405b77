// The interface every engine implements: one virtual core that runs a kernel on host
// arguments. The task pool (pypto/runtime/task_pool.h) owns one runner per worker.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "pypto/engines/tensor.h"
#include "pypto/isa/program.h"

namespace pypto::engines {

// The executor of tasks on one worker: a virtual core of some engine.
class CoreRunner {
 public:
  virtual ~CoreRunner() = default;
  virtual void run(const isa::Kernel& kernel, const std::vector<HostArg>& args) = 0;
};
using CoreFactory = std::function<std::unique_ptr<CoreRunner>()>;

}  // namespace pypto::engines
