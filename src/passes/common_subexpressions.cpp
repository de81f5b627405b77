// CommonSubexpressions: in each statement list of a kernel, a tile op computing what an
// earlier one in the same list computed (same op, attributes and operands, the operands the
// same values) is dropped and its uses read the earlier result; likewise a loop that only
// computes values (a reduction's walk) repeating an earlier one. LowerTensorOps writes each
// tensor-level statement on its own, so a value two statements read (the scores of an online
// softmax, read by its row max and by its exp) was computed twice.
#include <unordered_map>
#include <unordered_set>

#include "pypto/ir/op_def.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ir/var_uses.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "effects.h"

namespace pypto::passes {
namespace {
using namespace ir;

// A tile op that is a function of its operands: no write, no effect, not a fresh buffer
// (pl.tile.create: two are two buffers), and reading a tile or a tensor: a fill made from
// scalars alone (pl.full, ci, tri) costs less than the copy that sharing it needs when it
// starts two loop-carried values (two accumulators set to zero).
bool candidate(const Call& c) {
  const std::string& n = c.op->name;
  if (n.rfind("tile.", 0) != 0 || !c.op->writes.empty() || c.op->effects || n.find("create") != std::string::npos)
    return false;
  for (const ExprPtr& a : c.args)
    if (a && a->type && (a->type->as<TileType>() || a->type->as<TensorType>())) return true;
  return false;
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
    struct Known {
      StmtPtr key;                  // the statement, its operands read through `same`
      std::vector<VarPtr> results;  // the Vars it leaves to the statements after it
      std::vector<VarPtr> reads;    // the Vars it reads, in first-use order
    };
    std::unordered_map<const Var*, VarPtr> same;  // a dropped result -> the earlier one
    std::vector<std::vector<VarPtr>> earlier(n);  // statement i repeats the one defining these
    std::unordered_map<uint64_t, std::vector<Known>> known;
    for (size_t i = 0; i < n; ++i) {
      auto* a = stmts[i]->as<AssignStmt>();
      auto* c = a ? a->value->as<Call>() : nullptr;
      auto* f = stmts[i]->as<ForStmt>();
      // A call, or a plain loop computing values only (a reduction walking its blocks, a
      // matmul walking K), compared whole: its own Vars correspond one to one.
      const bool call = c && candidate(*c);
      const bool loop = f && f->for_kind == ForKind::Range && !f->return_vars.empty() && !writes_memory(stmts[i]);
      if (!call && !loop) {
        if (writes_memory(stmts[i])) known.clear();
        continue;
      }
      Known k{same.empty() ? stmts[i] : Renamer(same).mutate(stmts[i]), call ? std::vector<VarPtr>{a->var} : f->return_vars,
              {}};
      k.reads = collect_var_uses(k.key).free_vars();
      // A call is compared by its value (its result Vars differ); a loop whole.
      auto value = [call](const StmtPtr& st) { return call ? st->as<AssignStmt>()->value : nullptr; };
      const uint64_t h = call ? structural_hash(value(k.key)) : structural_hash(k.key);
      auto& bucket = known[h];
      for (const Known& other : bucket) {
        if (other.results.size() != k.results.size() || other.reads != k.reads ||
            (other.key->as<AssignStmt>() != nullptr) != call)
          continue;
        bool equal = call ? structural_equal(value(k.key), value(other.key)) : structural_equal(k.key, other.key);
        for (size_t q = 0; equal && q < k.results.size(); ++q)
          equal = structural_equal(other.results[q]->type, k.results[q]->type);
        if (!equal) continue;
        earlier[i] = other.results;
        for (size_t q = 0; q < k.results.size(); ++q) same[k.results[q].get()] = other.results[q];
        break;
      }
      if (earlier[i].empty()) bucket.push_back(std::move(k));
    }
    if (same.empty()) return r;

    // A repeated Mat / Left / Right / Acc tile stays when anything that stays reads it: those
    // buffers hold a kernel's double buffers, with no room for a tile kept alive longer.
    std::vector<std::vector<VarPtr>> reads(n);
    for (size_t i = 0; i < n; ++i) reads[i] = collect_var_uses(stmts[i]).free_vars();
    auto results_of = [&](size_t i) {
      if (auto* a = stmts[i]->as<AssignStmt>()) return std::vector<VarPtr>{a->var};
      return stmts[i]->as<ForStmt>()->return_vars;
    };
    std::unordered_map<const Var*, size_t> defined_at;
    for (size_t i = 0; i < n; ++i)
      if (!earlier[i].empty())
        for (const VarPtr& v : results_of(i)) defined_at[v.get()] = i;
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = 0; i < n; ++i) {
        if (!earlier[i].empty()) continue;
        for (const VarPtr& v : reads[i]) {
          auto it = defined_at.find(v.get());
          if (it == defined_at.end() || earlier[it->second].empty() || !on_cube_side(v)) continue;
          earlier[it->second].clear();
          changed = true;
        }
      }
    }
    std::unordered_map<const Var*, VarPtr> rename;  // to results of statements no other repeats
    for (size_t i = 0; i < n; ++i)
      if (!earlier[i].empty()) {
        const std::vector<VarPtr> mine = results_of(i);
        for (size_t k = 0; k < mine.size(); ++k) rename[mine[k].get()] = earlier[i][k];
      }
    if (rename.empty()) return r;
    Renamer renamer(rename);
    std::vector<StmtPtr> out;
    for (size_t i = 0; i < n; ++i)
      if (earlier[i].empty()) out.push_back(renamer.mutate(stmts[i]));
    return SeqStmts::make(out, s->span);
  }
};

}  // namespace

ProgramPtr common_subexpressions(const ProgramPtr& program, const PassContext&) {
  return map_kernels(program, [](const FunctionPtr& f) { return Cse().mutate_function(f); });
}

}  // namespace pypto::passes
