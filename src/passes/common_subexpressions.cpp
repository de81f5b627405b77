// CommonSubexpressions: in each statement list of a kernel, a tile op computing what an
// earlier one in the same list computed (same op, attributes and operands, the operands the
// same values) is dropped and its uses read the earlier result. LowerTensorOps writes each
// tensor-level statement on its own, so a value two statements read (the scores of an online
// softmax, read by its row max and by its exp) was computed twice.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/op_def.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/var_uses.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {
namespace {
using namespace ir;

// The Vars an expression reads, in first-use order, each once.
std::vector<const Var*> vars_read(const ExprPtr& e) {
  struct Reads : IRVisitor {
    std::vector<const Var*> order;
    std::unordered_set<const Var*> seen;
    void visit_var(const VarPtr& v) override {
      if (seen.insert(v.get()).second) order.push_back(v.get());
    }
  } r;
  r.visit(e);
  return r.order;
}

// Anything in `s` that writes memory or has an effect beyond its result.
bool writes(const StmtPtr& s) {
  struct Finder : IRVisitor {
    bool found = false;
    void visit_call(const Call& c) override {
      found |= !c.op->writes.empty() || c.op->effects;
      IRVisitor::visit_call(c);
    }
    void visit_func_call(const FuncCall& c) override {
      found = true;
      IRVisitor::visit_func_call(c);
    }
  } f;
  f.visit(s);
  return f.found;
}

// A tile op that is a function of its operands: no write, no effect, not a fresh buffer
// (pl.tile.create: two are two buffers).
bool candidate(const Call& c) {
  const std::string& n = c.op->name;
  return n.rfind("tile.", 0) == 0 && c.op->writes.empty() && !c.op->effects && n.find("create") == std::string::npos;
}

bool cube_side(const VarPtr& v) {
  auto* t = v->type ? v->type->as<TileType>() : nullptr;
  return t && t->memory != MemorySpace::Vec;
}

class Renamer : public IRMutator {
 public:
  explicit Renamer(const std::unordered_map<const Var*, VarPtr>& map) { replaced_ = map; }
};

class Cse : public IRMutator {
 protected:
  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s0) override {
    StmtPtr r = IRMutator::mutate_seq(s0);  // nested lists first
    auto* s = r->as<SeqStmts>();
    if (!s) return r;
    const std::vector<StmtPtr>& stmts = s->stmts;
    const size_t n = stmts.size();

    // Which statements repeat an earlier one, with the operands read through the
    // replacements found so far. A write ends what is known (a load after a store reads
    // memory the store may have changed).
    std::unordered_map<const Var*, ExprPtr> same;  // a dropped result -> the earlier one
    std::vector<VarPtr> earlier(n);                // statement i repeats the one defining earlier[i]
    std::unordered_map<uint64_t, std::vector<std::pair<ExprPtr, VarPtr>>> known;
    for (size_t i = 0; i < n; ++i) {
      auto* a = stmts[i]->as<AssignStmt>();
      auto* c = a ? a->value->as<Call>() : nullptr;
      if (!c || !candidate(*c)) {
        if (writes(stmts[i])) known.clear();
        continue;
      }
      ExprPtr key = same.empty() ? a->value : substitute(a->value, same);
      const uint64_t h = structural_hash(key);
      auto& bucket = known[h];
      const std::vector<const Var*> reads = vars_read(key);
      for (auto& [other, var] : bucket)
        if (structural_equal(key, other) && vars_read(other) == reads && structural_equal(var->type, a->var->type)) {
          earlier[i] = var;
          same[a->var.get()] = var;
          break;
        }
      if (!earlier[i]) bucket.push_back({key, a->var});
    }
    if (same.empty()) return r;

    // A repeated Mat / Left / Right / Acc tile stays when anything that stays reads it: those
    // buffers hold a kernel's double buffers, with no room for a tile kept alive longer.
    std::vector<std::vector<VarPtr>> reads(n);
    for (size_t i = 0; i < n; ++i) reads[i] = collect_var_uses(stmts[i]).free_vars();
    std::unordered_map<const Var*, size_t> defined_at;
    for (size_t i = 0; i < n; ++i)
      if (auto* a = stmts[i]->as<AssignStmt>()) defined_at[a->var.get()] = i;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < n; ++i) {
        if (earlier[i]) continue;
        for (const VarPtr& v : reads[i]) {
          auto it = defined_at.find(v.get());
          if (it == defined_at.end() || !earlier[it->second] || !cube_side(v)) continue;
          earlier[it->second] = nullptr;
          changed = true;
        }
      }
    }
    std::unordered_map<const Var*, VarPtr> rename;
    for (size_t i = 0; i < n; ++i)
      if (earlier[i]) {
        rename[stmts[i]->as<AssignStmt>()->var.get()] = earlier[i];  // a statement no other repeats
      }
    if (rename.empty()) return r;
    Renamer renamer(rename);
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < n; ++i)
      if (!earlier[i]) out.push_back(renamer.mutate(stmts[i]));
    return SeqStmts::make(out, s->span);
  }
};

}  // namespace

ProgramPtr common_subexpressions(const ProgramPtr& program, const PassContext&) {
  return map_kernels(program, [](const FunctionPtr& f) { return Cse().mutate_function(f); });
}

}  // namespace pypto::passes
