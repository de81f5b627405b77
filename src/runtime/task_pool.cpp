// Dependency tracking and the worker pool. Conflicts are found by overlapping byte ranges
// of the tensors two tasks touch, so aliasing views of one array are ordered too. Workers
// block on condition variables; nothing spins.
#include "pypto/runtime/task_pool.h"

#include <algorithm>

#include "pypto/runtime/sim_engine.h"

namespace pypto::runtime {

TaskPool::TaskPool(const isa::ChipSpec& chip, int num_workers) : chip_(chip) {
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
  auto conflicts = [](const Task& a, const Task& b) {
    for (const Access& x : a.accesses)
      for (const Access& y : b.accesses)
        if ((x.write || y.write) && x.lo < y.hi && y.lo < x.hi) return true;
    return false;
  };
  {
    std::lock_guard<std::mutex> lk(mu_);
    const size_t id = tasks_.size();
    std::erase_if(active_, [&](size_t t) { return tasks_[t].done; });
    for (size_t earlier : active_) {
      if (conflicts(tasks_[earlier], task)) {
        ++task.pending;
        tasks_[earlier].dependents.push_back(id);
      }
    }
    const bool ready = task.pending == 0;
    tasks_.push_back(std::move(task));
    active_.push_back(id);
    if (ready) ready_.push_back(id);
  }
  work_cv_.notify_one();
}

void TaskPool::wait_all() {
  std::unique_lock<std::mutex> lk(mu_);
  done_cv_.wait(lk, [&] { return finished_ == tasks_.size(); });
  if (error_) std::rethrow_exception(error_);
}

bool TaskPool::failed() {
  std::lock_guard<std::mutex> lk(mu_);
  return error_ != nullptr;
}

void TaskPool::worker_loop(int worker) {
  SimEngine core(chip_);  // this worker's virtual-core state
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    work_cv_.wait(lk, [&] { return stop_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping and nothing left to drain
    const size_t id = ready_.front();
    ready_.pop_front();
    Task& task = tasks_[id];
    const bool skip = error_ != nullptr;
    lk.unlock();
    std::exception_ptr err;
    if (!skip) {
      try {
        core.set_record_events(trace_ != nullptr && record_events_);
        core.run(*task.kernel, task.args);
        if (trace_) trace_->add(worker, core.timeline());
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    if (err && !error_) error_ = err;
    task.done = true;
    ++finished_;
    bool woke = false;
    for (size_t d : task.dependents)
      if (--tasks_[d].pending == 0) {
        ready_.push_back(d);
        woke = true;
      }
    if (woke) work_cv_.notify_all();
    done_cv_.notify_all();
  }
}

}  // namespace pypto::runtime
