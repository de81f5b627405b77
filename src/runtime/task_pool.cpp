// Dependency tracking and the worker pool. A task's regions are index boxes of the tensors it
// touches (from the kernel's footprint); two regions conflict when one writes and their
// boxes (same index space) or byte hulls (aliasing views) overlap. Workers block on
// condition variables; a worker that runs out of work first polls an atomic for a few
// microseconds (one worker at a time, yielding the CPU), so a chain of tiny tasks is handed
// over without a futex wake-up per task. Virtual cores are handed out lowest-free-first.
#include "pypto/runtime/task_pool.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>

#include "pypto/base/spin.h"
#include "pypto/runtime/mixed_task.h"
#include "pypto/engines/cancel.h"
#include "pypto/engines/deferred_wait.h"
#include "pypto/engines/sim_engine.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

const char* core_kind_name(CoreKind k) {
  switch (k) {
    case CoreKind::AIC: return "AIC";
    case CoreKind::AIV: return "AIV";
    case CoreKind::Mixed: return "MIX";
  }
  return "?";
}

CoreKind core_kind_of(const isa::Kernel& kernel) {
  if (kernel.core == FunctionType::AIC) return CoreKind::AIC;
  if (kernel.core == FunctionType::Group) return CoreKind::Mixed;
  return CoreKind::AIV;
}

namespace {

bool same_space(const IndexBox& a, const int64_t* sa, const IndexBox& b, const int64_t* sb) {
  if (a.ndim != b.ndim) return false;
  for (int d = 0; d < a.ndim; ++d)
    if (sa[d] != sb[d]) return false;
  return true;
}

bool boxes_overlap(const IndexBox& a, const IndexBox& b) {
  for (int d = 0; d < a.ndim; ++d)
    if (!(a.lo[d] < b.hi[d] && b.lo[d] < a.hi[d])) return false;
  return true;
}

bool box_contains(const IndexBox& outer, const IndexBox& inner) {
  for (int d = 0; d < outer.ndim; ++d)
    if (inner.lo[d] < outer.lo[d] || inner.hi[d] > outer.hi[d]) return false;
  return true;
}

}  // namespace

// A thread's virtual-core state: the engine's core made by the factory of `runner_key`
// (remade when a later run brings another factory), or a sim core when there is none; the
// cores of mixed tasks' parts are made on first use and dropped with the factory.
struct TaskPool::ThreadCores {
  std::unique_ptr<CoreRunner> runner;
  std::unique_ptr<SimEngine> sim;
  uint64_t runner_key = UINT64_MAX;
  CoreFactory factory;  // this thread's copy of the current run's factory
  MixedCores mixed;
};

void TaskSpec::swap(TaskSpec& other) noexcept {
  std::swap(kernel, other.kernel);
  std::swap(footprint, other.footprint);
  args.swap(other.args);
  deps.swap(other.deps);
  keep_alive.swap(other.keep_alive);
  std::swap(span, other.span);
  std::swap(block_idx, other.block_idx);
  std::swap(block_num, other.block_num);
  std::swap(manual, other.manual);
  parts.swap(other.parts);
  dump.swap(other.dump);
  no_dep_args.swap(other.no_dep_args);
  predicate.swap(other.predicate);
}

void TaskSpec::recycle() {
  kernel = nullptr;
  footprint = nullptr;
  deps.clear();
  keep_alive.clear();
  span = nullptr;
  block_idx = 0;
  block_num = 1;
  manual = false;
  parts.clear();
  dump.clear();
  no_dep_args.clear();
  predicate = nullptr;
}

void TaskPool::Task::recycle() {
  kernel = nullptr;
  parts.clear();
  keep_alive.clear();
  dependents.clear();
  deps.clear();
  span = nullptr;
  pending = 0;
  done = started = manual = retired = false;
  kind = CoreKind::AIV;
  predicate = nullptr;
  vcore = worker = -1;
  block_idx = 0;
  block_num = 1;
  start_us = end_us = 0;
  cycles = -1;
  busy = {};
  dump.clear();
}

TaskPool::TaskPool(const isa::ChipSpec& chip, int num_workers, CoreFactory factory, size_t ring_size, bool record)
    : chip_(chip), factory_(std::move(factory)), ring_size_(ring_size), record_(record) {
  aic_busy_.assign(std::max(chip.aic_cores, 1), 0);
  aiv_busy_.assign(std::max(chip.aiv_cores, 1), 0);
  t0_ = std::chrono::steady_clock::now();
  int n = num_workers > 0 ? num_workers : static_cast<int>(std::thread::hardware_concurrency());
  n = std::max(n, 1);
  num_workers_ = n;
  for (int i = 0; i < n; ++i) {
    workers_.emplace_back([this, i] { worker_loop(i); });
    // Named in /proc, debuggers and profilers; named here, not by the thread itself, so that
    // every worker carries the name once the pool is constructed.
    pthread_setname_np(workers_.back().native_handle(), "pypto-worker");
  }
}

void TaskPool::reset(CoreFactory factory, uint64_t runner_key, size_t ring_size, bool record) {
  std::lock_guard<std::mutex> lk(mu_);
  PYPTO_CHECK(finished_ == tasks_.size() && running_ == 0, "TaskPool::reset while tasks are in flight");
  PYPTO_CHECK(!stop_, "TaskPool::reset after the workers stopped");
  tasks_.clear();
  buckets_.clear();
  ready_.clear();
  PYPTO_CHECK(num_staged_ == 0, "TaskPool::reset with staged tasks");
  next_id_ = 0;
  ready_hint_.store(0, std::memory_order_release);
  std::fill(aic_busy_.begin(), aic_busy_.end(), 0);
  std::fill(aiv_busy_.begin(), aiv_busy_.end(), 0);
  finished_ = 0;
  finished_hint_.store(0, std::memory_order_release);
  ring_resume_ = SIZE_MAX;
  error_ = nullptr;
  failed_.store(false, std::memory_order_release);
  stats_ = PoolStats{};
  ring_size_ = ring_size;
  record_ = record;
  trace_ = nullptr;
  record_events_ = false;
  interrupt_ = nullptr;
  dump_hook_ = nullptr;
  t0_ = std::chrono::steady_clock::now();
  if (runner_key != runner_key_) {
    factory_ = std::move(factory);
    runner_key_ = runner_key;
  }
}

void TaskPool::cancel() {
  drop_staged();
  std::unique_lock<std::mutex> lk(mu_);
  set_error(std::make_exception_ptr(std::runtime_error("run cancelled")));  // skip queued tasks
  lk.unlock();
  work_cv_.notify_all();
  lk.lock();
  // Every unfinished task depends only on earlier ones, so the skipped tasks all finish.
  done_cv_.wait(lk, [&] { return finished_ == tasks_.size() || stop_; });
}

bool TaskPool::stopped() {
  std::lock_guard<std::mutex> lk(mu_);
  return stop_;
}

TaskPool::~TaskPool() {
  drop_staged();
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
    set_error(std::make_exception_ptr(std::runtime_error("run cancelled")));  // skip queued tasks
  }
  work_cv_.notify_all();
  deferred_cv_.notify_all();
  for (std::thread& t : workers_) t.join();
  if (deferred_thread_.joinable()) deferred_thread_.join();
}

size_t TaskPool::finish_locked(size_t id) {
  Task& task = tasks_[id];
  task.done = true;
  ++finished_;
  size_t woke = 0;
  for (size_t d : task.dependents)
    if (--tasks_[d].pending == 0) {
      ready_.push_back(d);
      ++woke;
    }
  ready_hint_.store(ready_.size(), std::memory_order_release);
  finished_hint_.store(finished_, std::memory_order_release);
  return woke;
}

void TaskPool::deferred_loop() {
  std::unique_lock<std::mutex> lk(mu_);
  int64_t sleep_us = 1;
  for (;;) {
    deferred_cv_.wait(lk, [&] { return stop_ || !deferred_.empty(); });
    if (stop_) return;
    // Idle: this rank runs nothing else, so the deadlock watchdog counts it as waiting.
    const bool idle = running_ == 0 && ready_.empty();
    const bool skip = error_ != nullptr || (interrupt_ != nullptr && interrupt_->load());
    size_t finished = 0, woke = 0;
    for (size_t i = 0; i < deferred_.size();) {
      bool done = skip;
      if (!done) {
        try {
          done = deferred_[i].second(idle);
        } catch (...) {
          if (!error_) error_ = std::current_exception();
          done = true;
        }
      }
      if (!done) {
        ++i;
        continue;
      }
      tasks_[deferred_[i].first].keep_alive.clear();
      woke += finish_locked(deferred_[i].first);
      deferred_.erase(deferred_.begin() + static_cast<std::ptrdiff_t>(i));
      ++finished;
    }
    if (finished > 0) {
      sleep_us = 1;
      if (woke > 0) work_cv_.notify_all();
      done_cv_.notify_all();
      continue;
    }
    lk.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
    sleep_us = std::min<int64_t>(sleep_us * 2, 1000);
    lk.lock();
  }
}

double TaskPool::now_us() const {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0_).count();
}

void TaskPool::regions_of(const TaskSpec& spec, std::vector<Region>& out) const {
  out.clear();
  thread_local std::vector<ParamFootprint> fps;
  const isa::Kernel& kernel = *spec.kernel;
  if (spec.footprint) {
    evaluate_footprint(*spec.footprint, spec.args, fps);
  } else {  // whole tensors, by parameter direction
    fps.assign(spec.args.size(), ParamFootprint{});
    for (size_t i = 0; i < spec.args.size() && i < kernel.params.size(); ++i) {
      const ParamDirection dir = kernel.params[i].dir;
      fps[i].reads = dir != ParamDirection::Out;
      fps[i].writes = dir != ParamDirection::In;
      fps[i].read.whole = fps[i].write.whole = true;
    }
  }
  for (size_t i = 0; i < spec.args.size() && i < fps.size(); ++i) {
    const HostArg& a = spec.args[i];
    if (a.kind != HostArg::kTensor) continue;
    if (std::find(spec.no_dep_args.begin(), spec.no_dep_args.end(), static_cast<int64_t>(i)) != spec.no_dep_args.end())
      continue;  // no_dep_args: neither looked up nor registered
    const TensorView& t = a.tensor;
    const int nd = static_cast<int>(t.shape.size());
    for (int w = 0; w < 2; ++w) {
      const bool present = w ? fps[i].writes : fps[i].reads;
      if (!present) continue;
      IndexBox box = w ? fps[i].write : fps[i].read;
      Region r{};
      r.write = w == 1;
      r.base = t.data;
      r.elem = dtype_bytes(t.dtype);
      r.exact = nd <= kMaxBoxDims && t.strides.size() == t.shape.size();
      if (box.whole && r.exact) {  // the whole tensor as a box of its index space
        box.whole = false;
        box.ndim = nd;
        for (int d = 0; d < nd; ++d) box.lo[d] = 0, box.hi[d] = t.shape[d];
      }
      if (!box.whole && box.empty()) continue;
      const ViewOrigin* o = t.origin.get();
      if (r.exact && !box.whole && o && o->strides.size() <= static_cast<size_t>(kMaxBoxDims) &&
          o->dims.size() == static_cast<size_t>(nd)) {
        // A view of a root tensor: the box in the root's index space (dropped and unmapped
        // root axes are the view's fixed offset there), so views of one root compare as boxes.
        const int rd = static_cast<int>(o->strides.size());
        IndexBox rb{};
        rb.ndim = rd;
        for (int m = 0; m < rd; ++m) rb.lo[m] = o->offset[m], rb.hi[m] = o->offset[m] + 1;
        for (int d = 0; d < nd; ++d) {
          const int m = o->dims[d];
          rb.lo[m] = o->offset[m] + box.lo[d];
          rb.hi[m] = o->offset[m] + box.hi[d];
        }
        box = rb;
        r.base = o->base;
        const uint8_t* base = static_cast<const uint8_t*>(o->base);
        int64_t lo = 0, hi = 0;
        for (int m = 0; m < rd; ++m) {
          r.strides[m] = o->strides[m];
          const int64_t a0 = box.lo[m] * o->strides[m], a1 = (box.hi[m] - 1) * o->strides[m];
          lo += std::min(a0, a1);
          hi += std::max(a0, a1);
        }
        r.box = box;
        r.blo = base + lo * r.elem;
        r.bhi = base + (hi + 1) * r.elem;
      } else if (r.exact && !box.whole) {
        r.box = box;
        const uint8_t* base = static_cast<const uint8_t*>(t.data);
        int64_t lo = 0, hi = 0;
        for (int d = 0; d < nd; ++d) {
          r.strides[d] = t.strides[d];
          const int64_t a0 = box.lo[d] * t.strides[d], a1 = (box.hi[d] - 1) * t.strides[d];
          lo += std::min(a0, a1);
          hi += std::max(a0, a1);
        }
        r.blo = base + lo * r.elem;
        r.bhi = base + (hi + 1) * r.elem;
      } else {
        r.exact = false;
        std::tie(r.blo, r.bhi) = t.byte_range();
        if (r.blo == r.bhi) continue;
      }
      out.push_back(r);
    }
  }
}

size_t TaskPool::submit(TaskSpec spec) {
  flush();  // staged tasks come first (ids are in submission order)
  thread_local std::vector<Region> regions;
  regions_of(spec, regions);
  thread_local std::vector<std::pair<const uint8_t*, const uint8_t*>> views;
  views.clear();
  for (const HostArg& a : spec.args)
    if (a.kind == HostArg::kTensor) views.push_back(a.tensor.byte_range());
  std::unique_lock<std::mutex> lk(mu_);
  const size_t id = enter(spec, regions.data(), regions.size(), views.data(), views.size(), lk);
  next_id_ = id + 1;
  // Wake workers in batches: a wake-up costs more than a tiny task, so ready tasks are
  // handed over once a batch is queued, or when the host waits (wait_all, a full ring).
  if (ready_.size() < kWakeBatch && running_ > 0) return id;
  lk.unlock();
  work_cv_.notify_all();
  return id;
}

size_t TaskPool::stage(TaskSpec& spec) {
  // The staged slots keep their buffers (staged_ is not cleared): the spec's contents go into
  // the next slot and the slot's buffers (a finished task's, see enter) come back to `spec`.
  if (num_staged_ == staged_.size()) staged_.emplace_back();
  Staged& st = staged_[num_staged_];
  st.region_begin = staged_regions_.size();
  thread_local std::vector<Region> regions;
  regions_of(spec, regions);
  staged_regions_.insert(staged_regions_.end(), regions.begin(), regions.end());
  st.region_end = staged_regions_.size();
  st.view_begin = staged_views_.size();
  for (const HostArg& a : spec.args)
    if (a.kind == HostArg::kTensor) staged_views_.push_back(a.tensor.byte_range());
  st.view_end = staged_views_.size();
  st.spec.swap(spec);
  spec.recycle();
  ++num_staged_;
  const size_t id = next_id_++;
  // Under a ring (RunConfig(ring_size=)) a batch is at most a quarter of it: staged tasks
  // keep their tensors alive, and the ring bounds the memory in flight.
  const size_t batch = ring_size_ > 0 ? std::clamp<size_t>(ring_size_ / 4, 1, kStageBatch) : kStageBatch;
  if (num_staged_ >= batch) flush();
  return id;
}

size_t TaskPool::wake_count() const {
  // The polling worker takes one ready task; busy workers take more when they finish, but
  // a sleeping one is woken for each other ready task, so that ready tasks run in parallel.
  const size_t pollers = polling_.load(std::memory_order_acquire) ? 1 : 0;
  return ready_.size() > pollers ? ready_.size() - pollers : 0;
}

void TaskPool::wake(size_t n) {
  if (n == 1) work_cv_.notify_one();
  else if (n > 1) work_cv_.notify_all();
}

void TaskPool::wake_ready(std::unique_lock<std::mutex>& lk) {
  if (const size_t n = wake_count(); n > 0) {
    lk.unlock();
    wake(n);
    lk.lock();
  }
}

void TaskPool::lock_after_task(std::unique_lock<std::mutex>& lk) {
  if (lk.try_lock()) return;
  // The submitting thread enters a batch under the lock (a few microseconds): waiting for it
  // on the mutex would put this worker to sleep, and waking it costs the submitting thread a
  // system call and this worker tens of microseconds. The flag is read, not the mutex, so
  // the spinning does not pull the lock's cache line away from its holder.
  spin_until([this] { return !flushing_.load(std::memory_order_relaxed); }, kFlushSpinUs);
  lk.lock();
}

void TaskPool::flush() { flush_staged(true); }

void TaskPool::flush_staged(bool wake_workers) {
  if (num_staged_ == 0) return;
  size_t wake_n = 0;
  try {
    flushing_.store(true, std::memory_order_relaxed);
    std::unique_lock<std::mutex> lk(mu_);
    for (size_t i = 0; i < num_staged_; ++i) {
      Staged& st = staged_[i];
      // The slot keeps the buffers the task's slot gave back; the next stage() recycles them.
      enter(st.spec, staged_regions_.data() + st.region_begin, st.region_end - st.region_begin,
            staged_views_.data() + st.view_begin, st.view_end - st.view_begin, lk);
    }
    wake_n = wake_count();
    flushing_.store(false, std::memory_order_relaxed);
  } catch (...) {  // a deadlock report while the ring was full: the rest never become tasks
    flushing_.store(false, std::memory_order_relaxed);
    std::lock_guard<std::mutex> lk(mu_);
    next_id_ = tasks_.size() + num_staged_;
    drop_staged();
    throw;
  }
  num_staged_ = 0;
  staged_regions_.clear();
  staged_views_.clear();
  if (wake_workers) wake(wake_n);
}

void TaskPool::drop_staged() {
  next_id_ -= num_staged_;
  // Releases what their specs keep alive; they never became tasks.
  for (size_t i = 0; i < num_staged_; ++i) staged_[i].spec.recycle();
  num_staged_ = 0;
  staged_regions_.clear();
  staged_views_.clear();
}

size_t TaskPool::enter(TaskSpec& spec, const Region* regions_data, size_t num_regions,
                       const std::pair<const uint8_t*, const uint8_t*>* views_data, size_t num_views,
                       std::unique_lock<std::mutex>& lk) {
  // Back-pressure: wait for a slot of the ring.
  if (ring_size_ > 0 && tasks_.size() - finished_ >= ring_size_) {
    // Resume once a quarter of the ring is free, so that the host and the workers do not
    // hand the lock back and forth for every task.
    ++stats_.ring_waits;
    ring_resume_ = ring_size_ - std::max<size_t>(1, ring_size_ / 4);
    work_cv_.notify_all();
    const bool flushing = flushing_.exchange(false, std::memory_order_relaxed);  // workers lock freely meanwhile
    done_cv_.wait(lk, [&] { return tasks_.size() - finished_ <= ring_resume_ || stalled(); });
    flushing_.store(flushing, std::memory_order_relaxed);
    if (tasks_.size() - finished_ >= ring_size_) report_deadlock(lk, "the submission ring is full");
    ring_resume_ = SIZE_MAX;
  }
  const size_t id = tasks_.size();
  // The task is written into its slot (recycled: empty lists with the buffers of an earlier
  // run) and counted at the end; until then tasks_[id] is not part of the run.
  Task& task = tasks_.next();
  task.kernel = spec.kernel;
  task.parts.swap(spec.parts);
  task.args.swap(spec.args);  // the slot's old argument list goes back to the spec, to refill
  task.keep_alive.swap(spec.keep_alive);
  task.span = spec.span;
  task.kind = core_kind_of(*spec.kernel);
  task.block_idx = spec.block_idx;
  task.block_num = spec.block_num;
  task.manual = spec.manual;
  task.dump.swap(spec.dump);
  task.predicate.swap(spec.predicate);
  std::vector<size_t>& deps = task.deps;
  // Every dependency is recorded (records, swimlane arrows); only unfinished ones hold the
  // task back.
  for (size_t d : spec.deps)
    if (d < id) deps.push_back(d);

  // Data dependencies: for each region, the conflicting unfinished regions of overlapping
  // views, newest first. A write that covers the region orders every older conflict
  // already (they conflict with it too), so that bucket's scan stops there. A manual task
  // (pl.manual_scope) gets no edges to other manual tasks and orders nothing older than it.
  for (size_t r = 0; r < num_regions; ++r) {
    const Region& x = regions_data[r];
    for (Bucket& b : buckets_) {
      if (!(x.blo < b.hi && b.lo < x.bhi)) continue;
      if (!x.write && b.writers == 0) continue;
      if (b.entries.size() >= b.prune_at) {
        std::erase_if(b.entries, [&](const auto& e) { return tasks_[e.first].done; });
        b.writers = 0;
        for (const auto& e : b.entries) b.writers += e.second.write;
        b.prune_at = std::max<size_t>(64, 2 * b.entries.size());
      }
      for (size_t n = b.entries.size(); n-- > 0;) {
        const auto& [tid, y] = b.entries[n];
        if (!(x.write || y.write)) continue;
        if (!(x.blo < y.bhi && y.blo < x.bhi)) continue;
        const bool exact = x.exact && y.exact && x.base == y.base && x.elem == y.elem && same_space(x.box, x.strides, y.box, y.strides);
        if (exact && !boxes_overlap(x.box, y.box)) continue;
        const bool manual_y = tasks_[tid].manual;
        if (spec.manual && manual_y) continue;
        deps.push_back(tid);
        // A covering write: every older conflict is ordered before it (finished, if it has).
        if (exact && y.write && box_contains(y.box, x.box) && !manual_y) break;
      }
    }
  }
  std::sort(deps.begin(), deps.end());
  deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  for (size_t earlier : deps) {
    if (tasks_[earlier].done) continue;
    ++task.pending;
    tasks_[earlier].dependents.push_back(id);
  }
  // Enter this task's regions in the bucket of their view.
  for (size_t r = 0; r < num_regions; ++r) {
    const Region& x = regions_data[r];
    std::pair<const uint8_t*, const uint8_t*> view{x.blo, x.bhi};
    for (size_t v = 0; v < num_views; ++v)
      if (views_data[v].first <= x.blo && x.bhi <= views_data[v].second) {
        view = views_data[v];
        break;
      }
    Bucket* bucket = nullptr;
    for (Bucket& b : buckets_)
      if (b.lo == view.first && b.hi == view.second) {
        bucket = &b;
        break;
      }
    if (!bucket) {
      if (buckets_.size() >= 32) {  // drop buckets whose tasks have all finished
        // Entries of this task (id, entered for its earlier regions) are not in tasks_ yet:
        // not finished (reading tasks_[id] was out of bounds, and a bucket holding this
        // task's write could be dropped, losing the ordering of later tasks after it).
        std::erase_if(buckets_, [&](const Bucket& b) {
          return std::all_of(b.entries.begin(), b.entries.end(),
                             [&](const auto& e) { return e.first < id && tasks_[e.first].done; });
        });
      }
      buckets_.push_back(Bucket{view.first, view.second, {}, 0, 64});
      bucket = &buckets_.back();
    }
    bucket->entries.emplace_back(id, x);
    bucket->writers += x.write;
  }
  const bool ready = task.pending == 0;
  tasks_.commit();
  stats_.tasks = tasks_.size();
  stats_.max_in_flight = std::max(stats_.max_in_flight, tasks_.size() - finished_);
  if (!ready) return id;  // a finishing dependency hands it to a worker
  ready_.push_back(id);
  ready_hint_.store(ready_.size(), std::memory_order_release);
  return id;
}

bool TaskPool::stalled() const {
  return running_ == 0 && ready_.empty() && deferred_.empty() && finished_ < tasks_.size() && !stop_;
}

std::string TaskPool::describe(size_t id) const {
  const Task& t = tasks_[id];
  std::string s = "task #" + std::to_string(id) + " (" + t.kernel->name;
  if (t.block_num > 1) s += " block " + std::to_string(t.block_idx) + "/" + std::to_string(t.block_num);
  if (t.span && !t.span->file.empty()) s += " at " + t.span->file + ":" + std::to_string(t.span->line);
  return s + ")";
}

void TaskPool::report_deadlock(std::unique_lock<std::mutex>& lk, const std::string& where) {
  std::string msg = "deadlock: " + where + " and no task can run; waiting tasks:";
  int shown = 0;
  for (size_t id = 0; id < tasks_.size() && shown < 8; ++id) {
    const Task& t = tasks_[id];
    if (t.done || t.pending == 0) continue;
    msg += "\n  " + describe(id) + " waits for";
    for (size_t d : t.deps)
      if (!tasks_[d].done) msg.append(" ").append(describe(d));  // append: g++ 12 warns (-Wrestrict) on " " + str
    ++shown;
  }
  stop_ = true;
  set_error(std::make_exception_ptr(std::runtime_error("run cancelled")));
  lk.unlock();
  work_cv_.notify_all();
  fail(ErrorKind::kRuntime, {}, msg, "make every task depend only on tasks submitted before it");
}

void TaskPool::wait_all() {
  flush_staged(false);
  std::unique_lock<std::mutex> lk(mu_);
  // While every worker sleeps (none runs a task or polls for one), the waiting thread runs
  // a ready task itself instead of waking one (waking takes tens of microseconds, more than a
  // small task): a small program's run does not wait for a wake-up. Workers are woken for
  // the other ready tasks. Not while a trace, records or dumps are kept (they name the worker
  // that ran each task), nor for mixed tasks (their parts run on a cluster).
  const bool help = trace_ == nullptr && !record_ && !dump_hook_;
  while (help && !ready_.empty() && !stop_ && error_ == nullptr && running_ == 0 &&
         !polling_.load(std::memory_order_acquire) && tasks_[ready_.front()].kind != CoreKind::Mixed) {
    const size_t id = ready_.front();
    ready_.pop_front();
    ready_hint_.store(ready_.size(), std::memory_order_release);
    wake_ready(lk);
    if (!host_cores_) host_cores_ = std::make_unique<ThreadCores>();
    run_task(id, num_workers_, *host_cores_, lk);
  }
  wake_ready(lk);  // submit() and the flush above hand ready tasks over here
  if (finished_ < tasks_.size() && !stop_) {
    // A short run's last tasks often end within microseconds: wait for them without sleeping
    // first (the worker that finishes then need not wake this thread).
    const size_t total = tasks_.size();
    lk.unlock();
    spin_until([&] { return finished_hint_.load(std::memory_order_acquire) >= total || failed(); }, kWaitSpinUs);
    lk.lock();
  }
  done_cv_.wait(lk, [&] { return finished_ == tasks_.size() || stalled(); });
  if (finished_ != tasks_.size()) report_deadlock(lk, "the program waits for its tasks");
  if (error_) std::rethrow_exception(error_);
}

bool TaskPool::failed() { return failed_.load(std::memory_order_acquire); }

void TaskPool::set_error(std::exception_ptr err) {
  if (error_) return;
  error_ = std::move(err);
  failed_.store(true, std::memory_order_release);
}

size_t TaskPool::num_tasks() {
  flush();
  std::lock_guard<std::mutex> lk(mu_);
  return tasks_.size();
}

PoolStats TaskPool::stats() {
  flush();
  std::lock_guard<std::mutex> lk(mu_);
  return stats_;
}

std::vector<TaskRecord> TaskPool::records() {
  flush();
  std::lock_guard<std::mutex> lk(mu_);
  std::vector<TaskRecord> out;
  if (!record_) return out;
  out.reserve(tasks_.size());
  for (size_t i = 0; i < tasks_.size(); ++i) {
    const Task& t = tasks_[i];
    out.push_back({t.kernel->name, t.kind, t.vcore, t.worker, t.block_idx, t.block_num, t.start_us, t.end_us, t.deps, t.cycles, t.busy, t.retired});
  }
  return out;
}

int TaskPool::acquire_vcore(CoreKind kind) {
  auto take = [](std::vector<uint8_t>& busy, size_t stride, size_t count) -> int {
    for (size_t i = 0; i + count <= busy.size(); i += stride) {
      bool free = true;
      for (size_t j = 0; j < count; ++j) free = free && !busy[i + j];
      if (free) {
        for (size_t j = 0; j < count; ++j) busy[i + j] = 1;
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  if (kind == CoreKind::AIC) return take(aic_busy_, 1, 1);
  if (kind == CoreKind::AIV) return take(aiv_busy_, 1, 1);
  // A mixed task takes a cluster: AIC c and AIV 2c, 2c+1.
  for (size_t c = 0; c < aic_busy_.size() && 2 * c + 1 < aiv_busy_.size(); ++c)
    if (!aic_busy_[c] && !aiv_busy_[2 * c] && !aiv_busy_[2 * c + 1]) {
      aic_busy_[c] = aiv_busy_[2 * c] = aiv_busy_[2 * c + 1] = 1;
      return static_cast<int>(c);
    }
  return -1;
}

void TaskPool::release_vcore(CoreKind kind, int id) {
  if (id < 0) return;
  if (kind == CoreKind::AIC) aic_busy_[id] = 0;
  else if (kind == CoreKind::AIV) aiv_busy_[id] = 0;
  else aic_busy_[id] = aiv_busy_[2 * id] = aiv_busy_[2 * id + 1] = 0;
}

void TaskPool::worker_loop(int worker) {
  ThreadCores cores;
  std::unique_lock<std::mutex> lk(mu_);
  while (true) {
    if (ready_.empty() && !stop_ && !polling_.exchange(true)) {
      // Poll briefly without the lock (bounded; then block on the condition variable).
      lk.unlock();
      for (int round = 0; round < kPollRounds && ready_hint_.load(std::memory_order_acquire) == 0; ++round)
        if (round % 64 == 63) std::this_thread::yield();
      polling_.store(false);
      lk.lock();
    }
    work_cv_.wait(lk, [&] { return stop_ || !ready_.empty(); });
    if (ready_.empty()) return;  // stopping and nothing left to drain
    const size_t id = ready_.front();
    ready_.pop_front();
    ready_hint_.store(ready_.size(), std::memory_order_release);
    run_task(id, worker, cores, lk);
  }
}

void TaskPool::run_task(size_t id, int worker, ThreadCores& cores, std::unique_lock<std::mutex>& lk) {
  std::unique_ptr<CoreRunner>& runner = cores.runner;
  std::unique_ptr<SimEngine>& sim = cores.sim;
  uint64_t& runner_key = cores.runner_key;
  CoreFactory& factory = cores.factory;
  MixedCores& mixed = cores.mixed;
  {
    Task& task = tasks_[id];
    const bool skip = error_ != nullptr || (interrupt_ != nullptr && interrupt_->load());
    const CancelScope cancel_scope(interrupt_);  // the running kernel checks it at every loop iteration
    ++running_;
    task.started = true;
    task.worker = worker;
    task.vcore = acquire_vcore(task.kind);
    CoreFactory remake;
    const bool stale = runner_key != runner_key_;
    if (stale) {
      remake = factory_;
      runner_key = runner_key_;
    }
    lk.unlock();
    std::exception_ptr err;
    if (stale) {
      factory = remake;
      mixed.runners.clear();  // part cores of the previous factory
      mixed.sims.clear();
      try {
        runner = remake ? remake() : nullptr;
      } catch (...) {
        err = std::current_exception();
        runner_key = UINT64_MAX;
      }
    }
    if (!runner && !sim) sim = std::make_unique<SimEngine>(chip_);
    double cycles = -1;
    std::array<double, 7> busy{};
    const bool dump = !skip && !err && dump_hook_ && !task.dump.empty();
    const double start = record_ ? now_us() : 0;
    if (!skip && !err && task.predicate) {
      try {
        task.retired = !task.predicate();  // its deps have finished: the value is current
        task.predicate = nullptr;          // releases the tensor it reads
      } catch (...) {
        err = std::current_exception();
      }
    }
    if (!skip && !err && !task.retired) {
      try {
        if (dump) dump_hook_(id, *task.kernel, task.args, task.dump, false);
        if (task.kind == CoreKind::Mixed) {
          // The parts' timelines go on virtual cores of their own: the AIC part on this
          // worker's core, AIV i on core num_workers + 2 * worker + i.
          const bool events = trace_ != nullptr && record_events_;
          MixedResult r = run_mixed_task(*task.kernel, task.parts, task.args, chip_, factory, mixed, events);
          cycles = r.cycles;
          for (const Timeline& t : r.timelines)
            for (size_t p = 0; p < busy.size(); ++p) busy[p] += t.busy[p];
          if (trace_ && r.cycles >= 0) {  // sim: the parts' modelled timelines
            std::vector<int> cores;
            const int nw = num_workers_;
            for (isa::PartRole role : r.roles) {
              const int core = role == isa::PartRole::AIC ? worker : nw + 2 * worker + (role == isa::PartRole::AIV1);
              if (role != isa::PartRole::AIC) {
                std::string name = "core ";
                name.append(std::to_string(core)).append(" (mixed tasks of worker ").append(std::to_string(worker));
                name.append(": ").append(isa::part_role_name(role)).append(")");
                trace_->set_core_name(core, name);
              }
              cores.push_back(core);
            }
            trace_->add_group(cores, r.timelines);
          }
        } else if (runner) {
          runner->run(*task.kernel, task.args);
        } else {
          sim->set_record_events(trace_ != nullptr && record_events_);
          sim->run(*task.kernel, task.args);
          cycles = sim->timeline().end_cycles;
          busy = sim->timeline().busy;
          if (trace_) trace_->add(worker, sim->timeline());
        }
        if (dump) dump_hook_(id, *task.kernel, task.args, task.dump, true);
      } catch (...) {
        err = std::current_exception();
      }
    }
    const double end = record_ ? now_us() : 0;
    // pld.system.defer_wait: the conditions the kernel left open; the core is freed now and
    // the task finishes when they hold (deferred_loop).
    DeferredPoll deferred;
    if (err) drop_deferred_waits();
    else deferred = take_deferred_poll();
    if (!deferred) task.keep_alive.clear();  // intermediate tensors no later task uses are freed here
    lock_after_task(lk);
    if (err) set_error(err);
    task.start_us = start;
    task.end_us = end;
    task.cycles = cycles;
    task.busy = busy;
    release_vcore(task.kind, task.vcore);
    --running_;
    if (deferred) {
      deferred_.emplace_back(id, std::move(deferred));
      if (!deferred_thread_.joinable()) deferred_thread_ = std::thread([this] { deferred_loop(); });
      deferred_cv_.notify_one();
      if (running_ == 0) done_cv_.notify_all();
      return;  // keep_alive stays with the task until it finishes
    }
    const size_t woke = finish_locked(id);
    if (woke > 1) work_cv_.notify_all();  // this worker takes one itself
    if (finished_ == tasks_.size() || running_ == 0 || tasks_.size() - finished_ == ring_resume_) done_cv_.notify_all();
  }
}

}  // namespace pypto::runtime
