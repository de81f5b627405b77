// The warp model of lane programs: each block's lanes run in warps of 32 that are scheduled
// independently (a warp runs until it reaches pto.barrier_block() or the end), and every
// access to device memory is checked for data races between lanes not ordered by a barrier.
#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "pypto/base/scalar_ops.h"
#include "pypto/kernel/lower_lanes.h"

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

class WarpRunner {
 public:
  WarpRunner(const LaneProgram& p, const std::vector<LaunchArg>& args, LaunchShape shape)
      : p_(p), args_(args), shape_(shape) {
    for (const LaneOp& op : p.ops)
      if (op.kind != LaneOpKind::kConst && op.kind != LaneOpKind::kParam && op.kind != LaneOpKind::kGlobalId &&
          op.kind != LaneOpKind::kBlockId && op.kind != LaneOpKind::kLaneId && op.kind != LaneOpKind::kBinary &&
          op.kind != LaneOpKind::kLoad && op.kind != LaneOpKind::kStore && op.kind != LaneOpKind::kFma &&
          op.kind != LaneOpKind::kMad && op.kind != LaneOpKind::kIf && op.kind != LaneOpKind::kEndIf &&
          op.kind != LaneOpKind::kBarrier && op.kind != LaneOpKind::kBarrierBlock)
        fail(ErrorKind::kType, op.span, "pipeline operations cannot be mixed with barriers in one kernel",
             "put the pipeline in its own kernel");
    for (const LaunchArg& a : args)
      data_.push_back(a.buffer ? reinterpret_cast<float*>(a.buffer->data("kernel launch")) : nullptr);
  }

  void run() {
    for (int64_t b = 0; b < shape_.grid; ++b) run_block(b);
  }

 private:
  struct Warp {
    int pc = 0;
    int64_t epoch = 0;
    std::vector<std::vector<LaneVal>> vals;  // [lane][value]
    std::vector<std::vector<bool>> masks;    // if-stack of active flags per lane
  };

  void run_block(int64_t b) {
    block_ = b;
    block_epoch_ = 0;
    log_.clear();
    const int64_t warps = (shape_.block + kWarp - 1) / kWarp;
    std::vector<Warp> ws(warps);
    for (int64_t w = 0; w < warps; ++w) {
      const int64_t lanes = std::min(kWarp, shape_.block - w * kWarp);
      ws[w].vals.assign(lanes, std::vector<LaneVal>(p_.num_values));
    }
    const int end = static_cast<int>(p_.ops.size());
    for (;;) {
      // Each warp runs on its own until the next block barrier (or the end).
      for (int64_t w = 0; w < warps; ++w) run_warp(ws[w], w);
      if (ws[0].pc >= end) break;
      ++block_epoch_;
      for (Warp& w : ws) ++w.pc;  // past the barrier_block
    }
  }

  bool active(const Warp& w, int64_t l) const {
    for (const auto& m : w.masks)
      if (!m[l]) return false;
    return true;
  }

  void run_warp(Warp& w, int64_t warp) {
    const int end = static_cast<int>(p_.ops.size());
    for (; w.pc < end; ++w.pc) {
      const LaneOp& op = p_.ops[w.pc];
      if (op.kind == LaneOpKind::kBarrierBlock) return;
      if (op.kind == LaneOpKind::kBarrier) { ++w.epoch; continue; }
      if (op.kind == LaneOpKind::kEndIf) { w.masks.pop_back(); continue; }
      if (op.kind == LaneOpKind::kIf) {
        std::vector<bool> m(w.vals.size());
        for (size_t l = 0; l < m.size(); ++l) m[l] = w.vals[l][op.args[0]].num != 0;
        w.masks.push_back(std::move(m));
        continue;
      }
      for (size_t l = 0; l < w.vals.size(); ++l) {
        const int64_t lane = warp * kWarp + static_cast<int64_t>(l);
        // Lanes outside an `if` keep computing values (they are unused) but never touch memory.
        const bool on = active(w, static_cast<int64_t>(l));
        lane_step(op, w, w.vals[l], lane, on);
      }
    }
  }

  float* element(const LaneVal& ptr, const LaneOp& op, int64_t lane, const char* verb) {
    if (ptr.arg < 0 || !data_[ptr.arg])
      fail(ErrorKind::kType, op.span, std::string(verb) + " needs a pointer `tensor + index`", "pass a tensor plus an index");
    const int64_t numel = args_[ptr.arg].buffer->nbytes() / 4;
    const int64_t e = static_cast<int64_t>(ptr.num);
    if (e < 0 || e >= numel)
      fail(ErrorKind::kValue, op.span, "lane " + std::to_string(lane) + " of block " + std::to_string(block_) + " " + verb +
               " element " + std::to_string(e) + " of '" + p_.params[ptr.arg] + "', which holds " + std::to_string(numel) +
               " fp32 elements", "guard the access with `if i < n`");
    return data_[ptr.arg] + e;
  }

  void record(const LaneVal& ptr, int64_t lane, const Warp& w, bool write, const LaneOp& op) {
    auto& list = log_[(static_cast<int64_t>(ptr.arg) << 40) + static_cast<int64_t>(ptr.num)];
    const int64_t warp = lane / kWarp;
    for (const Access& a : list) {
      if (a.lane == lane || (!a.write && !write)) continue;
      const bool ordered = a.block_epoch < block_epoch_ || (a.lane / kWarp == warp && a.warp_epoch < w.epoch);
      if (ordered) continue;
      const bool same_warp = a.lane / kWarp == warp;
      fail(ErrorKind::kRuntime, op.span,
           "data race in kernel '" + p_.name + "' (block " + std::to_string(block_) + "): lane " + std::to_string(a.lane) +
               (a.write ? " writes" : " reads") + " element " + std::to_string(static_cast<int64_t>(ptr.num)) + " of '" +
               p_.params[ptr.arg] + "' (line " + std::to_string(a.line) + ") and lane " + std::to_string(lane) +
               (write ? " writes" : " reads") + " it with no barrier covering both lanes in between" +
               (same_warp ? "" : "; the lanes are in different warps (" + std::to_string(a.lane / kWarp) + " and " +
                                      std::to_string(warp) + "), and pto.barrier() only orders the 32 lanes of one warp"),
           same_warp ? "put pto.barrier() between the write and the read"
                     : "use pto.barrier_block() to order every lane of the block");
    }
    list.push_back(Access{lane, w.epoch, block_epoch_, write, op.span.line});
  }

  void lane_step(const LaneOp& op, Warp& w, std::vector<LaneVal>& v, int64_t lane, bool on) {
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
        break;
      }
      case LaneOpKind::kLoad:
        if (!on) break;
        v[op.dst] = {*element(v[op.args[0]], op, lane, "reads"), -1, true};
        record(v[op.args[0]], lane, w, false, op);
        break;
      case LaneOpKind::kStore:
        if (!on) break;
        *element(v[op.args[0]], op, lane, "writes") = static_cast<float>(num(1));
        record(v[op.args[0]], lane, w, true, op);
        break;
      case LaneOpKind::kFma:
      case LaneOpKind::kMad:
        if (!on) break;
        *element(v[op.args[0]], op, lane, "writes") =
            static_cast<float>(op.kind == LaneOpKind::kFma ? num(1) + num(2) + num(3) : num(1) * num(2) + num(3));
        record(v[op.args[0]], lane, w, true, op);
        break;
      default: break;
    }
  }

  const LaneProgram& p_;
  const std::vector<LaunchArg>& args_;
  LaunchShape shape_;
  std::vector<float*> data_;
  int64_t block_ = 0, block_epoch_ = 0;
  std::unordered_map<int64_t, std::vector<Access>> log_;
};

}  // namespace

void run_warps(const LaneProgram& program, const std::vector<LaunchArg>& args, LaunchShape shape) {
  if (args.size() != program.params.size())
    fail(ErrorKind::kValue, {}, "kernel '" + program.name + "' takes " + std::to_string(program.params.size()) +
             " arguments, got " + std::to_string(args.size()), "pass one argument per parameter");
  WarpRunner(program, args, shape).run();
}

}  // namespace pypto::kernel
