// The terminal progress line of native kernel compiles (see compile_progress.h): a ticker
// thread redraws it every 100 ms once the delay has passed; the destructor erases it.
#include "compile_progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace pypto::engines {

namespace {

double progress_after_s() {
  const char* e = std::getenv(kProgressAfterEnv);
  if (!e || !*e) return 1.0;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  return end != e && v >= 0 ? v : 1.0;
}

}  // namespace

CompileProgress::CompileProgress(int total)
    : total_(total), enabled_(total > 0 && ::isatty(2) == 1), start_(std::chrono::steady_clock::now()),
      after_s_(progress_after_s()) {
  if (enabled_) ticker_ = std::thread([this] { tick(); });
}

CompileProgress::~CompileProgress() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  ticker_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

void CompileProgress::started(const std::string& kernel) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lk(mu_);
  running_.push_back(kernel);
  draw();  // at once when the delay has passed: a compile shorter than a tick is shown too
}

void CompileProgress::finished(const std::string& kernel) {
  if (!enabled_) return;
  std::lock_guard<std::mutex> lk(mu_);
  ++done_;
  if (auto it = std::find(running_.begin(), running_.end(), kernel); it != running_.end()) running_.erase(it);
}

void CompileProgress::tick() {
  std::unique_lock<std::mutex> lk(mu_);
  while (!stop_) {
    draw();
    cv_.wait_for(lk, std::chrono::milliseconds(100), [this] { return stop_; });
  }
}

void CompileProgress::draw() {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (elapsed < after_s_ || running_.empty()) return;
  const int current = std::min(done_ + 1, total_);
  std::fprintf(stderr, "\r\033[Kpypto: compiling kernel %d/%d %s ... (%.1fs)", current, total_, running_.front().c_str(),
               elapsed);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace pypto::engines
