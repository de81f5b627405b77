// The sim engine's cycle model: per virtual core, one in-order queue per pipe (S, V, MTE1,
// MTE2, MTE3, M, FIX). Each instruction starts when its pipe is free and its wait_flags are
// satisfied and costs what the instruction table's figures say; set_flag / wait_flag /
// pipe_barrier order pipes. Accesses to on-chip buffers are checked with vector clocks: a
// cross-pipe dependency not ordered by a flag chain or a barrier is a race (PyptoError).
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "pypto/isa/program.h"
#include "pypto/engines/reference.h"

namespace pypto::engines {

// One executed instruction on the modelled timeline (cycles from the kernel's start).
struct TimelineEvent {
  std::string name;  // mnemonic
  isa::Pipe pipe = isa::Pipe::S;
  double start = 0, end = 0;
  int pc = -1;
  int line = 0;
};

struct Timeline {
  std::string kernel;
  std::vector<TimelineEvent> events;
  double end_cycles = 0;  // when the last pipe finishes
  // Cycles each pipe was busy.
  std::array<double, 7> busy{};
};

class CycleModel {
 public:
  CycleModel(const isa::Kernel& kernel, bool record_events);
  // Times one tile instruction (after its operands are resolved, before it computes) and
  // checks its tile reads and writes for races; a race or an unmatched wait_flag throws.
  // It starts no earlier than `not_before` (a cross-core FIFO: the peer's TPUSH that filled
  // the slot, or the TFREE that emptied it). Returns the cycle it ends.
  double issue(int pc, const isa::Instr& instr, const TileCall& call, double not_before = 0);
  // A scalar or control instruction: one cycle of the scalar pipe.
  void scalar();
  Timeline finish();

 private:
  using Clock = std::array<uint64_t, 7>;  // per pipe: the last instruction seq known done
  struct Access {
    uintptr_t lo, hi;     // the bytes touched, as addresses
    isa::Pipe pipe;
    uint64_t seq;
    bool write;
    std::string what;     // "tile 't'" or "tensor 'out'"
    std::string instr;    // mnemonic
    Span span;
    int pc;
  };
  struct Flag {
    double time;
    Clock clock;
  };
  // A sync instruction; returns when it ends (SYNC_SET: when its event reaches the peer).
  // `not_before`: for a SYNC_WAIT of a mixed task, the cycle the peer's set fired.
  double sync(const isa::Instr& instr, double not_before);
  double sync_cost(const isa::Instr& instr) const;  // the instruction table's figure
  void join_all_pipes();                            // every pipe waits for every earlier instruction
  // Checks the access of bytes [lo, hi) of `what` (a tile, or a whole global tensor) against
  // the unordered accesses of other pipes, then records it.
  void check_and_record(const isa::Instr& instr, int pc, isa::Pipe pipe, uintptr_t lo, uintptr_t hi,
                        const std::string& what, bool write, uint64_t seq);
  double cost_of(const isa::Instr& instr, const TileCall& call) const;

  const isa::Kernel& kernel_;
  bool record_;
  double now_ = 0;                          // the scalar dispatcher's clock
  std::array<double, 7> pipe_free_{};
  std::array<uint64_t, 7> seq_{};
  std::array<Clock, 7> clock_{};            // clock_[q][p]: p's progress pipe q is ordered after
  std::map<std::tuple<int, int, int64_t>, std::deque<Flag>> flags_;  // (src, dst, event)
  std::map<int64_t, std::deque<Flag>> events_;  // pl.system.sync_set of a one-core task, by event id
  std::vector<Access> accesses_;
  Timeline timeline_;
};

}  // namespace pypto::engines
