// The cross-core tile FIFOs of one cluster while a mixed task runs: the AIC and each AIV
// share two FIFOs (one per direction) of `depth` slots. The parts of the task run on their
// own threads; TPUSH / TPOP / TFREE of the reference library reach the FIFOs through the
// calling thread's ClusterPart (so the native engine, which runs FIFO instructions through
// the reference library, needs nothing of its own). When every unfinished part waits on a
// FIFO the task fails with a report of each part and the FIFO state instead of hanging; a
// part's error cancels the others.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/engines/reference.h"

namespace pypto::engines {

// Thrown in a part that stops because another part failed (not an error of its own).
class PartCancelled : public std::runtime_error {
 public:
  PartCancelled() : std::runtime_error("cancelled: another part of the mixed task failed") {}
};

struct ClusterPart;

class ClusterFifos {
 public:
  // `task`: the group kernel's name; `names[i]`: part i's kernel ("" when the group has no
  // such part); part 0 is the AIC, 1 is AIV 0, 2 is AIV 1.
  // `depths`: the slots of the FIFOs of pipe id k (pl.*_initialize_pipe(slot_num=, id=k));
  // other pipes have `depth`.
  ClusterFifos(std::string task, int depth, std::vector<std::string> names, std::map<int64_t, int> depths = {});

  // The instructions, run by `self` (blocking).
  void push(const ClusterPart& self, const TileCall& call);
  void pop(const ClusterPart& self, const TileCall& call);
  void free(const ClusterPart& self, const TileCall& call);

  // pl.system.sync_set / sync_wait across the cluster (Cube <-> Vector events): a set of the
  // AIC counts once for each AIV of the task, a set of an AIV once for the AIC. A wait takes
  // the oldest set aimed at its part with that event id (blocking until there is one) and
  // returns the cycle that set fired (sim; 0 on the native engine, which does not time).
  void event_set(const ClusterPart& self, int64_t event, double fired);
  double event_wait(const ClusterPart& self, const isa::Instr& instr, int64_t event);

  // Part `part` returned (normally) or threw (its error cancels the others).
  void finished(int part);
  void failed(int part);
  // Once every part has finished: a tile pushed and never popped, or popped and never
  // freed, is an error naming the FIFO and the instructions involved.
  void check_drained();

 private:
  struct Slot {
    std::vector<uint8_t> data;     // the pushed valid region, row-major
    DataType dtype = DataType::FP32;
    int64_t rows = 0, cols = 0;
    Span push_span, pop_span;
    std::string pushed_tile, popped_tile;
    const uint8_t* popped_into = nullptr;  // the TPOP's destination (TFREE must name it)
    double push_end = 0;           // modelled cycle the TPUSH ended (sim)
    double free_end = 0;           // modelled cycle the slot was last freed (sim)
  };
  struct Channel {
    int from = 0, to = 0;          // part indices
    int64_t id = 0;                // the pipe (id= of the FIFO ops)
    int depth = 2;
    std::vector<Slot> slots;
    uint64_t pushes = 0, pops = 0, frees = 0;  // frees <= pops <= pushes <= frees + depth
  };
  enum class State { kRunning, kWaiting, kFinished, kFailed };
  struct Part {
    State state = State::kRunning;
    std::function<std::string()> waits;  // what it waits for (kWaiting), as of now
    Span span;                      // the instruction it waits at
    std::function<bool()> can_go;   // kWaiting: its condition
  };

  // The FIFO between `self` and the peer the instruction names (`other` >= 0: that part
  // instead), of the instruction's pipe id, made on first use.
  Channel& channel(const ClusterPart& self, const TileCall& call, bool outgoing, int other = -1);
  // Copies rows [r0, r0 + nr) x cols [c0, c0 + nc) of `src` into the next slot of `c`.
  void fill_slot(Channel& c, const TileCall& call, const TileRef& src, int64_t r0, int64_t nr, int64_t c0, int64_t nc,
                 double end);
  int depth_of(int64_t id) const;
  std::string part_name(int part) const;
  std::string channel_name(const Channel& c) const;
  std::string channel_state(const Channel& c) const;
  // Blocks part `part` until `can_go`; throws the deadlock report or PartCancelled.
  void wait(std::unique_lock<std::mutex>& lk, int part, const TileCall& call, std::function<std::string()> waits,
            std::function<bool()> can_go);
  bool deadlocked() const;
  std::string deadlock_report() const;

  std::string task_;
  int depth_;
  std::vector<std::string> names_;
  std::deque<Channel> channels_;  // a deque: waits hold references across later insertions
  std::map<int64_t, int> depths_;
  std::map<std::pair<int, int64_t>, std::deque<double>> events_;  // (receiving part, event id): set times
  std::vector<Part> parts_;
  bool cancelled_ = false;
  std::string deadlock_;           // the report, once found
  Span deadlock_span_;
  std::mutex mu_;
  std::condition_variable cv_;
};

// The mixed-task part the calling thread is running.
struct ClusterPart {
  ClusterFifos* fifos = nullptr;
  int part = 0;  // 0 = AIC, 1 = AIV 0, 2 = AIV 1
  // Set by the sim engine around each FIFO instruction: times it no earlier than the given
  // cycle (the TPUSH that filled the slot, or the TFREE that emptied it) and returns the
  // cycle it ends. Empty on the native engine.
  std::function<double(double)> timing;
};

// The calling thread's part, or null outside a mixed task.
ClusterPart* current_cluster_part();

// Makes `part` the calling thread's part for the scope's lifetime.
class ClusterPartScope {
 public:
  explicit ClusterPartScope(ClusterPart* part);
  ~ClusterPartScope();
  ClusterPartScope(const ClusterPartScope&) = delete;
  ClusterPartScope& operator=(const ClusterPartScope&) = delete;

 private:
  ClusterPart* saved_;
};

}  // namespace pypto::engines
