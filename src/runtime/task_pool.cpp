// Dependency tracking and the worker pool. Conflicts are found by overlapping byte ranges
// of the tensors two tasks touch, so aliasing views of one array are ordered too. Workers
// block on condition variables; nothing spins.
#include "pypto/runtime/task_pool.h"

#include <algorithm>

#include "pypto/runtime/sim_engine.h"

namespace pypto::runtime {

TaskPool::TaskPool(const isa::ChipSpec& chip, int num_workers, CoreFactory factory)
    : chip_(chip), factory_(std::move(factory)) {
  int n = num_workers > 0 ? num_workers : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(n, 1);
  for (int i = 0; i < n; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

TaskPool::~TaskPool() {
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    if (!error_) error_ = std::make_exception_ptr(std::runtime_error("run cancelled"));  // skip queued tasks
  }
  work_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void TaskPool::submit(const isa::Kernel& kernel, std::vector<HostArg> args) {
  Task task{&kernel, std::move(args), {}, 0, {}, false};
  for (size_t i = 0; i < task.args.size() && i < kernel.params.size(); ++i) {
    if (task.args[i].kind != HostArg::kTensor) continue;
    auto [lo, hi] = task.args[i].tensor.byte_range();
    const ParamDirection dir = kernel.params[i].dir;
    if (dir != ParamDirection::Out) task.accesses.push_back({lo, hi, false});
    if (dir != ParamDirection::In) task.accesses.push_back({lo, hi, true});
  }
  {
    std::lock_guard<std::mutex> lk(mu_);
    const size_t id = tasks_.size();
    if (active_.size() > 64 && active_.size() > 2 * (tasks_.size() - finished_))  // amortised pruning
      std::erase_if(active_, [&](size_t t) { return tasks_[t].done; });
    // For each access, depend on the conflicting earlier tasks, newest first; a conflicting
    // task whose write covers the access orders every older conflict already (they
    // conflict with it too), so the scan for that access stops there. This keeps chains of
    // tasks on one tensor linear rather than quadratic.
    std::vector<size_t> deps;
    for (const Access& x : task.accesses) {
      if (!x.write) {  // a read conflicts only with writers: skip the scan when none overlaps
        bool any = false;
        for (const auto& [range, count] : write_ranges_) any = any || (x.lo < range.second && range.first < x.hi);
        if (!any) continue;
      }
      for (size_t n = active_.size(); n-- > 0;) {
        const Task& earlier = tasks_[active_[n]];
        if (earlier.done) continue;
        bool conflict = false, covered = false;
        for (const Access& y : earlier.accesses)
          if ((x.write || y.write) && x.lo < y.hi && y.lo < x.hi) {
            conflict = true;
            covered = covered || (y.write && y.lo <= x.lo && x.hi <= y.hi);
          }
        if (conflict) deps.push_back(active_[n]);
        if (covered) break;
      }
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (size_t earlier : deps) {
      ++task.pending;
      tasks_[earlier].dependents.push_back(id);
    }
    for (const Access& x : task.accesses)
      if (x.write) ++write_ranges_[{x.lo, x.hi}];
    const bool ready = task.pending == 0;
    tasks_.push_back(std::move(task));
    active_.push_back(id);
    if (!ready) return;  // a finishing dependency hands it to a worker
    ready_.push_back(id);
    // Wake workers in batches: a wake-up costs more than a tiny task, so ready tasks are
    // handed over once a batch is queued, or when the host waits (wait_all).
    if (ready_.size() < kWakeBatch && running_ > 0) return;
  }
  work_cv_.notify_all();
}

void TaskPool::wait_all() {
  work_cv_.notify_all();  // hand over a partly filled batch
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return finished_ == tasks_.size(); });
  if (error_) std::rethrow_exception(error_);
}

bool TaskPool::failed() {
  std::lock_guard<std::mutex> lk(mu_);
  return error_ != nullptr;
}

void TaskPool::worker_loop(int worker) {
  // This worker's virtual-core state: the engine's core, or a sim core.
  std::unique_ptr<CoreRunner> runner = factory_ ? factory_() : nullptr;
  std::unique_ptr<SimEngine> sim = runner ? nullptr : std::make_unique<SimEngine>(chip_);
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    work_cv_.wait(lk, [&] { return stop_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping and nothing left to drain
    const size_t id = ready_.front();
    ready_.pop_front();
    Task& task = tasks_[id];
    const bool skip = error_ != nullptr;
    ++running_;
    lk.unlock();
    std::exception_ptr err;
    if (!skip) {
      try {
        if (runner) {
          runner->run(*task.kernel, task.args);
        } else {
          sim->set_record_events(trace_ != nullptr && record_events_);
          sim->run(*task.kernel, task.args);
          if (trace_) trace_->add(worker, sim->timeline());
        }
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    if (err && !error_) error_ = err;
    task.done = true;
    --running_;
    ++finished_;
    for (const Access& x : task.accesses)
      if (x.write) {
        auto it = write_ranges_.find({x.lo, x.hi});
        if (it != write_ranges_.end() && --it->second == 0) write_ranges_.erase(it);
      }
    size_t woke = 0;
    for (size_t d : task.dependents)
      if (--tasks_[d].pending == 0) {
        ready_.push_back(d);
        ++woke;
      }
    if (woke > 1) work_cv_.notify_all();  // this worker takes one itself
    if (finished_ == tasks_.size()) done_cv_.notify_all();
  }
}

}  // namespace pypto::runtime
