// InsertCarryCopies: a loop-carried tile shares one buffer address with the value yielded for
// it. When the body still reads the carried tile after that value is computed (`m = new_max`
// after `alpha = exp(m - new_max)`), sharing would clobber it; a copy just before the yield fixes it.
#include <unordered_map>
#include <vector>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/var_uses.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;
using namespace ops;

// A loop-carried tile also shares its buffer with its initial value. When that value is
// read again once the loop has started (in the body, after the loop, by a second carry, or
// by the next iteration of an enclosing loop), the loop would clobber it: such an initial
// value is copied just before the loop. This walk finds them: for each loop, the indices of
// its init values that need a copy.
class InitUses : public IRVisitor {
 public:
  std::unordered_map<const Stmt*, std::vector<size_t>> copies;

  void run(const Function& f) {
    visit_function(f);
    for (auto& [loop, info] : loops_) {
      std::vector<size_t> out;
      for (size_t i = 0; i < info.inits.size(); ++i) {
        auto* v = info.inits[i];
        if (!v) continue;
        bool again = false;
        for (int p : uses_[v]) again |= p > info.pos;
        for (size_t j = 0; j < info.inits.size(); ++j) again |= j != i && info.inits[j] == v;
        auto d = def_.find(v);
        again |= d != def_.end() && d->second < info.outer_start;
        if (again) out.push_back(i);
      }
      if (!out.empty()) copies[loop] = out;
    }
  }

 protected:
  using IRVisitor::visit;
  void visit(const StmtPtr& s) override {
    ++pos_;
    IRVisitor::visit(s);
  }
  void visit_def(const VarPtr& v) override { def_.emplace(v.get(), pos_); }
  void visit_var(const VarPtr& v) override { uses_[v.get()].push_back(pos_); }
  void visit_for(const ForStmt& s) override {
    note(&s, s.iter_args, s.init_values);
    enclosing_.push_back(pos_);
    IRVisitor::visit_for(s);
    enclosing_.pop_back();
  }
  void visit_while(const WhileStmt& s) override {
    note(&s, s.iter_args, s.init_values);
    enclosing_.push_back(pos_);
    IRVisitor::visit_while(s);
    enclosing_.pop_back();
  }

 private:
  struct Loop {
    int pos = 0, outer_start = -1;
    std::vector<const Var*> inits;  // a copyable tile Var per init value, else null
  };
  void note(const Stmt* loop, const std::vector<VarPtr>& iter_args, const std::vector<ExprPtr>& inits) {
    Loop info;
    info.pos = pos_;
    info.outer_start = enclosing_.empty() ? -1 : enclosing_.back();
    for (size_t i = 0; i < inits.size(); ++i) {
      auto* v = inits[i]->as<Var>();
      auto* t = i < iter_args.size() ? iter_args[i]->type->as<TileType>() : nullptr;
      bool copyable = t && (t->memory == MemorySpace::Vec || t->memory == MemorySpace::Mat);
      info.inits.push_back(v && copyable ? v : nullptr);
    }
    loops_.emplace_back(loop, info);
  }
  int pos_ = 0;
  std::vector<int> enclosing_;
  std::unordered_map<const Var*, int> def_;
  std::unordered_map<const Var*, std::vector<int>> uses_;
  std::vector<std::pair<const Stmt*, Loop>> loops_;
};

class CarryCopier : public IRMutator {
 public:
  explicit CarryCopier(std::unordered_map<const Stmt*, std::vector<size_t>> init_copies)
      : init_copies_(std::move(init_copies)) {}

 protected:
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    auto r = std::static_pointer_cast<const ForStmt>(IRMutator::mutate_for(s));
    StmtPtr body = copied_body(r->iter_args, r->body);
    std::vector<StmtPtr> before;
    auto inits = copied_inits(s.get(), r->init_values, before);
    if (!body && before.empty()) return r;
    StmtPtr loop = ForStmt::make(r->loop_var, r->start, r->stop, r->step, r->iter_args, inits, body ? body : r->body,
                                 r->return_vars, r->for_kind, r->stages, r->span);
    return with_before(before, loop);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    auto r = std::static_pointer_cast<const WhileStmt>(IRMutator::mutate_while(s));
    StmtPtr body = copied_body(r->iter_args, r->body);
    std::vector<StmtPtr> before;
    auto inits = copied_inits(s.get(), r->init_values, before);
    if (!body && before.empty()) return r;
    StmtPtr loop = WhileStmt::make(r->iter_args, inits, r->cond, body ? body : r->body, r->return_vars, r->span);
    return with_before(before, loop);
  }
  // Copies placed before a loop join the enclosing statement list.
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    return mutate_seq_spliced(s, [](const StmtPtr& x) { return !x->as<SeqStmts>(); });
  }

 private:
  std::vector<ExprPtr> copied_inits(const Stmt* loop, std::vector<ExprPtr> inits, std::vector<StmtPtr>& before) {
    auto it = init_copies_.find(loop);
    if (it == init_copies_.end()) return inits;
    for (size_t i : it->second) {
      auto* tile = inits[i]->type->as<TileType>();
      auto copy = Var::make(inits[i]->as<Var>()->name + "_init", inits[i]->type, loop->span);
      before.push_back(AssignStmt::make(
          copy, make_op_call("tile.move", {inits[i]}, {}, {{"target_memory", tile->memory}}, loop->span), loop->span));
      inits[i] = copy;
    }
    return inits;
  }
  static StmtPtr with_before(std::vector<StmtPtr> before, StmtPtr loop) {
    if (before.empty()) return loop;
    before.push_back(std::move(loop));
    return SeqStmts::make(before, before.back()->span);
  }

  std::unordered_map<const Stmt*, std::vector<size_t>> init_copies_;

  // The loop body with a copy before its trailing yield for every carried tile that needs
  // one; null when none does.
  static StmtPtr copied_body(const std::vector<VarPtr>& iter_args, const StmtPtr& body) {
    auto* seq = body->as<SeqStmts>();
    if (!seq || seq->stmts.empty()) return nullptr;
    auto* y = seq->stmts.back()->as<YieldStmt>();
    if (!y) return nullptr;
    std::vector<StmtPtr> stmts(seq->stmts.begin(), seq->stmts.end() - 1);
    std::vector<ExprPtr> values = y->values;
    bool changed = false;
    for (size_t i = 0; i < iter_args.size() && i < values.size(); ++i) {
      auto* tile = iter_args[i]->type->as<TileType>();
      auto* yv = values[i]->as<Var>();
      if (!tile || !yv || yv == iter_args[i].get()) continue;
      if (!needs_copy(stmts, iter_args[i].get(), yv)) continue;
      auto* ytile = values[i]->type->as<TileType>();
      if (!ytile || (ytile->memory != MemorySpace::Vec && ytile->memory != MemorySpace::Mat))
        fail(ErrorKind::kType, y->span,
             "loop-carried tile '" + iter_args[i]->name + "' is read after its next value '" + yv->name +
                 "' is computed, and " + memory_space_name(ytile ? ytile->memory : tile->memory) +
                 " tiles cannot be copied on chip to keep both",
             "compute the next value of '" + iter_args[i]->name + "' after its last use in the loop body");
      auto copy = Var::make(yv->name + "_carry", values[i]->type, y->span);
      stmts.push_back(AssignStmt::make(
          copy, make_op_call("tile.move", {values[i]}, {}, {{"target_memory", ytile->memory}}, y->span), y->span));
      values[i] = copy;
      changed = true;
    }
    if (!changed) return nullptr;
    stmts.push_back(YieldStmt::make(values, y->span));
    return SeqStmts::make(stmts, seq->span);
  }

  // True when `carried` is read by a statement after the one defining `next`, or `next` is
  // not defined in this body at all (another carried value, or a value from outside the loop).
  static bool needs_copy(const std::vector<StmtPtr>& stmts, const Var* carried, const Var* next) {
    size_t def = stmts.size();
    for (size_t k = 0; k < stmts.size() && def == stmts.size(); ++k)
      if (collect_var_uses(stmts[k]).defined_set.count(next)) def = k;
    if (def == stmts.size()) return true;
    for (size_t k = def + 1; k < stmts.size(); ++k)
      if (collect_var_uses(stmts[k]).used_set.count(carried)) return true;
    return read_while_defining(stmts[def], carried, next);
  }

  // True when the statement defining `next` may read `carried` after `next` is computed. An
  // assignment reads its operands first. A branch result is one value: each arm is checked on
  // its own (`if k == 0: acc = matmul(a, b) else: acc = matmul_acc(acc, a, b)` reads the
  // carried tile only in the else arm, before replacing it); an arm passing `carried` through
  // is no conflict. A loop result is no conflict when `carried` only starts that loop's own
  // carry (the inner loop places its copies itself). Anything else that reads it is.
  static bool read_while_defining(const StmtPtr& st, const Var* carried, const Var* next) {
    if (st->as<AssignStmt>() || !collect_var_uses(st).used_set.count(carried)) return false;
    auto result_index = [&](const std::vector<VarPtr>& results) {
      for (size_t j = 0; j < results.size(); ++j)
        if (results[j].get() == next) return j;
      return results.size();
    };
    if (auto* ifs = st->as<IfStmt>()) {
      size_t j = result_index(ifs->return_vars);
      if (j == ifs->return_vars.size() || !ifs->else_body) return true;
      for (const StmtPtr& arm : {ifs->then_body, ifs->else_body}) {
        auto* seq = arm->as<SeqStmts>();
        std::vector<StmtPtr> stmts = seq ? seq->stmts : std::vector<StmtPtr>{arm};
        auto* y = stmts.empty() ? nullptr : stmts.back()->as<YieldStmt>();
        auto* yv = y && j < y->values.size() ? y->values[j]->as<Var>() : nullptr;
        if (!yv) return true;
        if (yv == carried) continue;  // passed through unchanged
        stmts.pop_back();
        if (needs_copy(stmts, carried, yv)) return true;
      }
      return false;
    }
    if (auto* fs = st->as<ForStmt>()) {
      size_t j = result_index(fs->return_vars);
      if (j == fs->return_vars.size() || collect_var_uses(fs->body).used_set.count(carried)) return true;
      for (size_t i = 0; i < fs->init_values.size(); ++i)
        if (i != j && collect_var_uses(EvalStmt::make(fs->init_values[i])).used_set.count(carried)) return true;
      return false;
    }
    return true;
  }
};

bool is_kernel(const Function& f) {
  return f.func_type == FunctionType::InCore || f.func_type == FunctionType::AIC || f.func_type == FunctionType::AIV;
}

}  // namespace

ProgramPtr insert_carry_copies(const ProgramPtr& program, const PassContext&) {
  std::vector<FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    if (!is_kernel(*f)) {
      functions.push_back(f);
      continue;
    }
    InitUses uses;
    uses.run(*f);
    functions.push_back(CarryCopier(std::move(uses.copies)).mutate_function(f));
    changed |= functions.back() != f;
  }
  return changed ? Program::make(program->name, functions) : program;
}

}  // namespace pypto::passes
