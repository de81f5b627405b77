// The background launch worker and device buffers: launches run in submission order on one
// worker thread (kernels of one stream, as on a device); buffers count the launches using
// them so that freeing waits for those launches and dropping a reference never frees early.
#include "pypto/kernel/launch_queue.h"

#include <cstdlib>
#include <deque>
#include <exception>
#include <thread>

namespace pypto::kernel {

DeviceBuffer::DeviceBuffer(int64_t nbytes, std::string label) : label_(std::move(label)) {
  if (nbytes <= 0 || nbytes % 4 != 0)
    fail(ErrorKind::kValue, {}, "pto.alloc_tensor(" + std::to_string(nbytes) + "): the size must be a positive multiple of 4 bytes",
         "pass n * 4 for n fp32 elements");
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

void DeviceBuffer::free() {
  wait_idle();
  freed_ = true;
  std::free(bytes_);
  bytes_ = nullptr;
  nbytes_ = 0;
}

namespace {

class Worker {
 public:
  static Worker& get() {
    static Worker* w = new Worker();  // never destroyed: the thread may outlive static teardown
    return *w;
  }
  void push(LaunchJob job) {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& b : job.holds) b->retain_for_launch();
    jobs_.push_back(std::move(job));
    ++in_flight_;
    cv_.notify_all();
  }
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return in_flight_ == 0; });
  }
  std::exception_ptr take_error() {
    std::lock_guard<std::mutex> lock(mu_);
    std::exception_ptr e = error_;
    error_ = nullptr;
    return e;
  }
  int in_flight() {
    std::lock_guard<std::mutex> lock(mu_);
    return in_flight_;
  }

 private:
  Worker() : thread_([this] { loop(); }) { thread_.detach(); }
  void loop() {
    for (;;) {
      LaunchJob job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !jobs_.empty(); });
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      std::exception_ptr err;
      try {
        job.work();
      } catch (...) {
        err = std::current_exception();
      }
      job.work = nullptr;  // drop the lowered kernel before anyone can see the launch as done
      std::vector<std::shared_ptr<DeviceBuffer>> holds = std::move(job.holds);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (err && !error_) error_ = err;
        if (--in_flight_ == 0) done_.notify_all();
      }
      for (auto& b : holds) b->release_from_launch();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_, done_;
  std::deque<LaunchJob> jobs_;
  int in_flight_ = 0;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

void enqueue_launch(LaunchJob job) { Worker::get().push(std::move(job)); }

void raise_launch_error() {
  if (std::exception_ptr e = Worker::get().take_error()) std::rethrow_exception(e);
}

void sync_launches() {
  Worker::get().wait();
  raise_launch_error();
}

int launches_in_flight() { return Worker::get().in_flight(); }

}  // namespace pypto::kernel
