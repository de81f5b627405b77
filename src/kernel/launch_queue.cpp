// The launch stream and device buffers. Launches become SPMD block tasks of one
// runtime::TaskPool; every task of a launch depends on every task of the launch before it
// (stream order). The pool's workers run the tasks on a LaneCore each: the worker's virtual
// core, which keeps a sim core and the native core of the kernel it ran last (its buffers and
// compiled code) across tasks. Buffers count the launches using them so that freeing waits
// for those launches and dropping a reference never frees early.
#include "pypto/kernel/launch_queue.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <thread>

#include <unistd.h>

#include "pypto/engines/cancel.h"
#include "pypto/isa/validate.h"
#include "pypto/engines/native_engine.h"
#include "pypto/runtime/runtime.h"
#include "pypto/engines/sim_engine.h"
#include "pypto/runtime/task_pool.h"

namespace pypto::kernel {

DeviceBuffer::DeviceBuffer(int64_t nbytes, std::string label) : label_(std::move(label)) {
  if (nbytes <= 0 || nbytes % 4 != 0)
    fail(ErrorKind::kValue, {}, "pto.alloc_tensor(" + std::to_string(nbytes) + "): the size must be a positive multiple of 4 bytes",
         "pass n * 4 for n fp32 elements");
  // A size beyond the machine's memory is refused before calloc: under a sanitizer's allocator
  // (CI's ASan job) a huge request aborts the process instead of returning null.
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const double memory = pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
  if (memory > 0 && static_cast<double>(nbytes) > memory) {
    char have[64];
    std::snprintf(have, sizeof have, "%.1f GiB", memory / (1024.0 * 1024.0 * 1024.0));
    fail(ErrorKind::kCapacity, {},
         "pto.alloc_tensor(" + std::to_string(nbytes) + "): out of host memory (the machine has " + have + ")",
         "allocate a smaller tensor or free tensors you no longer need");
  }
  bytes_ = static_cast<uint8_t*>(std::calloc(static_cast<size_t>(nbytes), 1));
  if (!bytes_)
    fail(ErrorKind::kCapacity, {}, "pto.alloc_tensor(" + std::to_string(nbytes) + "): out of host memory",
         "allocate a smaller tensor or free tensors you no longer need");
  nbytes_ = nbytes;
}

DeviceBuffer::~DeviceBuffer() { std::free(bytes_); }

uint8_t* DeviceBuffer::data(const char* use) {
  if (freed_)
    fail(ErrorKind::kRuntime, {}, std::string(use) + " uses tensor '" + label_ + "' after it was freed",
         "keep the tensor alive (do not use it after its `with pto.Tensor(...)` block or .free())");
  return bytes_;
}

void DeviceBuffer::retain_for_launch() { ++pending_; }

void DeviceBuffer::release_from_launch() {
  std::lock_guard<std::mutex> lock(mu_);
  if (--pending_ == 0) idle_.notify_all();
}

void DeviceBuffer::wait_idle() {
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [&] { return pending_.load() == 0; });
}

bool DeviceBuffer::wait_idle_for(int ms) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, std::chrono::milliseconds(ms), [&] { return pending_.load() == 0; });
}

void DeviceBuffer::free() {
  wait_idle();
  freed_ = true;
  std::free(bytes_);
  bytes_ = nullptr;
  nbytes_ = 0;
}

namespace {

class LaneCore;

// What the pool sees of a lane task: a kernel naming the launch (for the pool's reports)
// whose body runs the task on the worker's LaneCore. Kernels on the stream's pool are all
// LaneTasks (the pool is the stream's own).
struct LaneTask : isa::Kernel {
  std::function<void(LaneCore&)> body;
};

// A worker's virtual core for lane tasks.
class LaneCore : public engines::CoreRunner {
 public:
  explicit LaneCore(const isa::ChipSpec& chip) : chip_(chip) {}
  void run(const isa::Kernel& kernel, const std::vector<engines::HostArg>&) override {
    static_cast<const LaneTask&>(kernel).body(*this);
  }
  // Runs `kernel` on `module` (native) or on the sim core (module null).
  void run_kernel(const isa::Kernel& kernel, const std::shared_ptr<engines::NativeModule>& module,
                  const std::vector<engines::HostArg>& args) {
    if (!module) {
      if (!sim_) sim_ = std::make_unique<engines::SimEngine>(chip_);
      sim_->run(kernel, args);
      return;
    }
    if (!native_ || native_kernel_ != &kernel || native_module_ != module) {
      native_.reset();
      native_ = std::make_unique<engines::NativeCore>(chip_, module, std::vector<const isa::Kernel*>{&kernel});
      native_kernel_ = &kernel;
      native_module_ = module;
    }
    native_->run(kernel, args);
  }
  // Drops the native core (its kernel's launch is over).
  void forget(const isa::Kernel* kernel) {
    if (native_kernel_ == kernel) native_.reset(), native_kernel_ = nullptr, native_module_.reset();
  }

 private:
  isa::ChipSpec chip_;
  std::unique_ptr<engines::SimEngine> sim_;
  std::unique_ptr<engines::NativeCore> native_;
  const isa::Kernel* native_kernel_ = nullptr;
  std::shared_ptr<engines::NativeModule> native_module_;
};

// One launch: shared by its tasks (their keep_alive); the last task to finish destroys it,
// which reports the launch's error and then releases its buffers (so a wait for a buffer
// sees the error of the launch that used it).
struct LaunchState {
  std::string name;
  std::vector<std::shared_ptr<DeviceBuffer>> holds;
  std::shared_ptr<const LoweredKernel> lowered;
  std::string engine;
  isa::ChipSpec chip;
  std::once_flag module_once;
  std::shared_ptr<engines::NativeModule> module;  // engine native: compiled by the first block
  std::exception_ptr module_error;
  std::mutex mu;
  int error_block = -1;
  std::exception_ptr error;  // the failing block with the lowest index (what an in-order run raises first)
  std::function<void(std::exception_ptr)> on_done;
  void fail(int block, std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    if (!error || block < error_block) error = e, error_block = block;
  }
  // The native module of the kernel, compiled once per launch by whichever block asks first.
  const std::shared_ptr<engines::NativeModule>& native_module() {
    std::call_once(module_once, [&] {
      try {
        module = engines::native_module_for({&lowered->kernel}, chip);
      } catch (...) {
        module_error = std::current_exception();
      }
    });
    if (module_error) std::rethrow_exception(module_error);
    return module;
  }
  bool retained = false;  // the holds count this launch (Stream::submit)
  ~LaunchState() {
    if (on_done) on_done(error);
    if (retained)
      for (auto& b : holds) b->release_from_launch();
  }
};

class Stream {
 public:
  static Stream& get() {
    static Stream* s = new Stream();  // never destroyed: the pool's threads may outlive static teardown
    return *s;
  }

  // Submits the tasks of `state` (one per body; body i is SPMD block i of the launch) after
  // every task of the previous launch.
  // `report` (non-null): the launch's error goes to it instead of the stream's pending error.
  void submit(const std::shared_ptr<LaunchState>& state, const std::string& platform,
              std::vector<std::function<void(LaneCore&)>> bodies, FunctionType core,
              std::function<void(std::exception_ptr)> report = nullptr) {
    std::lock_guard<std::mutex> lock(submit_mu_);
    // From here the launch counts as queued; its state's destructor undoes this (also when a
    // submission below fails).
    for (auto& b : state->holds) b->retain_for_launch();
    state->retained = true;
    {
      std::lock_guard<std::mutex> e(err_mu_);
      ++in_flight_;
    }
    state->on_done = [this, report](std::exception_ptr err) {
      {
        std::lock_guard<std::mutex> e(err_mu_);
        if (err && !error_ && !report) error_ = err;
        if (--in_flight_ == 0) idle_cv_.notify_all();
      }
      if (report) report(err);
    };
    pool_for(platform);
    std::vector<size_t> ids;
    const int n = static_cast<int>(bodies.size());
    for (int i = 0; i < n; ++i) {
      auto task = std::make_shared<LaneTask>();
      task->name = state->name;
      task->core = core == FunctionType::AIC ? FunctionType::AIC : FunctionType::AIV;
      task->body = std::move(bodies[static_cast<size_t>(i)]);
      tasks_.push_back(task);
      runtime::TaskSpec spec;
      spec.kernel = task.get();
      spec.deps = previous_;
      spec.keep_alive.push_back(state);
      spec.block_idx = i;
      spec.block_num = n;
      ids.push_back(pool_->submit(std::move(spec)));
    }
    previous_ = std::move(ids);
    last_blocks_ = n;
  }
  int last_blocks() {
    std::lock_guard<std::mutex> lock(submit_mu_);
    return last_blocks_;
  }
  int workers() {
    std::lock_guard<std::mutex> lock(submit_mu_);
    return pool_ ? pool_->num_workers() : 0;
  }

  void wait() {
    std::lock_guard<std::mutex> lock(submit_mu_);
    drain();
  }
  std::exception_ptr take_error() {
    std::lock_guard<std::mutex> e(err_mu_);
    std::exception_ptr err = error_;
    error_ = nullptr;
    return err;
  }
  int in_flight() {
    std::lock_guard<std::mutex> e(err_mu_);
    return in_flight_;
  }
  // Whether a submission now would first wait for the queued launches (a platform change,
  // or a task list at its bound).
  bool would_wait(const std::string& platform) {
    std::lock_guard<std::mutex> lock(submit_mu_);
    const std::optional<isa::ChipSpec> chip = isa::chip_for_platform(platform);
    return pool_ && (!chip || chip_.platform != chip->platform || tasks_.size() >= kMaxTasks);
  }
  bool wait_for(int ms) {
    std::unique_lock<std::mutex> e(err_mu_);
    return idle_cv_.wait_for(e, std::chrono::milliseconds(ms), [&] { return in_flight_ == 0; });
  }
  // Sets the cancel flag the pool's workers install around each task (the kernels check it),
  // waits for every task, clears it; drops the cancellations' errors, keeps another one.
  void cancel() {
    std::lock_guard<std::mutex> lock(submit_mu_);
    cancel_.store(true);
    drain();
    cancel_.store(false);
    std::lock_guard<std::mutex> e(err_mu_);
    if (error_) {
      try {
        std::rethrow_exception(error_);
      } catch (const engines::RunCancelled&) {
        error_ = nullptr;
      } catch (...) {
      }
    }
  }

 private:
  // Waits for every task and starts a new run of the pool (its task list starts empty).
  void drain() {
    if (!pool_) return;
    pool_->wait_all();  // task bodies catch their errors: the pool itself never fails
    pool_->reset(factory(), 0, 0, false);  // the same factory: workers keep their LaneCores
    pool_->set_interrupt(&cancel_);        // reset clears it
    tasks_.clear();
    previous_.clear();
  }
  engines::CoreFactory factory() const {
    const isa::ChipSpec chip = chip_;
    return [chip] { return std::make_unique<LaneCore>(chip); };
  }
  void pool_for(const std::string& platform) {
    const std::optional<isa::ChipSpec> chip = isa::chip_for_platform(platform);
    if (pool_ && chip_.platform == chip->platform) {
      // A long stream of launches without a sync: bound the pool's task list.
      if (tasks_.size() >= kMaxTasks) drain();
      return;
    }
    drain();  // another platform: the launches before it finish first
    chip_ = *chip;
    pool_.reset();
    pool_ = std::make_unique<runtime::TaskPool>(chip_, 0, factory());
    pool_->set_interrupt(&cancel_);  // Ctrl-C (cancel): running kernels stop, queued tasks are skipped
  }

  static constexpr size_t kMaxTasks = 4096;
  std::mutex submit_mu_;  // submissions and drains
  std::unique_ptr<runtime::TaskPool> pool_;
  isa::ChipSpec chip_;
  std::vector<std::shared_ptr<LaneTask>> tasks_;  // the pool's kernels, kept until it is reset
  std::vector<size_t> previous_;                  // the tasks of the last launch
  int last_blocks_ = 0;
  std::mutex err_mu_;                             // error_, in_flight_ (taken by finishing tasks)
  std::exception_ptr error_;
  int in_flight_ = 0;
  std::condition_variable idle_cv_;  // in_flight_ reached 0
  std::atomic<bool> cancel_{false};
};

// How the chunks of `lowered` are split: the number of SPMD blocks (1: the whole kernel in one
// task) and of chunk-range pieces the blocks take from a shared counter.
std::pair<int, int64_t> split_of(const LoweredKernel& lowered, const isa::ChipSpec& chip, int cores) {
  const int64_t width = std::max<int64_t>(1, lowered.chunk_lanes);
  const int64_t chunks = (lowered.total_lanes + width - 1) / width;
  if (!lowered.chunk_range || !lowered.independent_chunks) return {1, 1};
  // hardware_concurrency reads /sys on every call (glibc): ask once
  static const int host_cpus = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int host = cores > 0 ? cores : host_cpus;
  // Two chunks per core at least: a core for one tile row costs more than it saves.
  const int n = static_cast<int>(std::max<int64_t>(1, std::min<int64_t>({host, chip.aiv_cores, chunks / 2})));
  if (n == 1) return {1, 1};
  return {n, std::min<int64_t>(chunks / 2, int64_t{4} * n)};
}

// Submits `lowered` as SPMD blocks; `on_done` gets the launch's error (null: none).
void submit_lowered(std::shared_ptr<const LoweredKernel> lowered, std::vector<std::shared_ptr<DeviceBuffer>> holds,
                    const std::string& platform, const std::string& engine, int cores,
                    std::function<void(std::exception_ptr)> report) {
  const isa::ChipSpec chip = runtime::resolve_run_target({platform, engine, 1});
  isa::validate_kernel(lowered->kernel, chip);
  auto state = std::make_shared<LaunchState>();
  state->name = lowered->kernel.name;
  state->holds = std::move(holds);
  state->lowered = lowered;
  state->engine = engine;
  state->chip = chip;
  // Named copies, not a structured binding: clang before 16 cannot capture bindings in a lambda.
  const std::pair<int, int64_t> split = split_of(*lowered, chip, cores);
  const int blocks = split.first;
  const int64_t pieces = split.second;
  const int64_t width = std::max<int64_t>(1, lowered->chunk_lanes);
  const int64_t chunks = (lowered->total_lanes + width - 1) / width;
  // The blocks take contiguous chunk ranges (pieces) in order from a shared counter, so a block
  // on a slower core (a busy host) takes fewer; each keeps its core's buffers across pieces.
  auto next = std::make_shared<std::atomic<int64_t>>(0);
  auto failed = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::function<void(LaneCore&)>> bodies;
  LaunchState* st = state.get();  // the tasks hold `state` (keep_alive)
  for (int b = 0; b < blocks; ++b) {
    bodies.push_back([st, b, blocks, pieces, chunks, width, next, failed](LaneCore& core) {
      const LoweredKernel& l = *st->lowered;
      try {
        const std::shared_ptr<engines::NativeModule> none;
        const std::shared_ptr<engines::NativeModule>& module = st->engine == "native" ? st->native_module() : none;
        if (blocks == 1) {
          core.run_kernel(l.kernel, module, l.args);
        } else {
          std::vector<engines::HostArg> args = l.args;
          for (int64_t p; !failed->load() && (p = (*next)++) < pieces;) {
            args[args.size() - 2] = engines::HostArg::of_int(p * chunks / pieces * width);
            args[args.size() - 1] = engines::HostArg::of_int((p + 1) * chunks / pieces * width);
            try {
              core.run_kernel(l.kernel, module, args);
            } catch (...) {
              st->fail(static_cast<int>(p), std::current_exception());  // by piece: the in-order run's first error
              failed->store(true);
            }
          }
        }
      } catch (...) {
        st->fail(b, std::current_exception());
        failed->store(true);
      }
      core.forget(&l.kernel);
    });
  }
  Stream::get().submit(state, platform, std::move(bodies), lowered->kernel.core, std::move(report));
}

}  // namespace

void enqueue_lowered(std::shared_ptr<const LoweredKernel> lowered, std::vector<std::shared_ptr<DeviceBuffer>> holds,
                     const std::string& platform, const std::string& engine) {
  submit_lowered(std::move(lowered), std::move(holds), platform, engine, 0, nullptr);
}

void enqueue_warps(std::shared_ptr<const LaneProgram> program, std::vector<LaunchArg> args, LaunchShape shape,
                   const std::string& platform) {
  runtime::resolve_run_target({platform, "sim", 1});
  auto state = std::make_shared<LaunchState>();
  state->name = program->name;
  for (const LaunchArg& a : args)
    if (a.buffer) state->holds.push_back(a.buffer);
  LaunchState* st = state.get();
  // The warp model runs the blocks in order in one task (a conflict between blocks, which the
  // race checker does not cover, then has one outcome).
  std::vector<std::function<void(LaneCore&)>> bodies;
  bodies.push_back([st, program, args, shape](LaneCore&) {
    try {
      run_warps(*program, args, shape);
    } catch (...) {
      st->fail(0, std::current_exception());
    }
  });
  Stream::get().submit(state, platform, std::move(bodies), FunctionType::AIV);
}

void raise_launch_error() {
  if (std::exception_ptr e = Stream::get().take_error()) std::rethrow_exception(e);
}

void sync_launches() {
  Stream::get().wait();
  raise_launch_error();
}

bool launch_would_wait(const std::string& platform) { return Stream::get().would_wait(platform); }

bool wait_launches_for(int ms) { return Stream::get().wait_for(ms); }

void cancel_launches() { Stream::get().cancel(); }

int launches_in_flight() { return Stream::get().in_flight(); }

int last_launch_blocks() { return Stream::get().last_blocks(); }

int stream_workers() { return Stream::get().workers(); }

int run_lowered(const LoweredKernel& lowered, const std::string& platform, const std::string& engine, int cores) {
  const isa::ChipSpec chip = runtime::resolve_run_target({platform, engine, 1});
  const int blocks = split_of(lowered, chip, cores).first;
  // A synchronous run: a launch on the stream (after the launches queued before it) whose
  // caller waits for it and gets its error. The kernel is the caller's (it outlives the wait).
  std::shared_ptr<const LoweredKernel> borrowed(&lowered, [](const LoweredKernel*) {});
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr error;
  submit_lowered(borrowed, {}, platform, engine, cores, [&](std::exception_ptr e) {
    std::lock_guard<std::mutex> lock(mu);
    error = e;
    done = true;
    cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(mu);
  cv.wait(lock, [&] { return done; });
  if (error) std::rethrow_exception(error);
  return blocks;
}

}  // namespace pypto::kernel
