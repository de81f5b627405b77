// The task scheduler: kernel calls become tasks that run on a pool of host worker threads.
// A task waits for earlier tasks whose tensor regions overlap its own (read-after-write,
// write-after-write, write-after-read) and for its explicit dependencies; each task runs on
// a virtual core of its type (AIC, AIV, or a whole cluster for mixed tasks) of the chip.
#pragma once
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "pypto/engines/core_runner.h"
#include "pypto/isa/chip.h"
#include "pypto/isa/program.h"
#include "pypto/runtime/footprint.h"
#include "pypto/engines/tensor.h"
#include "pypto/runtime/trace.h"

namespace pypto::runtime {

enum class CoreKind : uint8_t { AIC, AIV, Mixed };
const char* core_kind_name(CoreKind k);
CoreKind core_kind_of(const isa::Kernel& kernel);

// One kernel call to run.
struct TaskSpec {
  const isa::Kernel* kernel = nullptr;           // must outlive the pool
  const KernelFootprint* footprint = nullptr;    // null: whole tensors by parameter direction
  std::vector<engines::HostArg> args;
  std::vector<size_t> deps;                      // explicit: ids of earlier tasks
  std::vector<std::shared_ptr<void>> keep_alive; // released when the task finishes
  const Span* span = nullptr;                    // the call in the user's program
  int block_idx = 0, block_num = 1;              // SPMD block
  bool manual = false;  // pl.manual_scope: waits only for `deps`; later tasks still order after it
  // A mixed task (kernel->core == Group): the kernel of each of kernel->parts, in order.
  std::vector<const isa::Kernel*> parts;
  // RunConfig(enable_dump_args=): the argument positions whose tensors the pool's dump hook
  // writes before and after the task runs.
  std::vector<int> dump;
  // no_dep_args=[t]: argument positions whose tensors get no dependency lookup/registration.
  std::vector<int64_t> no_dep_args;
  // predicate=(t[i] OP v): evaluated when the task is dispatched (its deps have finished);
  // false retires the task without running it (its dependents still proceed).
  std::function<bool()> predicate;

  // Exchanges the contents of the two specs (their buffers travel with them).
  void swap(TaskSpec& other) noexcept;
  // Empties the spec for the next task, keeping its buffers: `args` keeps its elements (the
  // next call overwrites them in place, see HostArg::set_tensor), the other lists are cleared,
  // what `keep_alive` and `predicate` hold is released.
  void recycle();
};

// Called by a worker just before (after = false) and just after (after = true) task `id`
// runs, for the task's `dump` argument positions (the args dump of RunConfig(enable_dump_args=)).
using DumpHook = std::function<void(size_t id, const isa::Kernel& kernel, const std::vector<engines::HostArg>& args,
                                    const std::vector<int>& which, bool after)>;

// A finished task as the swimlane shows it.
struct TaskRecord {
  std::string kernel;
  CoreKind kind = CoreKind::AIV;
  int vcore = -1;              // AIC/AIV index, or the cluster of a mixed task
  int worker = -1;             // host thread
  int block_idx = 0, block_num = 1;
  double start_us = 0, end_us = 0;
  std::vector<size_t> deps;    // every task it waited for (data and explicit)
  double cycles = -1;          // modelled cycles of the task (sim engine), else -1
  std::array<double, 7> busy{};  // sim engine: modelled busy cycles per pipe (isa::Pipe order); native: 0
  bool retired = false;        // its predicate was false: it did not run
};

struct PoolStats {
  size_t tasks = 0;
  size_t max_in_flight = 0;    // most submitted-but-unfinished tasks at once (<= ring size)
  size_t ring_waits = 0;       // times submission blocked on a full ring
};

class TaskPool {
 public:
  // Starts `num_workers` workers (0 = one per host CPU), each with its own core of `chip`
  // made by `factory` (default: a sim core) when it takes its first task. At most
  // `ring_size` tasks are in flight (0 = unbounded); submit blocks while the ring is full.
  TaskPool(const isa::ChipSpec& chip, int num_workers, engines::CoreFactory factory = {}, size_t ring_size = 0,
           bool record = false);
  // Cancels tasks not yet started and joins the workers.
  ~TaskPool();
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // Starts a new run on the same worker threads (a ChipWorker keeps one pool across runs):
  // forgets the previous run's tasks, statistics, error and trace. Every task of the previous
  // run must have finished. Workers keep their cores while `runner_key` stays the same and
  // make new ones with `factory` when it changes (another program, another engine).
  void reset(engines::CoreFactory factory, uint64_t runner_key, size_t ring_size, bool record);
  // After an error in the host code: skips the tasks not yet started and waits until every
  // submitted task has finished, so the caller may release what the tasks use.
  void cancel();
  // True once a deadlock report stopped the workers; the pool cannot run again.
  bool stopped();

  // Queues a task; returns its id (0, 1, ... in submission order). Blocks while the ring is
  // full; a deadlock found while blocked is a runtime error naming the tasks involved.
  size_t submit(TaskSpec spec);
  // Like submit, without waking anyone yet: the task is computed outside the pool's lock
  // and enters the pool with the other staged ones under one lock hold, once kStageBatch
  // are staged or at flush / wait_all (a chain of tiny tasks then costs one lock round per
  // batch, not per task). Only the submitting thread stages, flushes and submits.
  // Takes what `spec` holds and leaves it recycled (TaskSpec::recycle) with the buffers of
  // an earlier task: a host loop that fills one TaskSpec again and again allocates nothing
  // per task once the pool has run a program of its size (the pool's task slots keep their
  // buffers from run to run).
  size_t stage(TaskSpec& spec);
  // Hands the staged tasks to the pool (in order) and wakes the workers.
  void flush();
  // Blocks until every submitted task has finished; rethrows the first task error; reports
  // a deadlock (tasks that can never run) instead of hanging.
  void wait_all();
  // True once a task has failed (later tasks are skipped).
  bool failed();  // lock-free (the host checks it before every submission)
  int num_workers() const { return static_cast<int>(workers_.size()); }
  // Records every task's modelled timeline into `trace` (worker i is virtual core i); call
  // before the first submit.
  // `record_events`: keep every instruction (for a trace file), not just the totals.
  void set_trace(TraceRecorder* trace, bool record_events) {
    trace_ = trace;
    record_events_ = record_events;
  }
  // Writes the `dump` arguments of each task before and after it runs (null: none); call
  // before the first submit.
  void set_dump_hook(DumpHook hook) { dump_hook_ = std::move(hook); }
  // Tasks not yet started are skipped once `*flag` is set (the run was interrupted).
  void set_interrupt(const std::atomic<bool>* flag) { interrupt_ = flag; }
  size_t num_tasks();
  // Records of finished tasks (record = true), in id order; call after wait_all.
  std::vector<TaskRecord> records();
  PoolStats stats();
  // The start of the run's clock (records' start_us / end_us count from it), in microseconds
  // of the steady clock (CLOCK_MONOTONIC: one clock for every process of the machine).
  double epoch_us() const {
    return std::chrono::duration<double, std::micro>(t0_.time_since_epoch()).count();
  }

 private:
  struct Region {
    const uint8_t *blo, *bhi;  // byte hull
    const void* base;          // identity of the index space: base, element size, strides
    int64_t elem;
    int64_t strides[kMaxBoxDims];
    IndexBox box;
    bool write;
    bool exact;                // box and strides are valid (else only the hull)
  };
  struct Task {
    const isa::Kernel* kernel = nullptr;
    std::vector<const isa::Kernel*> parts;  // mixed tasks
    std::vector<engines::HostArg> args;
    std::vector<std::shared_ptr<void>> keep_alive;
    std::vector<size_t> dependents;
    std::vector<size_t> deps;  // kept for records and deadlock reports
    const Span* span = nullptr;
    int pending = 0;
    bool done = false;
    bool started = false;
    CoreKind kind = CoreKind::AIV;
    bool manual = false;
    bool retired = false;
    std::function<bool()> predicate;
    int vcore = -1, worker = -1;
    int block_idx = 0, block_num = 1;
    double start_us = 0, end_us = 0;
    double cycles = -1;
    std::array<double, 7> busy{};
    std::vector<int> dump;
    // Resets the task for the next run, keeping its buffers (see TaskStore::clear).
    void recycle();
  };
  // Every task of the run, in chunks of kChunk (a deque of Task holds one per node: a
  // malloc and a free per task); references stay valid while the run grows. A task is
  // written into the next slot (`next`) and then counted (`commit`). clear() empties the
  // tasks (releasing the tensors they keep alive) and keeps the first kKeepChunks chunks
  // with their slots' buffers (argument lists, dependency lists) for the next run: a run of
  // the size of the previous one then allocates nothing per task.
  class TaskStore {
   public:
    static constexpr size_t kChunk = 256;
    static constexpr size_t kKeepChunks = 64;  // 16384 task slots stay allocated between runs
    size_t size() const { return size_; }
    Task& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
    const Task& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
    Task& next() {
      if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<Task[]>(kChunk));
      return (*this)[size_];
    }
    void commit() { ++size_; }
    void clear() {
      const size_t kept = std::min(size_, kKeepChunks * kChunk);
      for (size_t i = 0; i < kept; ++i) (*this)[i].recycle();
      if (chunks_.size() > kKeepChunks) chunks_.resize(kKeepChunks);
      size_ = 0;
    }

   private:
    std::vector<std::unique_ptr<Task[]>> chunks_;
    size_t size_ = 0;
  };
  // Regions of one tensor view's byte range, with the unfinished tasks touching them.
  struct Bucket {
    const uint8_t *lo, *hi;
    std::vector<std::pair<size_t, Region>> entries;  // (task, region), oldest first
    size_t writers = 0;                               // unfinished writing entries
    size_t prune_at = 64;
  };
  struct Staged {
    TaskSpec spec;
    size_t region_begin, region_end, view_begin, view_end;  // in staged_regions_ / staged_views_
  };
  void regions_of(const TaskSpec& spec, std::vector<Region>& out) const;
  // Enters one task (lock held; waits on a full ring); returns its id. The task takes what
  // `spec` holds; `spec` gets the buffers the task's slot kept from an earlier run.
  size_t enter(TaskSpec& spec, const Region* regions, size_t num_regions,
               const std::pair<const uint8_t*, const uint8_t*>* views, size_t num_views, std::unique_lock<std::mutex>& lk);
  void drop_staged();
  void flush_staged(bool wake_workers);  // flush(), optionally without waking workers
  // How many sleeping workers the ready tasks need (lock held), and waking them (after
  // unlocking: a worker woken under the lock would block on it at once).
  size_t wake_count() const;
  void wake(size_t n);
  void wake_ready(std::unique_lock<std::mutex>& lk);  // both, the lock held on entry and on return
  // A worker's lock after running a task (waits out a flush without sleeping).
  void lock_after_task(std::unique_lock<std::mutex>& lk);
  void set_error(std::exception_ptr err);  // the first error wins (lock held)
  void worker_loop(int worker);
  struct ThreadCores;  // a thread's virtual cores (task_pool.cpp)
  std::unique_ptr<ThreadCores> host_cores_;  // the waiting thread's, when it runs tasks (wait_all)
  // Runs ready task `id`, just taken from the ready queue, on `cores` as worker `worker`
  // (lock held on entry and on return; released while the kernel runs).
  void run_task(size_t id, int worker, ThreadCores& cores, std::unique_lock<std::mutex>& lk);
  // Tasks whose kernel deferred its completion (pld.system.defer_wait): polled by one thread,
  // started with the first such task; a task finishes when its conditions hold.
  void deferred_loop();
  // Marks task `id` done and hands its dependents whose last dependency it was to the ready
  // queue; returns how many. Call with mu_ held.
  size_t finish_locked(size_t id);
  int acquire_vcore(CoreKind kind);
  void release_vcore(CoreKind kind, int id);
  [[noreturn]] void report_deadlock(std::unique_lock<std::mutex>& lk, const std::string& where);
  bool stalled() const;
  std::string describe(size_t id) const;
  double now_us() const;

  isa::ChipSpec chip_;
  engines::CoreFactory factory_;
  uint64_t runner_key_ = 0;        // identifies factory_: workers remake their core when it changes
  size_t ring_size_;
  bool record_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  TaskStore tasks_;                // every task of the run; references stay valid
  std::vector<Bucket> buckets_;
  std::deque<size_t> ready_;
  std::vector<uint8_t> aic_busy_, aiv_busy_;
  static constexpr size_t kWakeBatch = 16;
  size_t finished_ = 0;
  size_t ring_resume_ = SIZE_MAX;  // the host waits on a full ring until this many are in flight
  int running_ = 0;                // workers executing a task now
  // Ready tasks, readable without the lock: an idle worker polls it for a few microseconds
  // before it sleeps (a futex wake-up costs more than a tiny task). One worker polls at a time.
  std::atomic<size_t> ready_hint_{0};
  std::atomic<bool> polling_{false};
  alignas(64) std::atomic<bool> flushing_{false};  // the submitting thread enters a batch
  std::atomic<size_t> finished_hint_{0};           // finished_, readable without the lock
  static constexpr long kWaitSpinUs = 50;          // wait_all spins this long before it sleeps
  static constexpr long kFlushSpinUs = 100;        // a worker waits out a batch entry this long at most
  static constexpr int kPollRounds = 4000;
  bool stop_ = false;
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};  // error_ is set
  // Staged tasks (the submitting thread's, not under mu_) and the id the next one gets.
  static constexpr size_t kStageBatch = 32;
  std::vector<Staged> staged_;     // the first num_staged_ are staged; the rest keep buffers
  size_t num_staged_ = 0;
  std::vector<Region> staged_regions_;
  std::vector<std::pair<const uint8_t*, const uint8_t*>> staged_views_;
  size_t next_id_ = 0;
  PoolStats stats_;
  std::vector<Region> scratch_regions_;
  std::chrono::steady_clock::time_point t0_;
  std::vector<std::thread> workers_;
  std::vector<std::pair<size_t, std::function<bool(bool)>>> deferred_;  // (task, poll): the core is free
  std::thread deferred_thread_;
  std::condition_variable deferred_cv_;
  int num_workers_ = 0;
  TraceRecorder* trace_ = nullptr;
  const std::atomic<bool>* interrupt_ = nullptr;
  bool record_events_ = false;
  DumpHook dump_hook_;
};

}  // namespace pypto::runtime
