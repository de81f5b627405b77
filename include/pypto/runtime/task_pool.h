// The task scheduler: kernel calls become tasks that run on a pool of worker threads (one
// virtual-core state each). A task waits for earlier tasks it conflicts with on global
// memory (read-after-write, write-after-write, write-after-read); others run concurrently.
#pragma once
#include <condition_variable>
#include <deque>
#include <exception>
#include <map>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/runtime/tensor.h"
#include "pypto/runtime/trace.h"

namespace pypto::runtime {

// The executor of tasks on one worker: a virtual core of some engine.
class CoreRunner {
 public:
  virtual ~CoreRunner() = default;
  virtual void run(const isa::Kernel& kernel, const std::vector<HostArg>& args) = 0;
};
using CoreFactory = std::function<std::unique_ptr<CoreRunner>()>;

class TaskPool {
 public:
  // Starts `num_workers` workers (0 = one per host CPU), each with its own core of `chip`
  // made by `factory` (default: a sim core).
  TaskPool(const isa::ChipSpec& chip, int num_workers, CoreFactory factory = {});
  // Cancels tasks not yet started and joins the workers.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Queues a call of `kernel` (which must outlive the pool). The tensors it reads and writes
  // follow from the kernel's parameter directions.
  void submit(const isa::Kernel& kernel, std::vector<HostArg> args);
  // Blocks until every submitted task has finished; rethrows the first task error.
  void wait_all();
  // True once a task has failed (later tasks are skipped).
  bool failed();
  int num_workers() const { return static_cast<int>(workers_.size()); }
  // Records every task's modelled timeline into `trace` (worker i is virtual core i); call
  // before the first submit.
  // `record_events`: keep every instruction (for a trace file), not just the totals.
  void set_trace(TraceRecorder* trace, bool record_events) {
    trace_ = trace;
    record_events_ = record_events;
  }

 private:
  struct Access {
    const uint8_t* lo;
    const uint8_t* hi;
    bool write;
  };
  struct Task {
    const isa::Kernel* kernel;
    std::vector<HostArg> args;
    std::vector<Access> accesses;
    int pending = 0;               // unfinished tasks this one waits for
    std::vector<size_t> dependents;
    bool done = false;
  };
  void worker_loop(int worker);

  isa::ChipSpec chip_;
  CoreFactory factory_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Task> tasks_;         // every task of the run; references stay valid
  std::vector<size_t> active_;     // tasks not known to be finished
  std::deque<size_t> ready_;
  std::map<std::pair<const uint8_t*, const uint8_t*>, int> write_ranges_;  // of unfinished tasks
  static constexpr size_t kWakeBatch = 16;
  size_t finished_ = 0;
  int running_ = 0;                // workers executing a task now
  bool stop_ = false;
  std::exception_ptr error_;
  std::vector<std::thread> workers_;
  TraceRecorder* trace_ = nullptr;
  bool record_events_ = false;
};

}  // namespace pypto::runtime
