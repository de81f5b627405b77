// Progress of a long native compile on the terminal: once compiling has taken longer than
// PYPTO_PROGRESS_AFTER seconds (default 1), stderr shows "pypto: compiling kernel 3/7
// name ..." updated in place. Nothing is written when stderr is not a TTY.
#pragma once
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace pypto::engines {

// The environment variable holding the delay, in seconds, before progress is shown.
inline constexpr const char* kProgressAfterEnv = "PYPTO_PROGRESS_AFTER";

class CompileProgress {
 public:
  explicit CompileProgress(int total);
  ~CompileProgress();  // clears the progress line
  CompileProgress(const CompileProgress&) = delete;
  CompileProgress& operator=(const CompileProgress&) = delete;

  void started(const std::string& kernel);
  void finished(const std::string& kernel);

 private:
  void tick();
  void draw();  // requires mu_

  const int total_;
  const bool enabled_;
  const std::chrono::steady_clock::time_point start_;
  const double after_s_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, drawn_ = false;
  int done_ = 0;
  std::vector<std::string> running_;
  std::thread ticker_;
};

}  // namespace pypto::engines
