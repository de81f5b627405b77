// The warp model of lane programs: each block's lanes run in warps of 32 that are scheduled
// independently (a warp runs until it reaches pto.barrier_block() or the end), and every
// access to device memory is checked for data races between lanes not ordered by a barrier.
// The model is a stepper (pypto/kernel/warp_sim.h): run_warps steps it to the end for a
// launch, the debugger steps it one user-visible op at a time.
#include "pypto/kernel/warp_sim.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "pypto/base/scalar_ops.h"
#include "pypto/engines/cancel.h"

namespace pypto::kernel {

namespace {

constexpr int64_t kWarp = 32;

struct LaneVal {
  double num = 0;
  int arg = -1;  // a pointer into launch argument `arg` (num = element offset)
  bool is_float = false;  // a float (a loaded element, a float argument or constant, a `/`)
};

struct Access {
  int64_t lane = 0;
  int64_t warp_epoch = 0, block_epoch = 0;
  bool write = false;
  int line = 0;
};

struct Warp {
  int pc = 0;
  int64_t epoch = 0;
  bool arrived = false;                    // waits at the barrier_block at pc
  std::vector<std::vector<LaneVal>> vals;  // [lane][value]
  std::vector<std::vector<bool>> masks;    // if-stack of active flags per lane
};

const char* op_name(const LaneOp& op) {
  switch (op.kind) {
    case LaneOpKind::kLoad: return "LOAD";
    case LaneOpKind::kStore: return "STORE";
    case LaneOpKind::kFma: return "FMA";
    case LaneOpKind::kMad: return "MAD";
    case LaneOpKind::kIf: return "IF";
    case LaneOpKind::kBarrier: return "BARRIER";
    case LaneOpKind::kBarrierBlock: return "BARRIER_BLOCK";
    default: break;
  }
  static const std::vector<std::pair<const char*, const char*>> names = {
      {"+", "ADD"}, {"-", "SUB"}, {"*", "MUL"}, {"/", "DIV"}, {"//", "FLOORDIV"}, {"%", "MOD"}, {"min", "MIN"},
      {"max", "MAX"}, {"<", "LT"}, {"<=", "LE"}, {">", "GT"}, {">=", "GE"}, {"==", "EQ"}, {"!=", "NE"}};
  for (const auto& n : names)
    if (op.name == n.first) return n.second;
  return "OP";
}

}  // namespace

struct WarpStepper::Impl {
  Impl(std::shared_ptr<const LaneProgram> program, std::vector<LaunchArg> args, LaunchShape shape, bool effects)
      : hold(std::move(program)), p(*hold), args_(std::move(args)), shape_(shape), record_effects(effects) {
    if (args_.size() != p.params.size())
      fail(ErrorKind::kValue, {}, "kernel '" + p.name + "' takes " + std::to_string(p.params.size()) +
               " arguments, got " + std::to_string(args_.size()), "pass one argument per parameter");
    check_launch_shape(p, shape_);
    for (const LaneOp& op : p.ops)
      if (op.kind != LaneOpKind::kConst && op.kind != LaneOpKind::kParam && op.kind != LaneOpKind::kGlobalId &&
          op.kind != LaneOpKind::kBlockId && op.kind != LaneOpKind::kLaneId && op.kind != LaneOpKind::kBinary &&
          op.kind != LaneOpKind::kLoad && op.kind != LaneOpKind::kStore && op.kind != LaneOpKind::kFma &&
          op.kind != LaneOpKind::kMad && op.kind != LaneOpKind::kIf && op.kind != LaneOpKind::kEndIf &&
          op.kind != LaneOpKind::kBarrier && op.kind != LaneOpKind::kBarrierBlock)
        fail(ErrorKind::kType, op.span, "pipeline operations cannot be mixed with barriers in one kernel",
             "put the pipeline in its own kernel");
    for (const LaunchArg& a : args_)
      data_.push_back(a.buffer ? reinterpret_cast<float*>(a.buffer->data("kernel launch")) : nullptr);
    // Visible ops: memory, control and arithmetic on data (a value that depends on a load).
    std::vector<bool> data(static_cast<size_t>(std::max(0, p.num_values)), false);
    for (const LaneOp& op : p.ops) {
      bool vis = false;
      switch (op.kind) {
        case LaneOpKind::kLoad: vis = true; if (op.dst >= 0) data.at(op.dst) = true; break;
        case LaneOpKind::kBinary:
          vis = data.at(op.args[0]) || data.at(op.args[1]);
          if (vis) data.at(op.dst) = true;
          break;
        case LaneOpKind::kStore: case LaneOpKind::kFma: case LaneOpKind::kMad: case LaneOpKind::kIf:
        case LaneOpKind::kBarrier: case LaneOpKind::kBarrierBlock: vis = true; break;
        default: break;
      }
      visible.push_back(vis);
    }
    advance();
  }

  std::shared_ptr<const LaneProgram> hold;
  const LaneProgram& p;
  std::vector<LaunchArg> args_;
  LaunchShape shape_;
  bool record_effects;
  std::vector<bool> visible;
  std::vector<float*> data_;
  int64_t block_ = 0, block_epoch_ = 0;
  std::unordered_map<int64_t, std::vector<Access>> log_;
  std::vector<Warp> ws_;
  size_t cur_ = 0;  // the running warp of block_
  int64_t steps_ = 0;
  bool finished_ = false;
  std::optional<WarpRace> race_;
  WarpStep* out_ = nullptr;  // the step being run (effects)

  int end() const { return static_cast<int>(p.ops.size()); }

  void start_block() {
    block_epoch_ = 0;
    log_.clear();
    const int64_t warps = (shape_.block + kWarp - 1) / kWarp;
    ws_.assign(static_cast<size_t>(warps), Warp{});
    for (int64_t w = 0; w < warps; ++w) {
      const int64_t lanes = std::min(kWarp, shape_.block - w * kWarp);
      ws_[w].vals.assign(lanes, std::vector<LaneVal>(p.num_values));
    }
    cur_ = 0;
  }

  // Moves to the warp that runs next: a warp runs until barrier_block (it arrives) or the end;
  // when every warp of the block has, the barrier releases them (or the block is over).
  void settle() {
    while (!finished_) {
      if (ws_.empty()) {
        if (block_ >= shape_.grid) {
          finished_ = true;
          return;
        }
        start_block();
      }
      const Warp& w = ws_[cur_];
      if (w.pc < end() && !w.arrived) return;
      if (++cur_ < ws_.size()) continue;
      cur_ = 0;
      if (ws_[0].pc >= end()) {  // the warps all run the same ops: they end together
        ws_.clear();
        ++block_;
        continue;
      }
      ++block_epoch_;
      for (Warp& x : ws_) ++x.pc, x.arrived = false;  // past the barrier_block
    }
  }

  // Runs the invisible ops ahead of the next visible one (they only set lane values).
  void advance() {
    for (settle(); !finished_ && !visible[ws_[cur_].pc]; settle()) run_op(nullptr);
  }

  WarpStep describe() const {
    WarpStep s;
    if (finished_ || race_) return s;
    const Warp& w = ws_[cur_];
    const LaneOp& op = p.ops[w.pc];
    s.index = steps_;
    s.block = block_;
    s.warp = static_cast<int64_t>(cur_);
    s.first_lane = s.warp * kWarp;
    s.lanes = static_cast<int64_t>(w.vals.size());
    s.op = w.pc;
    s.what = op_name(op);
    s.line = op.span.line;
    return s;
  }

  WarpStep step() {
    if (race_)
      fail(ErrorKind::kRuntime, race_->span, "kernel '" + p.name + "' stopped at the data race of step #" +
               std::to_string(race_->step) + "; it cannot run on: " + race_->message,
           race_->fix + ", then create a new debug_kernel context");
    WarpStep s = describe();
    if (finished_) return s;
    out_ = &s;
    run_op(&s);
    out_ = nullptr;
    ++steps_;
    if (!race_) advance();
    return s;
  }

  bool active(const Warp& w, size_t l) const {
    for (const auto& m : w.masks)
      if (!m[l]) return false;
    return true;
  }

  // Runs op pc of the current warp for its lanes and moves the warp past it (a barrier_block:
  // the warp arrives). A race stops at the racing lane.
  void run_op(WarpStep* s) {
    Warp& w = ws_[cur_];
    const LaneOp& op = p.ops[w.pc];
    switch (op.kind) {
      case LaneOpKind::kBarrierBlock: w.arrived = true; return;
      case LaneOpKind::kBarrier: ++w.epoch; ++w.pc; return;
      case LaneOpKind::kEndIf: w.masks.pop_back(); ++w.pc; return;
      case LaneOpKind::kIf: {
        std::vector<bool> m(w.vals.size());
        for (size_t l = 0; l < m.size(); ++l) {
          m[l] = active(w, l) && w.vals[l][op.args[0]].num != 0;
          if (s && record_effects && m[l]) s->effects.push_back({static_cast<int64_t>(cur_) * kWarp + static_cast<int64_t>(l), -1, 0, 1});
        }
        w.masks.push_back(std::move(m));
        ++w.pc;
        return;
      }
      default: break;
    }
    for (size_t l = 0; l < w.vals.size(); ++l) {
      const int64_t lane = static_cast<int64_t>(cur_) * kWarp + static_cast<int64_t>(l);
      // Lanes outside an `if` keep computing values (they are unused) but never touch memory.
      if (!lane_step(op, w, w.vals[l], lane, active(w, l))) return;  // a data race: stopped here
    }
    ++w.pc;
  }

  float* element(const LaneVal& ptr, const LaneOp& op, int64_t lane, const char* verb) {
    if (ptr.arg < 0 || !data_[ptr.arg])
      fail(ErrorKind::kType, op.span, std::string(verb) + " needs a pointer `tensor + index`", "pass a tensor plus an index");
    const int64_t numel = args_[ptr.arg].buffer->nbytes() / 4;
    const int64_t e = static_cast<int64_t>(ptr.num);
    if (!(ptr.num >= 0) || e >= numel)
      fail(ErrorKind::kValue, op.span, "lane " + std::to_string(lane) + " of block " + std::to_string(block_) + " " + verb +
               " element " + (std::isfinite(ptr.num) ? std::to_string(e) : std::to_string(ptr.num)) + " of '" +
               p.params[ptr.arg] + "', which holds " + std::to_string(numel) + " fp32 elements",
           "guard the access with `if i < n`");
    return data_[ptr.arg] + e;
  }

  // Logs an access; false (and race_ set) when it races with an earlier one.
  bool record(const LaneVal& ptr, int64_t lane, const Warp& w, bool write, const LaneOp& op, double value) {
    const int64_t e = static_cast<int64_t>(ptr.num);
    if (out_ && record_effects) out_->effects.push_back({lane, ptr.arg, e, value});
    auto& list = log_[(static_cast<int64_t>(ptr.arg) << 40) + e];
    const int64_t warp = lane / kWarp;
    for (const Access& a : list) {
      if (a.lane == lane || (!a.write && !write)) continue;
      const bool ordered = a.block_epoch < block_epoch_ || (a.lane / kWarp == warp && a.warp_epoch < w.epoch);
      if (ordered) continue;
      const bool same_warp = a.lane / kWarp == warp;
      WarpRace r;
      r.kernel = p.name;
      r.tensor = p.params[ptr.arg];
      r.arg = ptr.arg;
      r.block = block_;
      r.element = e;
      r.byte_offset = e * 4;
      r.first_lane = a.lane;
      r.second_lane = lane;
      r.first_write = a.write;
      r.second_write = write;
      r.first_line = a.line;
      r.second_line = op.span.line;
      r.step = steps_;
      r.span = op.span;
      r.message = "data race in kernel '" + p.name + "' (block " + std::to_string(block_) + "): lane " +
                  std::to_string(a.lane) + (a.write ? " writes" : " reads") + " element " + std::to_string(e) +
                  " (byte offset " + std::to_string(e * 4) + ") of '" + r.tensor + "' (line " + std::to_string(a.line) +
                  ") and lane " + std::to_string(lane) + (write ? " writes" : " reads") +
                  " it with no barrier covering both lanes in between" +
                  (same_warp ? "" : "; the lanes are in different warps (" + std::to_string(a.lane / kWarp) + " and " +
                                        std::to_string(warp) + "), and pto.barrier() only orders the 32 lanes of one warp");
      r.fix = same_warp ? "put pto.barrier() between the write and the read"
                        : "use pto.barrier_block() to order every lane of the block";
      race_ = std::move(r);
      if (out_) out_->raced = true;
      return false;
    }
    list.push_back(Access{lane, w.epoch, block_epoch_, write, op.span.line});
    return true;
  }

  // One lane's part of op; false at a data race.
  bool lane_step(const LaneOp& op, Warp& w, std::vector<LaneVal>& v, int64_t lane, bool on) {
    const int64_t global = block_ * shape_.block + lane;
    auto num = [&](int i) { return v[op.args[i]].num; };
    switch (op.kind) {
      case LaneOpKind::kConst: v[op.dst] = {op.value, -1, op.is_float}; break;
      case LaneOpKind::kParam: {
        const LaunchArg& a = args_[op.args[0]];
        v[op.dst] = a.buffer ? LaneVal{0, op.args[0]} : LaneVal{a.is_float ? a.f : static_cast<double>(a.i), -1, a.is_float};
        break;
      }
      case LaneOpKind::kGlobalId: v[op.dst] = {static_cast<double>(global), -1}; break;
      case LaneOpKind::kLaneId: v[op.dst] = {static_cast<double>(lane), -1}; break;
      case LaneOpKind::kBlockId: v[op.dst] = {static_cast<double>(block_), -1}; break;
      case LaneOpKind::kBinary: {
        const LaneVal& x = v[op.args[0]];
        const LaneVal& y = v[op.args[1]];
        const std::string& o = op.name;
        const bool fl = x.is_float || y.is_float || o == "/";
        if (on && (o == "//" || o == "%") && y.num == 0 && !fl)  // base/scalar_ops.h; lanes outside an `if` do not raise
          fail(ErrorKind::kValue, op.span, "integer division by zero in '" + o + "' (lane " + std::to_string(lane) +
                   " of block " + std::to_string(block_) + ")", "guard the divisor, or check the kernel's arguments");
        double r;
        if (o == "+") r = x.num + y.num;
        else if (o == "-") r = x.num - y.num;
        else if (o == "*") r = x.num * y.num;
        else if (o == "/") r = x.num / y.num;
        else if (o == "//") r = scalar::float_floor_div(x.num, y.num) + (fl ? -0.0 : 0.0);  // ints have no -0.0
        else if (o == "%") r = scalar::float_mod(x.num, y.num) + (fl ? -0.0 : 0.0);
        else if (o == "min") r = std::min(x.num, y.num);
        else if (o == "max") r = std::max(x.num, y.num);
        else if (o == "<") r = x.num < y.num;
        else if (o == "<=") r = x.num <= y.num;
        else if (o == ">") r = x.num > y.num;
        else if (o == ">=") r = x.num >= y.num;
        else if (o == "==") r = x.num == y.num;
        else r = x.num != y.num;
        const bool cmp = o == "<" || o == "<=" || o == ">" || o == ">=" || o == "==" || o == "!=";
        v[op.dst] = {r, (o == "+" || o == "-") ? std::max(x.arg, y.arg) : -1, fl && !cmp};
        if (on && out_ && record_effects) out_->effects.push_back({lane, -1, 0, r});
        break;
      }
      case LaneOpKind::kLoad: {
        if (!on) break;
        const float value = *element(v[op.args[0]], op, lane, "reads");
        v[op.dst] = {value, -1, true};
        return record(v[op.args[0]], lane, w, false, op, value);
      }
      case LaneOpKind::kStore: {
        if (!on) break;
        const float value = static_cast<float>(num(1));
        *element(v[op.args[0]], op, lane, "writes") = value;
        return record(v[op.args[0]], lane, w, true, op, value);
      }
      case LaneOpKind::kFma:
      case LaneOpKind::kMad: {
        if (!on) break;
        const float value = static_cast<float>(op.kind == LaneOpKind::kFma ? num(1) + num(2) + num(3) : num(1) * num(2) + num(3));
        *element(v[op.args[0]], op, lane, "writes") = value;
        return record(v[op.args[0]], lane, w, true, op, value);
      }
      default: break;
    }
    return true;
  }
};

WarpStepper::WarpStepper(std::shared_ptr<const LaneProgram> program, std::vector<LaunchArg> args, LaunchShape shape,
                         bool record_effects)
    : impl_(std::make_unique<Impl>(std::move(program), std::move(args), shape, record_effects)) {}
WarpStepper::~WarpStepper() = default;
bool WarpStepper::finished() const { return impl_->finished_; }
bool WarpStepper::stopped() const { return impl_->race_.has_value(); }
int64_t WarpStepper::steps() const { return impl_->steps_; }
WarpStep WarpStepper::next() const { return impl_->describe(); }
WarpStep WarpStepper::step() { return impl_->step(); }
const std::optional<WarpRace>& WarpStepper::race() const { return impl_->race_; }
const LaneProgram& WarpStepper::program() const { return impl_->p; }

void run_warps(const LaneProgram& program, const std::vector<LaunchArg>& args, LaunchShape shape) {
  // The caller's program outlives the run: borrowed, not copied.
  std::shared_ptr<const LaneProgram> borrowed(&program, [](const LaneProgram*) {});
  WarpStepper s(borrowed, args, shape, false);
  while (!s.done()) {
    engines::check_cancelled();  // Ctrl-C: the launch stream's flag (launch_queue.cpp)
    s.step();
  }
  if (s.race()) throw s.race()->error();
}

}  // namespace pypto::kernel
