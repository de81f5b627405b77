// PipelineLoops: runs after PlanMemory. A `for i in pl.pipeline(n, stage=k)` loop inside an
// InCore function becomes a plain loop of step k*step whose body holds k copies of the
// original body (copy j computes iteration i + j*step), followed by the iterations left
// over. Copy 0 keeps the addresses PlanMemory chose; copy j > 0 gets its own copy of the
// body's tiles in a fresh region above everything else in the buffer, so the k copies have
// disjoint buffer sets: one copy's loads (MTE2) run while the previous copy computes (V/M)
// and the one before stores (MTE3), and InsertSync orders only the true dependencies.
// Tiles that share storage with something outside the body (loop-carried values and their
// yields, views of outer tiles) keep their address in every copy.
#include <map>
#include <set>
#include <sstream>

#include "body_copy.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "tile_groups.h"

namespace pypto::passes {
namespace {

constexpr int64_t kMaxStages = 8;

ExprPtr index_const(int64_t v, const VarPtr& like, const Span& span) {
  auto* st = like->type->as<ScalarType>();
  return ConstInt::make(v, st ? st->dtype : DataType::INDEX, span);
}

int64_t aligned_bytes(const TypePtr& t, const isa::ChipSpec& chip) {
  return round_up(placed_bytes(t, chip.alignment_bytes, {}, ""), chip.alignment_bytes);
}

// Every tile Var a statement tree defines.
class TileDefs : public IRVisitor {
 public:
  std::vector<VarPtr> vars;

 protected:
  void visit_def(const VarPtr& v) override {
    if (is_placed(v->type)) vars.push_back(v);
  }
};

// A copy of the body whose tiles in `moved` take the address `addr - lo[m] + base[m]`.
class StageCopy : public BodyCopy {
 public:
  const std::set<const Var*>* moved = nullptr;
  std::map<MemorySpace, int64_t> shift;
  int64_t align = 32;

 protected:
  VarPtr mutate_def(const VarPtr& v) override {
    VarPtr c = BodyCopy::mutate_def(v);
    if (!is_placed(c->type) || !moved || !moved->count(v.get())) return c;
    const TileType& t = first_tile(c->type);
    return Var::make(c->name, placed_at(c->type, t.addr + shift[t.memory], align), c->span);
  }
};

// Expands the first (innermost) pl.pipeline loop it meets; `done` tells whether it did.
class Pipeliner : public SplicingMutator {
 public:
  Pipeliner(const Function& f, const isa::ChipSpec& chip) : chip_(chip) {
    GroupCollector groups;
    groups.visit_function(f);
    groups_ = std::move(groups.groups);
    TileDefs all;
    all.visit_function(f);
    for (auto& v : groups_.vars()) {
      const TileType* t = &first_tile(v->type);
      if (t->addr >= 0) top_[t->memory] = std::max(top_[t->memory], t->addr + aligned_bytes(v->type, chip));
    }
    function_ = f.name;
  }
  bool done = false;

 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s0) override {
    auto r = IRMutator::mutate_for(s0);  // inner loops first
    auto* s = r->as<ForStmt>();
    if (done || !s || s->for_kind != ForKind::Pipeline) return r;
    done = true;
    const int64_t k = s->stages;
    if (k < 1 || k > kMaxStages)
      fail(ErrorKind::kValue, s->span, "pl.pipeline stage=" + std::to_string(k) + " is outside 1.." + std::to_string(kMaxStages),
           "use stage=2 (ping-pong buffers) or stage=3 (load, compute and store each with their own buffers)");
    auto step = as_const_int(s->step);
    if (!step || *step <= 0)
      fail(ErrorKind::kValue, s->span, "pl.pipeline needs a positive step known at compile time",
           "write pl.pipeline(start, stop, step, stage=k) with a constant step > 0, or use pl.range");
    auto start = as_const_int(s->start), stop = as_const_int(s->stop);
    const bool constant = start && stop;
    const int64_t count = constant ? std::max<int64_t>(0, (*stop - *start + *step - 1) / *step) : -1;
    if (k == 1 || (constant && count < 2)) return as_range(*s, s->body);
    const Span& sp = s->span;
    const int64_t stride = k * *step;
    plan_regions(*s, k);

    // Main loop: fresh iter args and return vars; copy j reads the loop var plus j*step.
    auto main_var = Var::make(s->loop_var->name, s->loop_var->type, s->loop_var->span);
    std::vector<VarPtr> main_iter, main_ret;
    for (auto& v : s->iter_args) main_iter.push_back(Var::make(v->name, v->type, v->span));
    for (auto& v : s->return_vars) main_ret.push_back(Var::make(v->name, v->type, v->span));
    std::vector<ExprPtr> carried(main_iter.begin(), main_iter.end());
    std::vector<StmtPtr> body;
    for (int64_t j = 0; j < k; ++j) {
      ExprPtr i = j == 0 ? ExprPtr(main_var) : BinaryExpr::make(BinaryOp::Add, main_var, index_const(j * *step, main_var, sp), sp);
      for (auto& st : copy_body(*s, i, carried, j)) body.push_back(st);
    }
    body.push_back(YieldStmt::make(carried, sp));

    ExprPtr main_stop;
    int64_t main_count = 0;
    if (constant) {
      main_count = count / k;
      main_stop = index_const(*start + main_count * stride, s->loop_var, sp);
    } else {
      // start + max(stop - start, 0) // stride * stride
      auto len = BinaryExpr::make(BinaryOp::Max, BinaryExpr::make(BinaryOp::Sub, s->stop, s->start, sp),
                                  index_const(0, s->loop_var, sp), sp);
      auto whole = BinaryExpr::make(BinaryOp::Mul,
                                    BinaryExpr::make(BinaryOp::FloorDiv, len, index_const(stride, s->loop_var, sp), sp),
                                    index_const(stride, s->loop_var, sp), sp);
      main_stop = BinaryExpr::make(BinaryOp::Add, s->start, whole, sp);
    }
    const int64_t tail_copies = constant ? count - main_count * k : 0;
    const bool has_tail = !constant || tail_copies > 0;
    std::vector<StmtPtr> out;
    out.push_back(ForStmt::make(main_var, s->start, main_stop, index_const(stride, s->loop_var, sp), main_iter,
                                s->init_values, SeqStmts::make(body, sp), has_tail ? main_ret : s->return_vars,
                                ForKind::Range, 0, sp));
    if (!constant) {
      // The iterations after the last whole group (at most k-1) as a plain loop of the body.
      std::vector<ExprPtr> inits(main_ret.begin(), main_ret.end());
      auto tail = ForStmt::make(s->loop_var, main_stop, s->stop, s->step, s->iter_args, inits, s->body, s->return_vars,
                                ForKind::Range, 0, sp);
      out.push_back(tail);
    } else if (tail_copies > 0) {
      std::vector<ExprPtr> c(main_ret.begin(), main_ret.end());
      for (int64_t j = 0; j < tail_copies; ++j)
        for (auto& st : copy_body(*s, index_const(*start + (main_count * k + j) * *step, s->loop_var, sp), c, 0))
          out.push_back(st);
      for (size_t j = 0; j < s->return_vars.size(); ++j) {
        if (c[j]->as<Var>())  // a carried tile shares the return var's address (one group)
          replaced_[s->return_vars[j].get()] = std::static_pointer_cast<const Var>(c[j]);
        else
          out.push_back(AssignStmt::make(s->return_vars[j], c[j], sp));
      }
    }
    return SeqStmts::make(out, sp);
  }

 private:
  // Chooses which body tiles get a buffer per copy and where copy j's region starts.
  void plan_regions(const ForStmt& s, int64_t k) {
    TileDefs defs;
    defs.visit(s.body);
    std::set<const Var*> in_body;
    for (auto& v : defs.vars) in_body.insert(v.get());
    std::map<int, bool> group_inside;  // group -> every member defined in the body
    for (auto& v : groups_.vars()) {
      int g = groups_.group_of(v.get());
      auto [it, fresh] = group_inside.try_emplace(g, true);
      it->second = it->second && in_body.count(v.get());
    }
    moved_.clear();
    lo_.clear();
    std::map<MemorySpace, int64_t> hi;
    for (auto& v : defs.vars) {
      const TileType* t = &first_tile(v->type);
      if (t->addr < 0 || !group_inside[groups_.group_of(v.get())]) continue;
      moved_.insert(v.get());
      auto [it, fresh] = lo_.try_emplace(t->memory, t->addr);
      if (!fresh) it->second = std::min(it->second, t->addr);
      hi[t->memory] = std::max(hi[t->memory], t->addr + aligned_bytes(v->type, chip_));
    }
    region_ = {};
    for (auto& [m, low] : lo_) {
      int64_t size = hi[m] - low;
      region_[m] = size;
      int64_t need = top_[m] + (k - 1) * size;
      int64_t cap = chip_.capacity(m);
      if (need > cap) {
        std::ostringstream msg;
        msg << "pl.pipeline(stage=" << k << ") in InCore function '" << function_ << "' needs " << need << " bytes of "
            << buffer_name(m) << " (" << k << " buffer sets of " << size << " bytes for the loop body's tiles, plus "
            << (top_[m] - size) << " bytes of other tiles) but the " << chip_.platform << " chip has " << cap << " bytes per core";
        fail(ErrorKind::kCapacity, s.span, msg.str(),
             k > 2 ? "use stage=2, or smaller tiles per iteration"
                   : "use smaller tiles per iteration (e.g. half the rows), or pl.range without ping-pong buffers");
      }
    }
  }

  // One copy of the loop body for iteration value `i`, reading `carried` for the iter args;
  // `carried` becomes the copy's yielded values. Copy j > 0 moves its own tiles to region j.
  std::vector<StmtPtr> copy_body(const ForStmt& s, const ExprPtr& i, std::vector<ExprPtr>& carried, int64_t j) {
    StageCopy copy;
    copy.align = chip_.alignment_bytes;
    if (j > 0) {
      copy.moved = &moved_;
      for (auto& [m, low] : lo_) copy.shift[m] = top_[m] + (j - 1) * region_[m] - low;
    }
    copy.values[s.loop_var.get()] = i;
    for (size_t n = 0; n < s.iter_args.size(); ++n) copy.values[s.iter_args[n].get()] = carried[n];
    std::vector<StmtPtr> stmts;
    splice(copy.mutate(s.body), stmts);
    if (!stmts.empty() && stmts.back()->as<YieldStmt>()) {
      carried = stmts.back()->as<YieldStmt>()->values;
      stmts.pop_back();
    }
    return stmts;
  }

  static StmtPtr as_range(const ForStmt& s, const StmtPtr& body) {
    return ForStmt::make(s.loop_var, s.start, s.stop, s.step, s.iter_args, s.init_values, body, s.return_vars,
                         ForKind::Range, 0, s.span);
  }

  const isa::ChipSpec& chip_;
  std::string function_;
  TileGroups groups_;
  std::map<MemorySpace, int64_t> top_, lo_, region_;
  std::set<const Var*> moved_;
};

}  // namespace

ProgramPtr pipeline_loops(const ProgramPtr& program, const PassContext& ctx) {
  return map_kernels(program, [&](const FunctionPtr& f) {
    // One loop at a time: each expansion re-reads the addresses (inner loops first).
    FunctionPtr cur = f;
    while (true) {
      Pipeliner p(*cur, ctx.chip);
      FunctionPtr next = p.mutate_function(cur);
      if (!p.done) return cur;
      cur = next;
    }
  });
}

}  // namespace pypto::passes
