// Footprint analysis of kernels: an abstract interpretation of the scalar code that keeps
// every register as an affine form of the scalar parameters and loop variables, and per-call
// interval evaluation of the TLOAD/TSTORE offsets into index boxes.
#include "pypto/runtime/footprint.h"

#include <algorithm>
#include <climits>
#include <map>
#include <set>

#include "pypto/engines/scalar_machine.h"

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

namespace {

AffineForm unknown() {
  AffineForm f;
  f.known = false;
  return f;
}
AffineForm constant(int64_t v) {
  AffineForm f;
  f.c = v;
  return f;
}
AffineForm symbol(int s) {
  AffineForm f;
  f.terms.push_back({s, 1});
  return f;
}

bool same(const AffineForm& a, const AffineForm& b) { return a.known == b.known && (!a.known || (a.c == b.c && a.terms == b.terms)); }

AffineForm add(const AffineForm& a, const AffineForm& b, int64_t sign) {
  if (!a.known || !b.known) return unknown();
  AffineForm r;
  if (sign > 0 ? __builtin_add_overflow(a.c, b.c, &r.c) : __builtin_sub_overflow(a.c, b.c, &r.c)) return unknown();
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].first < b.terms[j].first)) {
      r.terms.push_back(a.terms[i++]);
    } else if (i == a.terms.size() || b.terms[j].first < a.terms[i].first) {
      if (sign < 0 && b.terms[j].second == INT64_MIN) return unknown();
      r.terms.push_back({b.terms[j].first, sign * b.terms[j].second});
      ++j;
    } else {
      int64_t c = 0;
      const int64_t x = a.terms[i].second, y = b.terms[j].second;
      if (sign > 0 ? __builtin_add_overflow(x, y, &c) : __builtin_sub_overflow(x, y, &c)) return unknown();
      if (c != 0) r.terms.push_back({a.terms[i].first, c});
      ++i, ++j;
    }
  }
  return r;
}

AffineForm scale(const AffineForm& a, int64_t k) {
  if (!a.known) return a;
  if (k == 0) return constant(0);
  AffineForm r = a;
  // An offset that overflows 64 bits is not an affine footprint: the run reports the overflow
  // at the user's line (scalar_ops.h); here it is only unknown.
  if (__builtin_mul_overflow(r.c, k, &r.c)) return unknown();
  for (auto& t : r.terms)
    if (__builtin_mul_overflow(t.second, k, &t.second)) return unknown();
  return r;
}

bool is_const(const AffineForm& f) { return f.known && f.terms.empty(); }

class Analyser {
 public:
  explicit Analyser(const isa::Kernel& k) : kernel_(k) {}

  KernelFootprint run() {
    const size_t nregs = static_cast<size_t>(std::max(kernel_.num_regs, 0));
    regs_.assign(nregs, unknown());
    for (size_t i = 0; i < kernel_.params.size(); ++i) {
      if (kernel_.params[i].is_tensor) continue;
      const int k = fp_.num_scalar_params++;
      fp_.scalar_param_index.push_back(static_cast<int>(i));
      const bool is_float = static_cast<size_t>(k) < kernel_.reg_is_float.size() && kernel_.reg_is_float[k];
      if (static_cast<size_t>(k) < nregs && !is_float) regs_[k] = symbol(k);
    }
    const auto& code = kernel_.code;
    for (size_t pc = 0; pc < code.size(); ++pc) step(code, static_cast<int>(pc));
    return std::move(fp_);
  }

 private:
  AffineForm value(const isa::Scalar& s) const {
    if (s.kind == isa::Scalar::kImm) return s.is_float ? unknown() : constant(s.i);
    if (s.reg < 0 || static_cast<size_t>(s.reg) >= regs_.size()) return unknown();
    return regs_[s.reg];
  }
  void set(int reg, AffineForm f) {
    if (reg >= 0 && static_cast<size_t>(reg) < regs_.size()) {
      const bool is_float = static_cast<size_t>(reg) < kernel_.reg_is_float.size() && kernel_.reg_is_float[reg];
      regs_[reg] = is_float ? unknown() : std::move(f);
    }
  }
  // Registers written by code[begin, end).
  std::set<int> written(const std::vector<isa::Instr>& code, int begin, int end) const {
    std::set<int> w;
    for (int pc = std::max(begin, 0); pc < end && static_cast<size_t>(pc) < code.size(); ++pc) {
      const auto k = code[pc].kind;
      if (k == isa::InstrKind::kScalarBin || k == isa::InstrKind::kScalarMov || k == isa::InstrKind::kScalarRead ||
          k == isa::InstrKind::kScalarCast ||
          k == isa::InstrKind::kLoopBegin || k == isa::InstrKind::kLoopEnd)
        w.insert(code[pc].dst_reg);
    }
    return w;
  }

  void access(int param, bool write, const isa::Instr& in, int tile, const isa::Operand* offsets) {
    TensorAccess a;
    a.param = param;
    a.write = write;
    if (tile >= 0 && static_cast<size_t>(tile) < kernel_.tiles.size()) {
      a.rows = kernel_.tiles[tile].rows;
      a.cols = kernel_.tiles[tile].cols;
    } else {
      a.whole = true;
    }
    if (offsets && offsets->kind == isa::Operand::kScalarList) {
      for (const isa::Scalar& s : offsets->list) {
        a.offsets.push_back(value(s));
        a.whole = a.whole || !a.offsets.back().known;
      }
    } else {
      a.whole = true;
    }
    if (in.attrs.count("dims")) a.whole = true;  // a box of two other dims (isa::box_dims): counted whole
    fp_.accesses.push_back(std::move(a));
  }

  void tensor_operands(const isa::Instr& in) {
    const bool load = in.kind == isa::InstrKind::kTile && in.mnemonic == "TLOAD" && in.outs.size() == 1 &&
                      in.ins.size() == 2 && in.ins[0].kind == isa::Operand::kTensor && in.outs[0].kind == isa::Operand::kTile;
    const bool store = in.kind == isa::InstrKind::kTile && in.mnemonic == "TSTORE" && in.outs.size() == 1 &&
                       in.ins.size() == 2 && in.outs[0].kind == isa::Operand::kTensor && in.ins[0].kind == isa::Operand::kTile;
    if (load) return access(in.ins[0].index, false, in, in.outs[0].index, &in.ins[1]);
    if (store) return access(in.outs[0].index, true, in, in.ins[0].index, &in.ins[1]);
    // Any other use of a tensor: the whole tensor, read and written.
    for (const auto* ops : {&in.outs, &in.ins})
      for (const isa::Operand& op : *ops)
        if (op.kind == isa::Operand::kTensor) {
          access(op.index, false, in, -1, nullptr);
          access(op.index, true, in, -1, nullptr);
        }
  }

  void step(const std::vector<isa::Instr>& code, int pc) {
    const isa::Instr& in = code[pc];
    using K = isa::InstrKind;
    switch (in.kind) {
      case K::kScalarMov: set(in.dst_reg, value(in.a)); return;
      case K::kScalarCast: {  // an integer widened to 64 bits keeps its value; anything else is unknown
        const AffineForm a = value(in.a);
        auto it = in.attrs.find("dtype");
        const DataType* d = it == in.attrs.end() ? nullptr : std::get_if<DataType>(&it->second);
        set(in.dst_reg, d && (*d == DataType::INDEX || *d == DataType::INT64) ? a : unknown());
        return;
      }
      case K::kScalarBin: {
        const AffineForm a = value(in.a), b = value(in.b);
        AffineForm r = unknown();
        switch (in.sop) {
          case BinaryOp::Add: r = add(a, b, 1); break;
          case BinaryOp::Sub: r = add(a, b, -1); break;
          case BinaryOp::Mul:
            if (is_const(a)) r = scale(b, a.c);
            else if (is_const(b)) r = scale(a, b.c);
            break;
          default:
            if (is_const(a) && is_const(b) && in.sop != BinaryOp::Div) {
              try {
                r = constant(eval_binary_int(in.sop, a.c, b.c));
              } catch (...) {
                r = unknown();
              }
            }
        }
        set(in.dst_reg, r);
        return;
      }
      case K::kScalarRead: tensor_operands(in); set(in.dst_reg, unknown()); return;
      case K::kScalarWrite: tensor_operands(in); return;
      case K::kLoopBegin: {
        // Registers the body writes hold unknown values on entry (loop-carried) and after
        // the loop; the loop register is the loop's symbol inside the body.
        const std::set<int> w = written(code, pc + 1, in.jump - 1);
        for (int r : w) set(r, unknown());
        const AffineForm st = value(in.step);
        if (!is_const(st) || st.c == 0 || w.count(in.dst_reg)) {
          set(in.dst_reg, unknown());
        } else {
          KernelFootprint::Loop loop{value(in.a), value(in.b), st.c};
          fp_.loops.push_back(loop);
          set(in.dst_reg, symbol(fp_.num_scalar_params + static_cast<int>(fp_.loops.size()) - 1));
        }
        return;
      }
      case K::kLoopEnd: {
        const int begin = in.jump - 1;
        for (int r : written(code, begin, pc + 1)) set(r, unknown());
        return;
      }
      // A while loop: every register its condition code or body writes is unknown inside the
      // loop and after it (no trip count is known).
      case K::kWhileBegin:
        for (int r : written(code, pc + 1, in.jump - 1)) set(r, unknown());
        return;
      case K::kWhileEnd:
        for (int r : written(code, in.jump, pc + 1)) set(r, unknown());
        return;
      case K::kWhileCond: return;
      case K::kIf: branches_.push_back({regs_, {}, false}); return;
      case K::kElse:
        if (!branches_.empty()) {
          branches_.back().then_regs = regs_;
          branches_.back().has_else = true;
          regs_ = branches_.back().before;
        }
        return;
      case K::kEndIf:
        if (!branches_.empty()) {
          const Branch b = std::move(branches_.back());
          branches_.pop_back();
          const std::vector<AffineForm>& other = b.has_else ? b.then_regs : b.before;
          for (size_t r = 0; r < regs_.size(); ++r)
            if (!same(regs_[r], other[r])) regs_[r] = unknown();
        }
        return;
      default: tensor_operands(in); return;
    }
  }

  static int64_t eval_binary_int(BinaryOp op, int64_t a, int64_t b) {
    return eval_binary(op, ScalarValue::of_int(a), ScalarValue::of_int(b), {}).as_int();
  }

  struct Branch {
    std::vector<AffineForm> before, then_regs;
    bool has_else;
  };
  const isa::Kernel& kernel_;
  KernelFootprint fp_;
  std::vector<AffineForm> regs_;
  std::vector<Branch> branches_;
};

struct Interval {
  int64_t lo, hi;  // inclusive
  bool empty;
};

constexpr int64_t kHuge = INT64_MAX / 4;  // "unbounded", with room for the arithmetic below

Interval eval_interval(const AffineForm& f, const std::vector<Interval>& syms) {
  __int128 lo = f.c, hi = f.c;
  for (const auto& [s, coef] : f.terms) {
    const Interval& x = syms[s];
    if (x.empty) return {0, -1, true};
    const __int128 a = static_cast<__int128>(coef) * x.lo, b = static_cast<__int128>(coef) * x.hi;
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  auto clampv = [](__int128 v) { return static_cast<int64_t>(std::clamp<__int128>(v, -kHuge, kHuge)); };
  return {clampv(lo), clampv(hi), false};
}

void whole_box(IndexBox& b) {
  b.whole = true;
  b.ndim = 0;
}

// Grows `box` (unset when ndim == 0 and !whole) to cover `add`.
void hull(IndexBox& box, bool& present, const IndexBox& add) {
  if (add.whole) {
    whole_box(box);
    present = true;
    return;
  }
  if (add.empty()) return;
  if (!present) {
    box = add;
    present = true;
    return;
  }
  if (box.whole) return;
  for (int d = 0; d < box.ndim; ++d) {
    box.lo[d] = std::min(box.lo[d], add.lo[d]);
    box.hi[d] = std::max(box.hi[d], add.hi[d]);
  }
}

}  // namespace

bool IndexBox::empty() const {
  if (whole) return false;
  for (int d = 0; d < ndim; ++d)
    if (hi[d] <= lo[d]) return true;
  return false;
}

KernelFootprint analyse_footprint(const isa::Kernel& kernel) { return Analyser(kernel).run(); }

KernelFootprint compose_group_footprint(const isa::Kernel& group, const std::vector<const KernelFootprint*>& parts) {
  KernelFootprint out;
  std::vector<int> symbol_of(group.params.size(), -1);  // group scalar parameter -> symbol
  for (size_t i = 0; i < group.params.size(); ++i)
    if (!group.params[i].is_tensor) {
      symbol_of[i] = out.num_scalar_params++;
      out.scalar_param_index.push_back(static_cast<int>(i));
    }
  for (size_t p = 0; p < group.parts.size() && p < parts.size(); ++p) {
    const isa::KernelPart& part = group.parts[p];
    const KernelFootprint& fp = *parts[p];
    const int loop_base = out.num_scalar_params + static_cast<int>(out.loops.size());
    // A part's form in the group's symbols: its scalar parameters become the group's
    // parameters or constants, its loops follow the loops of the parts before it.
    auto subst = [&](const AffineForm& f) {
      AffineForm g;
      g.known = f.known;
      g.c = f.c;
      std::map<int, int64_t> terms;
      for (const auto& [sym, coef] : f.terms) {
        if (sym >= fp.num_scalar_params) {
          terms[loop_base + sym - fp.num_scalar_params] += coef;
          continue;
        }
        const int param = fp.scalar_param_index[sym];
        const isa::PartArg& pa = part.args.at(param);
        if (pa.param >= 0 && symbol_of.at(pa.param) >= 0) terms[symbol_of[pa.param]] += coef;
        else if (pa.param < 0 && !pa.constant.is_float) g.c += coef * pa.constant.i;
        else g.known = false;
      }
      for (const auto& [sym, coef] : terms)
        if (coef != 0) g.terms.push_back({sym, coef});
      return g;
    };
    for (const KernelFootprint::Loop& l : fp.loops) out.loops.push_back({subst(l.start), subst(l.stop), l.step});
    for (const TensorAccess& a : fp.accesses) {
      if (a.param < 0 || static_cast<size_t>(a.param) >= part.args.size() || part.args[a.param].param < 0) continue;
      TensorAccess b = a;
      b.param = part.args[a.param].param;
      b.offsets.clear();
      for (const AffineForm& o : a.offsets) {
        b.offsets.push_back(subst(o));
        if (!b.offsets.back().known) b.whole = true;
      }
      out.accesses.push_back(std::move(b));
    }
  }
  return out;
}

void evaluate_footprint(const KernelFootprint& fp, const std::vector<HostArg>& args, std::vector<ParamFootprint>& out) {
  out.assign(args.size(), ParamFootprint{});
  // Symbol intervals: scalar parameters are points, loops span start .. last value.
  std::vector<Interval> syms(fp.num_scalar_params + fp.loops.size());
  for (int k = 0; k < fp.num_scalar_params; ++k) {
    const int p = fp.scalar_param_index[k];
    const int64_t v = static_cast<size_t>(p) < args.size() ? args[p].i : 0;
    syms[k] = {v, v, false};
  }
  for (size_t l = 0; l < fp.loops.size(); ++l) {
    const auto& loop = fp.loops[l];
    Interval& s = syms[fp.num_scalar_params + l];
    if (!loop.start.known || !loop.stop.known) {  // an unknown loop bound: unbounded
      s = {-kHuge, kHuge, false};
      continue;
    }
    const Interval a = eval_interval(loop.start, syms), b = eval_interval(loop.stop, syms);
    if (a.empty || b.empty) s = {0, -1, true};
    else if (loop.step > 0) s = a.lo < b.hi ? Interval{a.lo, b.hi - 1, false} : Interval{0, -1, true};
    else s = a.hi > b.lo ? Interval{b.lo + 1, a.hi, false} : Interval{0, -1, true};
  }
  for (const TensorAccess& a : fp.accesses) {
    if (a.param < 0 || static_cast<size_t>(a.param) >= args.size() || args[a.param].kind != HostArg::kTensor) continue;
    const TensorView& t = args[a.param].tensor;
    const int nd = static_cast<int>(t.shape.size());
    IndexBox box;
    if (a.whole || nd > kMaxBoxDims || static_cast<int>(a.offsets.size()) != nd) {
      whole_box(box);
    } else {
      box.ndim = nd;
      bool empty = false;
      for (int d = 0; d < nd; ++d) {
        const Interval o = eval_interval(a.offsets[d], syms);
        empty = empty || o.empty;
        const int64_t extent = d == nd - 1 ? a.cols : (d == nd - 2 ? a.rows : 1);
        box.lo[d] = std::clamp<int64_t>(o.lo, 0, t.shape[d]);
        box.hi[d] = std::clamp<int64_t>(o.hi + extent, 0, t.shape[d]);
      }
      if (empty) continue;  // inside a loop that never runs
    }
    ParamFootprint& pf = out[a.param];
    if (a.write) hull(pf.write, pf.writes, box);
    else hull(pf.read, pf.reads, box);
  }
}

}  // namespace pypto::runtime
