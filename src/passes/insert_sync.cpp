// InsertSync (see insert_sync.h). A static walk over the instruction stream keeps, per pipe,
// a vector clock of what it is known to be ordered after, and the pending buffer accesses.
// Before an instruction on pipe Q that conflicts with an unordered access of pipe P it
// inserts wait_flag(P, Q, ev); the matching set_flag(P, Q, ev) goes right after the producer
// when both are in the same straight-line block (so later P work does not delay Q), else
// right before the wait. Loop bodies (counted and while) are walked until the flags stop changing, so
// dependencies carried from one iteration to the next are ordered too. Event ids rotate
// over 0..7 per pipe pair, so pairs for alternating (double-buffered) tiles stay distinct.
#include "pypto/passes/insert_sync.h"

#include <algorithm>
#include <array>
#include <map>
#include <variant>

#include "pypto/isa/instructions.h"

namespace pypto::passes {

namespace {

using Clock = std::array<uint64_t, 7>;

struct Access {
  MemorySpace memory;
  int64_t lo, hi;
  int pipe;
  uint64_t seq;
  bool write;
  int pc;
  int region;
  Clock snap;  // the producer pipe's clock right after this access
};

struct State {
  std::array<Clock, 7> vc{};
  std::vector<Access> accesses;
};

struct Sync {
  bool set;
  int src, dst;
  int64_t event;
  int id;
};

// The state after either path: a pipe knows its own progress (max); what it is ordered
// after must hold on both paths (min).
State merge(const State& a, const State& b) {
  State m;
  for (int q = 0; q < 7; ++q)
    for (int p = 0; p < 7; ++p) m.vc[q][p] = p == q ? std::max(a.vc[q][p], b.vc[q][p]) : std::min(a.vc[q][p], b.vc[q][p]);
  m.accesses = a.accesses;
  for (const Access& x : b.accesses) {
    bool dup = false;
    for (const Access& y : a.accesses) dup = dup || (y.seq == x.seq && y.pipe == x.pipe && y.lo == x.lo && y.memory == x.memory);
    if (!dup) m.accesses.push_back(x);
  }
  return m;
}

void join(Clock& into, const Clock& from) {
  for (int p = 0; p < 7; ++p) into[p] = std::max(into[p], from[p]);
}

class SyncPlanner {
 public:
  explicit SyncPlanner(const isa::Kernel& k) : k_(k) {}

  void walk(int lo, int hi, State& st) {
    for (int pc = lo; pc < hi;) {
      const isa::Instr& in = k_.code[pc];
      switch (in.kind) {
        case isa::InstrKind::kLoopBegin:
        case isa::InstrKind::kWhileBegin: {
          // A while loop's condition code and body repeat like a counted loop's body.
          const bool is_while = in.kind == isa::InstrKind::kWhileBegin;
          const isa::InstrKind end_kind = is_while ? isa::InstrKind::kWhileEnd : isa::InstrKind::kLoopEnd;
          const int end = in.jump - 1;  // the matching kLoopEnd / kWhileEnd
          if (end <= pc || end >= hi || k_.code[end].kind != end_kind)
            fail(ErrorKind::kInternal, in.span,
                 std::string(is_while ? "while loop" : "loop") + " at pc " + std::to_string(pc) + " of kernel '" +
                     k_.name + "' jumps to " + std::to_string(in.jump) + ", which is not past its loop end",
                 "set the loop's jump to the index after its matching end");
          const State entry = st;
          State body = entry;
          for (int pass = 0; pass < 4; ++pass) {
            ++region_;
            const size_t before = inserted_;
            State s = body;
            walk(pc + 1, end, s);
            body = merge(entry, s);
            if (inserted_ == before && pass > 0) break;
          }
          st = body;
          ++region_;
          pc = end + 1;
          continue;
        }
        case isa::InstrKind::kIf: {
          const bool has_else = in.jump - 1 > pc && k_.code[in.jump - 1].kind == isa::InstrKind::kElse;
          const int then_end = has_else ? in.jump - 1 : in.jump;
          const int endif = has_else ? k_.code[in.jump - 1].jump : in.jump;
          if (in.jump <= pc || endif >= hi || endif < then_end || k_.code[endif].kind != isa::InstrKind::kEndIf)
            fail(ErrorKind::kInternal, in.span,
                 "if at pc " + std::to_string(pc) + " of kernel '" + k_.name + "' has no matching else / end-if",
                 "set the if's jump to its else + 1 or its end-if");
          State a = st, b = st;
          ++region_;
          walk(pc + 1, then_end, a);
          ++region_;
          if (has_else) walk(in.jump, endif, b);
          ++region_;
          st = merge(a, b);
          pc = endif + 1;
          continue;
        }
        case isa::InstrKind::kTile: tile(pc, in, st); break;
        default: break;
      }
      ++pc;
    }
  }

  std::map<int, std::vector<Sync>> before, after;
  size_t inserted_ = 0;

 private:
  void apply(const Sync& s, State& st) {
    if (s.set) snaps_[s.id] = st.vc[s.src];
    else if (snaps_.count(s.id)) join(st.vc[s.dst], snaps_[s.id]);
  }

  std::string attr(const isa::Instr& in, const char* key) {
    auto it = in.attrs.find(key);
    if (it == in.attrs.end()) return "";
    auto* s = std::get_if<std::string>(&it->second);
    return s ? *s : "";
  }

  // What one instruction reads and writes: on-chip tiles by their planned byte range, global
  // tensors as a whole (memory DDR, range [slot, slot + 1)): a store to a tensor and a later
  // load of it in the same kernel are ordered like a tile written by one pipe and read by
  // another (the window may be known only at run time, so any two accesses of one tensor
  // are taken to overlap).
  struct Touched {
    MemorySpace memory;
    int64_t lo, hi;
    bool write;
  };
  std::vector<Touched> touched_by(const isa::Instr& in) const {
    std::vector<Touched> out;
    auto add = [&](const isa::Operand& o, bool write) {
      if (o.kind == isa::Operand::kTile) {
        const isa::TileDesc& t = k_.tiles.at(o.index);
        out.push_back({t.memory, t.addr, t.addr + t.rows * t.cols * dtype_bytes(t.dtype), write});
      } else if (o.kind == isa::Operand::kTensor) {
        out.push_back({MemorySpace::DDR, o.index, o.index + 1, write});
      }
    };
    for (const auto& o : in.ins) add(o, false);
    for (const auto& o : in.outs) add(o, true);
    return out;
  }

  void tile(int pc, const isa::Instr& in, State& st) {
    for (const Sync& s : before[pc]) apply(s, st);
    const isa::InstrDef* def = isa::find_instr(in.mnemonic);
    if (def && def->family == isa::InstrFamily::kSync) {  // flags written by hand
      isa::Pipe src, dst;
      const std::string which = in.mnemonic == "PIPE_BARRIER" ? attr(in, "pipe") : "";
      if (in.mnemonic == "PIPE_BARRIER" && (which == "ALL" || which == "PIPE_ALL" || which.empty())) {
        // Only a barrier of every pipe orders one pipe after another (bar_v / bar_m keep
        // their pipe in order, which it already is).
        Clock all{};
        for (auto& c : st.vc) join(all, c);
        st.vc.fill(all);
      } else if ((in.mnemonic == "SET_FLAG" || in.mnemonic == "WAIT_FLAG") &&
                 isa::pipe_from_name(attr(in, "src"), &src) && isa::pipe_from_name(attr(in, "dst"), &dst)) {
        auto& q = manual_[{static_cast<int>(src), static_cast<int>(dst)}];
        if (in.mnemonic == "SET_FLAG") q.push_back(st.vc[static_cast<int>(src)]);
        else if (!q.empty()) {
          join(st.vc[static_cast<int>(dst)], q.front());
          q.erase(q.begin());
        }
      }
      return;
    }
    const int q = static_cast<int>(isa::pipe_of(in, k_));
    const std::vector<Touched> touched = touched_by(in);
    // The latest unordered conflicting access per producer pipe.
    std::array<const Access*, 7> latest{};
    for (const auto& [m, lo, hi, write] : touched) {
      for (const Access& a : st.accesses) {
        if (a.pipe == q || a.memory != m || a.hi <= lo || hi <= a.lo || !(a.write || write)) continue;
        if (st.vc[q][a.pipe] >= a.seq) continue;
        if (!latest[a.pipe] || latest[a.pipe]->seq < a.seq) latest[a.pipe] = &a;
      }
    }
    for (int p = 0; p < 7; ++p) {
      if (!latest[p]) continue;
      const Access& a = *latest[p];
      const int64_t ev = next_event_[p][q]++ % 8;
      const int id = next_id_++;
      const bool after_producer = a.region == region_ && a.pc < pc;
      Sync set{true, p, q, ev, id}, wait{false, p, q, ev, id};
      if (after_producer) {
        after[a.pc].push_back(set);
        snaps_[id] = a.snap;
      } else {
        before[pc].push_back(set);
        snaps_[id] = st.vc[p];
      }
      before[pc].push_back(wait);
      join(st.vc[q], snaps_[id]);
      ++inserted_;
    }
    const uint64_t seq = ++seq_[q];
    st.vc[q][q] = seq;
    for (const Touched& t : touched) {  // (a plain loop variable: clang 14 cannot capture structured bindings)
      std::erase_if(st.accesses, [&](const Access& a) {
        return a.pipe == q && a.memory == t.memory && a.lo >= t.lo && a.hi <= t.hi && (t.write || !a.write);
      });
      st.accesses.push_back({t.memory, t.lo, t.hi, q, seq, t.write, pc, region_, st.vc[q]});
    }
    for (const Sync& s : after[pc]) apply(s, st);
  }

  const isa::Kernel& k_;
  int region_ = 0;
  int next_id_ = 0;
  std::array<uint64_t, 7> seq_{};
  std::array<std::array<int64_t, 7>, 7> next_event_{};
  std::map<int, Clock> snaps_;
  std::map<std::pair<int, int>, std::vector<Clock>> manual_;
};

isa::Instr sync_instr(const Sync& s, const isa::Instr& near) {
  isa::Instr i;
  i.kind = isa::InstrKind::kTile;
  i.mnemonic = s.set ? "SET_FLAG" : "WAIT_FLAG";
  i.attrs["src"] = std::string(isa::pipe_name(static_cast<isa::Pipe>(s.src)));
  i.attrs["dst"] = std::string(isa::pipe_name(static_cast<isa::Pipe>(s.dst)));
  i.attrs["event"] = s.event;
  i.span = near.span;
  return i;
}

}  // namespace

int insert_sync(isa::Kernel& kernel) {
  SyncPlanner planner(kernel);
  State st;
  planner.walk(0, static_cast<int>(kernel.code.size()), st);
  if (planner.inserted_ == 0) return 0;
  const int n = static_cast<int>(kernel.code.size());
  std::vector<int> group_start(n + 1);
  std::vector<isa::Instr> code;
  for (int pc = 0; pc < n; ++pc) {
    group_start[pc] = static_cast<int>(code.size());
    const isa::Instr& in = kernel.code[pc];
    for (const Sync& s : planner.before[pc]) code.push_back(sync_instr(s, in));
    code.push_back(in);
    for (const Sync& s : planner.after[pc]) code.push_back(sync_instr(s, in));
  }
  group_start[n] = static_cast<int>(code.size());
  for (isa::Instr& in : code)
    if (in.jump >= 0 && in.jump <= n &&
        (in.kind == isa::InstrKind::kLoopBegin || in.kind == isa::InstrKind::kLoopEnd || in.kind == isa::InstrKind::kIf ||
         in.kind == isa::InstrKind::kElse || in.kind == isa::InstrKind::kWhileBegin ||
         in.kind == isa::InstrKind::kWhileCond || in.kind == isa::InstrKind::kWhileEnd))
      in.jump = group_start[in.jump];
  kernel.code = std::move(code);
  return static_cast<int>(planner.inserted_);
}

}  // namespace pypto::passes
