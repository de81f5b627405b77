// LowerTensorOps: tensor-level compute (`out[:] = pl.exp(pl.add(x, y))`, row reductions,
// broadcasts, `pl.matmul` on Tensors) inside InCore functions becomes loops over output
// blocks that load tiles, run the tile ops and store, with block sizes fitted to UB/L1/L0.
#include <algorithm>
#include <functional>
#include <map>
#include <numeric>

#include "pypto/ops/op_registry.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ops/tensor_ops.h"
#include "pypto/ir/var_uses.h"
#include "pypto/ir/visitor.h"
#include "pypto/passes/pass.h"
#include "effects.h"

namespace pypto::passes {
namespace {
using namespace ir;
using namespace ops;

ExprPtr idx(int64_t v) { return ConstInt::make(v); }

ExprPtr add(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(*ca + *cb);
  if (ca && *ca == 0) return b;
  if (cb && *cb == 0) return a;
  return BinaryExpr::make(BinaryOp::Add, a, b);
}

ExprPtr mul(const ExprPtr& a, int64_t b) {
  auto ca = as_const_int(a);
  if (ca) return idx(*ca * b);
  return b == 1 ? a : BinaryExpr::make(BinaryOp::Mul, a, idx(b));
}

ExprPtr sub(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(*ca - *cb);
  if (cb && *cb == 0) return a;
  return BinaryExpr::make(BinaryOp::Sub, a, b);
}

// min / max of two INDEX values, folded when both are constants.
ExprPtr vmin(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(std::min(*ca, *cb));
  if (a.get() == b.get()) return a;
  return BinaryExpr::make(BinaryOp::Min, a, b);
}
ExprPtr vmax(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca && cb) return idx(std::max(*ca, *cb));
  return BinaryExpr::make(BinaryOp::Max, a, b);
}

// A window of a 2-D value: rows r0.. and columns c0.., `rows` x `cols` allocated; vrows/vcols
// are the run-time valid extents of a ragged edge block (null when the whole block is valid).
struct Block {
  ExprPtr r0, c0;
  int64_t rows, cols;
  ExprPtr vrows, vcols;
};

// One tiled extent: blocks of `size` covering `extent`; ragged when the last block is partial.
struct Tiling {
  int64_t size;
  ExprPtr extent;
  int64_t count_static = -1;  // number of blocks when the extent is static
  bool ragged() const {
    auto e = as_const_int(extent);
    return !e || *e % size != 0;
  }
  ExprPtr count() const {
    if (auto e = as_const_int(extent)) return idx((*e + size - 1) / size);
    return BinaryExpr::make(BinaryOp::FloorDiv, add(extent, idx(size - 1)), idx(size));
  }
  bool single() const {
    auto e = as_const_int(extent);
    return e && *e <= size;
  }
  // Valid extent of the block starting at `start`, or null when every block is whole.
  ExprPtr valid(const ExprPtr& start) const {
    if (!ragged()) return nullptr;
    if (single()) return extent;
    auto e = as_const_int(extent), s = as_const_int(start);
    if (e && s) return idx(std::min(size, *e - *s));  // folded, as the parser folds constants
    return BinaryExpr::make(BinaryOp::Min, idx(size), BinaryExpr::make(BinaryOp::Sub, extent, start));
  }
};

int64_t floor_pow2(int64_t v) {
  int64_t p = 1;
  while (p * 2 <= v) p *= 2;
  return p;
}

// The block size for one extent: the whole extent when it fits under `cap`, else the largest
// power of two <= cap that divides it (no ragged edge), else cap (ragged edge). `unit` keeps
// Vec rows a multiple of 32 bytes.
int64_t pick_size(const ExprPtr& extent, int64_t cap, int64_t unit) {
  cap = std::max<int64_t>(unit, cap / unit * unit);
  auto e = as_const_int(extent);
  if (e && *e <= cap) return (*e + unit - 1) / unit * unit;
  for (int64_t p = floor_pow2(cap); e && p >= std::max<int64_t>({unit, 8, cap / 4}); p /= 2)
    if (*e % p == 0) return p;
  return std::max(unit, floor_pow2(cap));
}

int64_t dtype_size(const TypePtr& t) { return dtype_bytes(*element_dtype(t)); }
const TensorType& tensor_of(const ExprPtr& e) { return *e->type->as<TensorType>(); }

class Lowerer : public IRMutator {
 public:
  explicit Lowerer(const isa::ChipSpec& chip) : chip_(chip) {}

  std::unordered_map<const Var*, ExprPtr> defs_;  // tensor-level values, by their Var

  // The function's tensor parameters are roots of views at the outermost scope.
  void enter(const Function& f) {
    for (auto& p : f.params) depth_of_[p.get()] = 0;
  }

 protected:
  // Scope depth (loops, branches) of the tensors written through views: a write updates the
  // root's SSA name only in the scope that defines the root.
  int depth_ = 0;
  std::unordered_map<const Var*, int> depth_of_;
  VarPtr mutate_def(const VarPtr& v) override {
    if (auto it = retype_.find(v.get()); it != retype_.end()) return it->second;
    if (v->type && v->type->as<TensorType>() && !depth_of_.count(v.get())) depth_of_[v.get()] = depth_;
    return v;
  }
  StmtPtr mutate_for(const std::shared_ptr<const ForStmt>& s) override {
    // A tensor-level value carried by the loop (split-K: acc = pl.matmul_acc(acc, x[:, k:k+64], ...))
    // is one whole tile, as PyPTO's tensors inside a kernel are: computed before the loop, the
    // carry retyped to it.
    std::vector<std::pair<size_t, ExprPtr>> tiles;
    for (size_t i = 0; i < s->init_values.size(); ++i) {
      auto* v = s->init_values[i]->as<Var>();
      if (!v || !defs_.count(v)) continue;
      ExprPtr t = whole_tile(s->init_values[i], "the loop-carried value '" + s->iter_args[i]->name + "'", s->span);
      tiles.push_back({i, t});
      retype_[s->iter_args[i].get()] = Var::make(s->iter_args[i]->name, t->type, s->iter_args[i]->span);
      retype_[s->return_vars[i].get()] = Var::make(s->return_vars[i]->name, t->type, s->return_vars[i]->span);
    }
    ++depth_;
    StmtPtr out = IRMutator::mutate_for(s);
    --depth_;
    if (tiles.empty()) return out;
    auto* f = out->as<ForStmt>();
    auto init = f->init_values;
    for (auto& [i, t] : tiles) init[i] = t;
    return ForStmt::make(f->loop_var, f->start, f->stop, f->step, f->iter_args, init, f->body, f->return_vars, f->for_kind,
                         f->stages, f->span);
  }
  std::unordered_map<const Var*, VarPtr> retype_;  // carried tensor-level values made tiles
  // A tile op whose tile arguments were replaced (a load of a view with a valid region gives a
  // tile of a smaller valid shape than the parser inferred) has its type inferred again.
  StmtPtr mutate_assign(const std::shared_ptr<const AssignStmt>& s) override {
    StmtPtr out = IRMutator::mutate_assign(s);
    auto* a = out->as<AssignStmt>();
    auto* c = a ? a->value->as<Call>() : nullptr;
    if (!c || c->op->name.rfind("tile.", 0) != 0) return out;
    bool narrowed = false;
    for (auto& arg : c->args) {
      auto* t = arg && arg->type ? arg->type->as<TileType>() : nullptr;
      narrowed |= t && !t->valid_shape.empty();
    }
    if (!narrowed) return out;
    ExprPtr call = Call::make(c->op, c->args, c->attrs, c->span);
    if (structural_equal(call->type, a->var->type)) return out;
    VarPtr retyped = Var::make(a->var->name, call->type, a->var->span);
    replaced_[s->var.get()] = retyped;
    return AssignStmt::make(retyped, call, s->span);
  }
  // A tensor-level call inside another whose operand became a tile (a loop-carried value made
  // a tile, as in pl.relu(pl.col_expand_add(acc, b))): the tile op on whole tiles, emitted
  // before the statement, as lower_call does for a top-level one.
  ExprPtr mutate_call(const std::shared_ptr<const Call>& c) override {
    auto info = out_ ? tensor_op_info(*c->op) : std::nullopt;
    if (!info) return IRMutator::mutate_call(c);
    bool changed = false;
    std::vector<ExprPtr> args = mutate_all(c->args, &changed);
    if (!changed) return c;
    if (std::any_of(args.begin(), args.end(), [](const ExprPtr& a) { return a && a->type && a->type->as<TileType>(); }))
      return tile_form(*c, args, *info);
    return Call::make(c->op, std::move(args), c->attrs, c->span);
  }
  StmtPtr mutate_while(const std::shared_ptr<const WhileStmt>& s) override {
    ++depth_;
    StmtPtr out = IRMutator::mutate_while(s);
    --depth_;
    return out;
  }
  StmtPtr mutate_if(const std::shared_ptr<const IfStmt>& s) override {
    ++depth_;
    StmtPtr out = IRMutator::mutate_if(s);
    --depth_;
    return out;
  }

  StmtPtr mutate_seq(const std::shared_ptr<const SeqStmts>& s) override {
    std::vector<StmtPtr> out;
    bool changed = false;
    for (auto& st : s->stmts) {
      std::vector<StmtPtr>* saved = out_;
      out_ = &out;
      bool handled = lower_stmt(st);
      out_ = saved;
      if (handled) {
        changed = true;
        continue;
      }
      out_ = &out;  // a loop whose carried tensor-level value becomes a tile emits it before the loop
      StmtPtr m = mutate(st);
      out_ = saved;
      out.push_back(m);
      changed |= out.size() != static_cast<size_t>(&st - s->stmts.data() + 1) || out.back() != st;
    }
    return changed ? SeqStmts::make(out, s->span) : s;
  }

 private:
  // Values defined by tensor compute ops are recorded and dropped; writes of them (and
  // tensor-to-tensor copies) into a tensor become tile loops. True when `st` was consumed.
  bool lower_stmt(const StmtPtr& st) {
    ExprPtr value;
    VarPtr var;
    if (auto* a = st->as<AssignStmt>()) value = a->value, var = a->var;
    else if (auto* e = st->as<EvalStmt>()) value = e->expr;
    else return false;
    ExprPtr named = name_views(value, var ? var->name : "");
    if (named != value && named->as<Var>()) {  // the statement is a view: `v = x[0:64, :]` (recorded)
      if (var) views_[var.get()] = views_.at(named->as<Var>()), views_[var.get()].name = var->name;
      return true;
    }
    named = hoist_loads(named, value->as<Call>() != nullptr);
    if (named == value) return value->as<Call>() && lower_call(value, var);
    // Views or their loads were written inside this statement: the rewritten statement is emitted.
    if (!named->as<Call>() || !lower_call(named, var)) {
      StmtPtr rewritten = var ? StmtPtr(AssignStmt::make(var, named, st->span)) : StmtPtr(EvalStmt::make(named, st->span));
      out_->push_back(mutate(rewritten));
    }
    return true;
  }

  // pl.load / pl.read of a view or tensor-level value written inside another call (the
  // parser's whole load of a tensor operand of a tile op) become statements of their own.
  ExprPtr hoist_loads(const ExprPtr& e, bool top) {
    auto* c = e ? e->as<Call>() : nullptr;
    if (!c) return map_operands(e, [this](const ExprPtr& x) { return hoist_loads(x, false); });
    std::vector<ExprPtr> args;
    bool changed = false;
    for (auto& a : c->args) {
      args.push_back(hoist_loads(a, false));
      changed |= args.back() != a;
    }
    ExprPtr out = changed ? Call::make(c->op, args, c->attrs, c->span) : e;
    if (top || (c->op->name != "tile.load" && c->op->name != "tensor.read")) return out;
    ExprPtr src = mutate(args[0]);
    auto* sv = src->as<Var>();
    if (!view_of(src) && !(sv && defs_.count(sv)) && !src->type->as<TileType>()) return out;
    auto v = Var::make(sv ? sv->name + "_tile" : std::string("tile"), c->type, c->span);
    keep_.push_back(v);
    PYPTO_CHECK(lower_call(out, v), "hoisted load");
    return mutate(v);
  }

  bool lower_call(ExprPtr value, const VarPtr& var) {
    auto* call = value->as<Call>();
    if (is_view_op(*call)) {
      record_view(*call, var);
      return true;
    }
    if (call->op->name == "tensor.assemble" && !std::get<std::vector<int64_t>>(call->attrs.at("drop_dims")).empty())
      return write_dropped_window(*call, var);
    if (fold_view_access(*call, var)) return true;
    if (auto info = tensor_op_info(*call->op)) {
      bool changed = false;
      std::vector<ExprPtr> args = mutate_all(call->args, &changed);
      bool reads_tile = std::any_of(args.begin(), args.end(),
                                    [](const ExprPtr& a) { return a && a->type && a->type->as<TileType>(); });
      if (reads_tile) {  // it reads a loop-carried value made a tile: the tile op, on whole tiles
        ExprPtr t = tile_form(*call, args, *info);
        if (var) replaced_[var.get()] = std::static_pointer_cast<const Var>(t);
        return true;
      }
      if (!var) return true;  // an unused pure value
      defs_[var.get()] = changed ? Call::make(call->op, std::move(args), call->attrs, call->span) : value;
      return true;
    }
    if (load_of_value(*call, var)) return true;
    if (call->op->name != "tensor.assemble" || !call->args[1]->type->as<TensorType>()) return false;
    ExprPtr target = mutate(call->args[0]);
    ExprPtr src = mutate(call->args[1]);
    if (src->type->as<TileType>()) {  // a value made a tile: stored as a tile is
      std::vector<ExprPtr> args = {call->args[0], src, call->args[2]};
      auto tile_write = std::static_pointer_cast<const Call>(Call::make(call->op, args, call->attrs, call->span));
      if (fold_view_access(*tile_write, var)) return true;
      args[0] = target;
      args[2] = mutate(call->args[2]);
      ExprPtr w = rebuild(*call, args, call->span);
      if (var) out_->push_back(AssignStmt::make(var, w, call->span));
      else out_->push_back(EvalStmt::make(w, call->span));
      return true;
    }
    auto* offsets = call->args[2]->as<ListExpr>();
    PYPTO_CHECK(offsets, "tensor.assemble offsets");
    // atomic=pl.AtomicType.Add: every block of the value is added into the target (the blocks
    // are disjoint, so each element is added once; split-K partials land in one output).
    atomic_ = std::get<std::string>(call->attrs.at("atomic"));
    struct AtomicReset {
      std::string& a;
      ~AtomicReset() { a = "none"; }
    } atomic_reset{atomic_};
    std::vector<ExprPtr> offs;
    for (auto& o : offsets->elems) offs.push_back(mutate(o));
    // An N-D value (batch_matmul, or elementwise / last-axis ops on rank >= 3 tensors) is written batch by batch.
    const size_t vrank = tensor_of(resolve(src)).shape.size();
    bool batched = vrank >= 3;
    if (offs.size() != (batched ? vrank : 2u))
      fail(ErrorKind::kType, call->span,
           batched ? "this tensor-level value is " + std::to_string(vrank) + "-D; write it into a " +
                         std::to_string(vrank) + "-D tensor (out[:] = ...)"
                   : "tensor-level values are written into 2-D tensors here (a " + std::to_string(offs.size()) +
                         "-D target)",
           batched ? "create the output with the value's shape [B.., M, N]"
                   : "load tiles of the N-D tensor with pl.load and store them");
    if (const View* tv = view_of(target)) {  // a write through a view: the root's block at the view's offsets
      const View v = *tv;
      const Box box = !batched && !merged_rows(v) && !v.dtype ? tile_in_root(v, call->span, "a write") : Box{};
      const bool turned = box.transposed;
      if (batched || merged_rows(v) || v.dtype)
        fail(ErrorKind::kValue, call->span,
             "a tensor-level value written through the " +
                 std::string(batched ? "" : merged_rows(v) ? "merged (reshaped) " : "reinterpreted ") + "view '" + v.name + "'",
             "write into the tensor itself at the window's offsets (out[a:b, c:d] = ...), or store tiles you compute");
      std::vector<ExprPtr> at = root_at(v, offs);
      std::vector<ExprPtr> lead(at.begin(), at.end() - 2);
      transpose_store_ = turned;
      VarPtr result;
      if (!box.dims.empty()) {  // a strided box of two other dims: blocks step those dims from `at`
        store_dims_ = box.dims;
        result = write_tensor(v.root, src, {idx(0), idx(0)}, call->span, at);
        store_dims_.clear();
      } else {
        result = write_tensor(v.root, src, {at[at.size() - 2], at.back()}, call->span, lead);
      }
      transpose_store_ = false;
      new_root_version(v, result, var);
      return true;
    }
    VarPtr result = batched ? write_batches(target, src, offs, call->span) : write_tensor(target, src, offs, call->span);
    if (var) replaced_[var.get()] = result;
    return true;
  }

  // A batched (3-D) value is written one batch at a time: a loop over the batch
  // carrying the target, each iteration writing the batch's [M, N] result block by block.
  // A rank-N value (N > 3) loops over its leading axes merged: batch b is the leading index
  // (b / inner) % extent of each axis, inner the product of the extents after it.
  VarPtr write_batches(const ExprPtr& target, const ExprPtr& src, const std::vector<ExprPtr>& offs, const Span& span) {
    const auto& shape = tensor_of(resolve(src)).shape;
    const size_t nlead = shape.size() - 2;
    auto bi = Var::make("batch", ScalarType::make(DataType::INDEX));
    ExprPtr batches = shape[0];
    std::vector<ExprPtr> coords(nlead);
    coords[nlead - 1] = bi;
    if (nlead > 1) {
      ExprPtr inner = idx(1);
      for (size_t k = nlead; k-- > 0;) {
        auto cinner = as_const_int(inner), cext = as_const_int(shape[k]);
        ExprPtr q = cinner && *cinner == 1 ? ExprPtr(bi) : BinaryExpr::make(BinaryOp::FloorDiv, bi, inner);
        coords[k] = k == 0 ? q : BinaryExpr::make(BinaryOp::Mod, q, shape[k]);
        inner = cinner && cext ? idx(*cinner * *cext) : BinaryExpr::make(BinaryOp::Mul, inner, shape[k]);
      }
      batches = inner;
    }
    auto tgt_name = target->as<Var>() ? target->as<Var>()->name : std::string("out");
    auto carried = Var::make(tgt_name, target->type);
    std::vector<StmtPtr> body;
    std::vector<StmtPtr>* saved = out_;
    out_ = &body;
    batch_ = coords;
    std::vector<ExprPtr> lead;
    for (size_t k = 0; k < nlead; ++k) lead.push_back(add(coords[k], offs[k]));
    VarPtr next = write_tensor(carried, src, {offs[nlead], offs[nlead + 1]}, span, lead);
    batch_.clear();
    out_ = saved;
    body.push_back(YieldStmt::make({next}));
    auto result = Var::make(tgt_name, target->type);
    out_->push_back(ForStmt::make(bi, idx(0), batches, idx(1), {carried}, {target}, SeqStmts::make(body), {result},
                                  ForKind::Range, 0, span));
    return result;
  }

  ExprPtr resolve(const ExprPtr& e) const {
    if (auto* v = e->as<Var>()) {
      auto it = defs_.find(v);
      if (it != defs_.end()) return it->second;
    }
    return e;
  }


  // --- Views ----------------------------------------------------------------------------
  // A tensor view in a kernel (x[a:b, c:d], pl.transpose, a reshape) is folded onto the tensor
  // holding its data, its root: index i of view axis a adds coef * ((i / div) % mod) to root
  // dim d for each part (d, coef, div, mod) of the axis, on top of the root offsets. A plain
  // axis has one part (d, 1, 1, -); a split axis ([B*M, N] seen as [B, M, N]) a coefficient; a
  // merged axis ([B, M, N] seen as [B*M, N]) a part per merged dim (i / M and i % M) and its
  // own offset. View statements are dropped; every load, store, read and write of a view
  // addresses the root instead.
  struct Part {
    int dim;
    int64_t coef = 1, div = 1, mod = 0;  // mod 0: none
  };
  struct View {
    ExprPtr root;                          // the tensor with the data (a parameter or a loop-carried tensor)
    std::vector<ExprPtr> offset;           // per root dim
    std::vector<std::vector<Part>> parts;  // per view axis (none: an added unit axis)
    std::vector<ExprPtr> aoff;             // per view axis: an offset of a merged axis (null: none)
    std::string name;                      // the user's name for the view (errors)
    // A reinterpret_view: the view's dtype, and the element size (bits) in which the root's
    // last dim is counted (offsets and coordinates); 0: the root's own.
    std::optional<DataType> dtype;
    int unit_bits = 0;
    // A slice's valid region (pl.slice(valid_shape=, clamp=True)): per view axis the valid
    // extent, null where the axis is valid in full; empty when the whole view is valid.
    // Loads of the view read only the valid part (their valid_shape is cut to it).
    std::vector<ExprPtr> valid;
    size_t rank() const { return parts.size(); }
    // The root dim a plain axis walks; -1 for an added unit axis, -2 for any other.
    int dim(size_t a) const {
      if (parts[a].empty()) return -1;
      const Part& p = parts[a][0];
      return parts[a].size() == 1 && p.coef == 1 && p.div == 1 && p.mod == 0 && !aoff[a] ? p.dim : -2;
    }
    bool simple(size_t a) const {  // one part without div/mod (coef allowed)
      return parts[a].size() <= 1 && !aoff[a] && (parts[a].empty() || (parts[a][0].div == 1 && parts[a][0].mod == 0));
    }
  };
  std::unordered_map<const Var*, View> views_;
  std::vector<VarPtr> keep_;  // the Vars this pass made up as keys (named views, hoisted loads)
  std::unordered_map<const Var*, std::string> view_names_;

 public:
  const std::unordered_map<const Var*, std::string>& view_names() {
    view_names_.clear();
    for (auto& [k, v] : views_) view_names_[k] = v.name;
    return view_names_;
  }

 private:

  const View* view_of(const ExprPtr& e) const {
    auto* v = e ? e->as<Var>() : nullptr;
    auto it = v ? views_.find(v) : views_.end();
    return it == views_.end() ? nullptr : &it->second;
  }

  // The view of `e`: its record, or the identity view of a plain tensor.
  View view_or_self(const ExprPtr& e) const {
    if (const View* v = view_of(e)) return *v;
    View v{e, {}, {}, {}, e->as<Var>() ? e->as<Var>()->name : std::string("tensor"), std::nullopt, 0};
    for (size_t d = 0; d < tensor_of(e).shape.size(); ++d) {
      v.offset.push_back(idx(0));
      v.parts.push_back({Part{static_cast<int>(d)}});
      v.aoff.push_back(nullptr);
    }
    return v;
  }

  // A view written inside another call (pl.exp(x[0:64, :]), pl.load(x[i], ...)) becomes a
  // named view first, so that every use below sees a Var.
  // `e` with f applied to the operands of its scalar arithmetic and lists (calls are f's own).
  static ExprPtr map_operands(const ExprPtr& e, const std::function<ExprPtr(const ExprPtr&)>& f) {
    if (auto* b = e ? e->as<BinaryExpr>() : nullptr) {
      ExprPtr x = f(b->a), y = f(b->b);
      return x == b->a && y == b->b ? e : BinaryExpr::make(b->op, x, y, b->span);
    }
    if (auto* u = e ? e->as<UnaryExpr>() : nullptr) {
      ExprPtr x = f(u->a);
      return x == u->a ? e : UnaryExpr::make(u->op, x, u->span);
    }
    if (auto* l = e ? e->as<ListExpr>() : nullptr) {
      std::vector<ExprPtr> elems;
      bool changed = false;
      for (auto& x : l->elems) {
        elems.push_back(f(x));
        changed |= elems.back() != x;
      }
      return changed ? ListExpr::make(elems, l->span) : e;
    }
    return e;
  }

  ExprPtr name_views(const ExprPtr& e, const std::string& name = "") {
    auto* c = e ? e->as<Call>() : nullptr;
    if (!c) return map_operands(e, [this](const ExprPtr& x) { return name_views(x); });
    std::vector<ExprPtr> args;
    bool changed = false;
    for (auto& a : c->args) {
      args.push_back(name_views(a));
      changed |= args.back() != a;
    }
    auto named = std::static_pointer_cast<const Call>(changed ? Call::make(c->op, args, c->attrs, c->span) : e);
    if (!is_view_op(*named)) return named;
    std::string hint = !name.empty() ? name : c->args[0]->as<Var>() ? c->args[0]->as<Var>()->name + "_view" : "view";
    auto v = Var::make(hint, c->type, c->span);
    record_view(*named, v);
    keep_.push_back(v);  // views_ is keyed by the Var's address: it must outlive the pass
    return v;
  }

  static bool is_view_op(const Call& c) {
    return c.op->view && c.op->name.rfind("tensor.", 0) == 0 && c.args[0] && c.args[0]->type->as<TensorType>();
  }

  // Records `var = view op(...)`; true when the view folds (always, or a user error).
  void record_view(const Call& c, const VarPtr& var) {
    View parent = view_or_self(mutate(c.args[0]));
    View v = parent;
    v.name = var ? var->name : std::string("view");
    const std::string& op = c.op->name;
    auto shape_list = [&](size_t k) {
      std::vector<ExprPtr> out;
      if (auto* l = c.args[k] ? c.args[k]->as<ListExpr>() : nullptr)
        for (auto& e : l->elems) out.push_back(mutate(e));
      return out;
    };
    if (op == "tensor.slice") {
      auto offs = shape_list(2);
      std::vector<bool> dropped(offs.size(), false);
      for (int64_t d : std::get<std::vector<int64_t>>(c.attrs.at("drop_dims")))
        dropped[d < 0 ? d + static_cast<int64_t>(offs.size()) : d] = true;
      slice_valid(c, parent, offs, dropped, shape_list(1), shape_list(3), v);
      v.parts.clear();
      v.aoff.clear();
      for (size_t a = 0; a < offs.size(); ++a) {
        ExprPtr ao;
        if (parent.simple(a)) {  // the offset moves into the root offsets
          for (auto& p : parent.parts[a]) v.offset[p.dim] = add(v.offset[p.dim], mul(offs[a], p.coef));
        } else {
          ao = parent.aoff[a] ? add(parent.aoff[a], offs[a]) : offs[a];
        }
        if (!dropped[a]) {
          v.parts.push_back(parent.parts[a]);
          v.aoff.push_back(ao);
        } else if (ao) {  // a dropped merged axis: its index is fixed
          View one = parent;
          std::vector<ExprPtr> at(parent.rank(), idx(0));
          one.offset.assign(v.offset.size(), idx(0));
          for (size_t b = 0; b < one.rank(); ++b)
            if (b != a) one.parts[b].clear(), one.aoff[b] = nullptr;
          one.aoff[a] = ao;
          auto fixed = root_at(one, at);
          for (size_t d = 0; d < fixed.size(); ++d) v.offset[d] = add(v.offset[d], fixed[d]);
        }
      }
    } else if (op == "tensor.transpose") {
      int64_t rank = static_cast<int64_t>(parent.rank());
      int64_t a1 = std::get<int64_t>(c.attrs.at("axis1")), a2 = std::get<int64_t>(c.attrs.at("axis2"));
      a1 = a1 < 0 ? a1 + rank : a1, a2 = a2 < 0 ? a2 + rank : a2;
      std::swap(v.parts[a1], v.parts[a2]);
      std::swap(v.aoff[a1], v.aoff[a2]);
      if (!v.valid.empty()) std::swap(v.valid[a1], v.valid[a2]);
    } else if (op == "tensor.set_validshape") {  // metadata: the valid region is set
      const auto& shape = c.type->as<TensorType>()->shape;
      v.valid.clear();
      for (size_t a = 0; a < 2; ++a) {
        ExprPtr e = mutate(c.args[1 + a]);
        auto ce = as_const_int(e), cn = as_const_int(shape[a]);
        v.valid.push_back(ce && cn && *ce == *cn ? nullptr : e);
      }
      if (!v.valid[0] && !v.valid[1]) v.valid.clear();
    } else if (!parent.valid.empty()) {
      fail(ErrorKind::kValue, c.span,
           "pl." + c.op->name + " of '" + parent.name + "', a slice with a valid region smaller than its shape, inside "
           "a kernel: a valid region is carried through slices and transposes only",
           "reshape / reinterpret the whole window, then slice it with valid_shape=");
    } else if (op == "tensor.reshape" || op == "tensor.view") {
      reshape_view(c, parent, v);
      if (op == "tensor.view" && c.args[1] && c.args[2]) {  // valid_shape=: the view's valid region
        const auto& shape = c.type->as<TensorType>()->shape;
        auto given = shape_list(2);
        v.valid.clear();
        bool narrowed = false;
        for (size_t a = 0; a < given.size(); ++a) {
          auto ce = as_const_int(given[a]), cn = as_const_int(shape[a]);
          v.valid.push_back(ce && cn && *ce == *cn ? nullptr : given[a]);
          narrowed |= v.valid.back() != nullptr;
        }
        if (!narrowed) v.valid.clear();
      }
    } else {
      reinterpret_view(c, parent, v);
    }
    if (var) views_[var.get()] = std::move(v);
  }

  // The valid region of the slice `c` of `parent` (PyPTO: the parent's valid region shifted
  // by the offsets, cut to the window, with clamp=True cut at the parent's edge, then
  // narrowed by valid_shape); sets v.valid (cleared when the whole window is valid).
  void slice_valid(const Call& c, const View& parent, const std::vector<ExprPtr>& offs, const std::vector<bool>& dropped,
                   const std::vector<ExprPtr>& shape, const std::vector<ExprPtr>& given, View& v) {
    const bool clamp = std::get<bool>(c.attrs.at("clamp"));
    const auto& pshape = tensor_of(c.args[0]).shape;
    v.valid.clear();
    bool narrowed = false;
    std::vector<ExprPtr> valid;
    for (size_t a = 0; a < offs.size(); ++a) {
      ExprPtr ext = shape[a], val = ext;
      if (!parent.valid.empty() && parent.valid[a]) val = vmin(val, vmax(idx(0), sub(parent.valid[a], offs[a])));
      if (clamp) val = vmin(val, vmax(idx(0), sub(pshape[a], offs[a])));
      if (!given.empty()) val = vmin(val, given[a]);
      auto ce = as_const_int(ext), cv = as_const_int(val);
      const bool full = val.get() == ext.get() || (ce && cv && *ce == *cv);
      if (dropped[a]) {
        if (!full)
          fail(ErrorKind::kValue, c.span,
               "the slice '" + v.name + "' drops axis " + std::to_string(a) + ", whose valid extent is smaller than 1",
               "keep the axis (no integer index) or slice a valid element");
        continue;
      }
      valid.push_back(full ? nullptr : val);
      narrowed |= !full;
    }
    if (narrowed) v.valid = valid;
  }

  static bool same_extent(const ExprPtr& a, const ExprPtr& b) {
    auto x = as_const_int(a), y = as_const_int(b);
    if (x || y) return x && y && *x == *y;
    return a.get() == b.get();
  }
  static std::string dims(const std::vector<ExprPtr>& shape) {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) {
      auto n = as_const_int(shape[i]);
      s += (i ? ", " : "") + (n ? std::to_string(*n) : std::string("?"));
    }
    return s + "]";
  }

  // A reshape folds when the extents regroup: unit axes added or removed, an axis split
  // into several ([B*M, N] to [B, M, N]: the outer axis steps M rows) or several merged into
  // one ([B, M, N] to [B*M, N]: i walks i / M and i % M). Merged and split extents must be
  // static; every other extent is kept, in order.
  void reshape_view(const Call& c, const View& parent, View& v) {
    const auto& from = tensor_of(c.args[0]).shape;
    const auto& to = c.type->as<TensorType>()->shape;
    auto unit = [](const ExprPtr& e) {
      auto n = as_const_int(e);
      return n && *n == 1;
    };
    std::vector<size_t> olds, news;  // the axes of extent other than 1
    for (size_t a = 0; a < from.size(); ++a)
      if (!unit(from[a])) olds.push_back(a);
    for (size_t a = 0; a < to.size(); ++a)
      if (!unit(to[a])) news.push_back(a);
    v.parts.assign(to.size(), {});
    v.aoff.assign(to.size(), nullptr);
    auto refuse = [&](const std::string& why) {
      fail(ErrorKind::kValue, c.span,
           "pl." + c.op->name + " '" + v.name + "' from " + dims(from) + " to " + dims(to) + " inside a kernel: " + why +
               "; a kernel view folds into the loads and stores of its tensor only when extents regroup (unit axes "
               "added or removed, static axes split or merged), so that each tile is one box of the tensor",
           "reshape in the orchestration and pass the reshaped tensor to the kernel, or pl.load tiles of the tensor "
           "itself and pl.reshape the tiles");
    };
    size_t i = 0, j = 0;
    while (i < olds.size() && j < news.size()) {
      if (same_extent(from[olds[i]], to[news[j]])) {  // kept
        v.parts[news[j]] = parent.parts[olds[i]];
        v.aoff[news[j]] = parent.aoff[olds[i]];
        ++i, ++j;
        continue;
      }
      // A group: old axes i..i2 and new axes j..j2 with equal static products.
      auto n_old = as_const_int(from[olds[i]]), n_new = as_const_int(to[news[j]]);
      if (!n_old || !n_new) refuse("an extent known only at run time changes");
      size_t i2 = i + 1, j2 = j + 1;
      int64_t po = *n_old, pn = *n_new;
      while (po != pn) {
        if (po < pn && i2 < olds.size() && as_const_int(from[olds[i2]])) po *= *as_const_int(from[olds[i2++]]);
        else if (pn < po && j2 < news.size() && as_const_int(to[news[j2]])) pn *= *as_const_int(to[news[j2++]]);
        else refuse("the extents do not regroup");
      }
      if (i2 - i > 1 && j2 - j > 1) refuse("axes are both merged and split");
      if (i2 - i == 1) {  // one old axis split into new axes j..j2: axis k steps the product of those after it
        if (!parent.simple(olds[i])) refuse("a merged axis is split again");
        int64_t step = po;
        for (size_t k = j; k < j2; ++k) {
          step /= *as_const_int(to[news[k]]);
          for (Part p : parent.parts[olds[i]]) {
            p.coef *= step;
            v.parts[news[k]].push_back(p);
          }
        }
      } else {  // old axes i..i2 merged into new axis j: old axis k is (x / its inner product) % its extent
        int64_t inner = po;
        for (size_t k = i; k < i2; ++k) {
          if (!parent.simple(olds[k])) refuse("a merged axis is merged again");
          int64_t n = *as_const_int(from[olds[k]]);
          inner /= n;
          for (Part p : parent.parts[olds[k]])
            v.parts[news[j]].push_back(Part{p.dim, p.coef, inner, k == i ? 0 : n});
        }
      }
      i = i2, j = j2;
    }
    if (i != olds.size() || j != news.size()) refuse("the extents do not regroup");
  }

  // reinterpret_view: the same bytes as another dtype; folds when only the last axis scales
  // (no other shape) and that axis walks the root's last dim: loads read the root's bytes and
  // reinterpret the tile (pl.tile.reinterpret_view), stores the other way round.
  void reinterpret_view(const Call& c, const View& parent, View& v) {
    const auto& from = tensor_of(c.args[0]).shape;
    const auto& to = c.type->as<TensorType>()->shape;
    int last = static_cast<int>(tensor_of(parent.root).shape.size()) - 1;
    bool same_lead = from.size() == to.size();
    for (size_t a = 0; same_lead && a + 1 < from.size(); ++a) same_lead = same_extent(from[a], to[a]);
    if (!same_lead || parent.rank() == 0 || parent.dim(parent.rank() - 1) != last)
      fail(ErrorKind::kValue, c.span,
           "pl." + c.op->name + " '" + v.name + "' inside a kernel folds into loads and stores only when the last axis "
           "alone scales and walks the last dimension of its tensor (here " + dims(from) + " to " + dims(to) + ")",
           "reinterpret without shape= (the last axis scales by the element sizes), or reinterpret in the orchestration "
           "and pass the view to the kernel as a tensor argument");
    int old_bits = parent.unit_bits ? parent.unit_bits : dtype_bits(tensor_of(parent.root).dtype);
    int new_bits = dtype_bits(c.type->as<TensorType>()->dtype);
    v.offset[last] = scale(v.offset[last], old_bits, new_bits, c.span, v.name);
    v.unit_bits = new_bits;
    v.dtype = c.type->as<TensorType>()->dtype;
  }

  // x elements of `from` bits counted in elements of `to` bits (exact when static).
  static ExprPtr scale(const ExprPtr& x, int from, int to, const Span& span, const std::string& view) {
    if (from == to) return x;
    if (auto cx = as_const_int(x)) {
      if ((*cx * from) % to)
        fail(ErrorKind::kValue, span,
             "the reinterpreted view '" + view + "' starts or ends inside an element: " + std::to_string(*cx) + " x " +
                 std::to_string(from) + " bits is not a whole number of " + std::to_string(to) + "-bit elements",
             "align windows of a reinterpreted view to whole elements of the tensor's dtype");
      return idx(*cx * from / to);
    }
    if (from % to == 0) return mul(x, from / to);
    return BinaryExpr::make(BinaryOp::FloorDiv, mul(x, from), idx(to));
  }

  // Root coordinates of the view element `at` (one index per view axis).
  static std::vector<ExprPtr> root_at(const View& v, const std::vector<ExprPtr>& at) {
    std::vector<ExprPtr> out = v.offset;
    for (size_t a = 0; a < v.rank() && a < at.size(); ++a) {
      ExprPtr i = v.aoff[a] ? add(v.aoff[a], at[a]) : at[a];
      for (const Part& p : v.parts[a]) {
        ExprPtr t = i;
        auto ci = as_const_int(t);
        if (p.div != 1) t = ci ? idx(*ci / p.div) : BinaryExpr::make(BinaryOp::FloorDiv, t, idx(p.div));
        ci = as_const_int(t);
        if (p.mod) t = ci ? idx(*ci % p.mod) : BinaryExpr::make(BinaryOp::Mod, t, idx(p.mod));
        out[p.dim] = add(out[p.dim], mul(t, p.coef));
      }
    }
    return out;
  }

  // A tile covers the view's last two axes. In the root that is a box of the root's last two
  // dims (rows along dim R-2, columns along R-1), the transposed box (a transpose view: loaded
  // as that box, then transposed), or a strided box of any two other dims r and c (a view such
  // as key_cache[blk, :, kvh, :]): `dims` = {r, c}, the tile.load / tile.store attribute dims=
  // (the rows step root dim r, the columns dim c, by the root's strides; c < r is a transposed
  // box read in place).
  struct Box {
    bool transposed = false;
    std::vector<int64_t> dims;  // empty: the root's last two dims
  };
  Box tile_in_root(const View& v, const Span& span, const std::string& what, int64_t rows = 0,
                   const ExprPtr& row0 = nullptr) const {
    int64_t rank = static_cast<int64_t>(tensor_of(v.root).shape.size());
    int n = static_cast<int>(v.rank());
    int dr = n >= 2 ? v.dim(n - 2) : -1, dc = n >= 1 ? v.dim(n - 1) : -1;
    const int last = static_cast<int>(rank) - 1;
    if (int64_t period = merged_rows(v); period && (dc == last || dc == -1)) {
      // Rows of a merged axis ([B, M, N] as [B*M, N]): a tile stays inside one band of M rows.
      ExprPtr start = v.aoff[n - 2] ? (row0 ? add(v.aoff[n - 2], row0) : v.aoff[n - 2]) : row0;
      auto s0 = start ? as_const_int(start) : std::optional<int64_t>(0);
      if (rows && (period % rows != 0 || (s0 && *s0 % period + rows > period)))
        fail(ErrorKind::kValue, span,
             what + " of the view '" + v.name + "': its rows merge tensor dimensions in bands of " +
                 std::to_string(period) + " rows, and a tile of " + std::to_string(rows) + " rows" +
                 (s0 ? " at row " + std::to_string(*s0) : std::string()) + " crosses a band",
             "use tiles whose rows divide " + std::to_string(period) + " at row offsets that are multiples of them");
      return {};
    }
    if ((dr == last - 1 || dr == -1) && (dc == last || dc == -1)) return {};
    if ((dr == last || dr == -1) && (dc == last - 1 || dc == -1) && rank >= 2) return {true, {}};
    if (dr >= -1 && dc >= -1 && rank >= 2) {  // plain axes (or an added unit axis) of two other dims
      if (dc == -1) dc = dr == last ? last - 1 : last;
      if (dr == -1) dr = dc == 0 ? 1 : 0;
      return {false, {dr, dc}};
    }
    fail(ErrorKind::kValue, span,
         what + " of the view '" + v.name + "': its last two axes walk dimensions " + std::to_string(dr) + " and " +
             std::to_string(dc) + " of the rank-" + std::to_string(rank) + " tensor it views (-2: an axis that merges "
             "or splits dimensions), but a tile covers two plain dimensions of its tensor",
         "slice so that the view's last two axes each walk one dimension of the tensor (drop the other axes with an "
         "integer index, x[i]), or reshape in the orchestration");
    return {};
  }

  // A tile of the view: [rows, cols] at view coordinates `at`, loaded from the root (a
  // transposed view loads the transposed box and transposes it: tile.transpose in Vec, a
  // transpose_view in Mat).
  // The band of a view whose row axis merges the root's dims R-3.. and R-2 (parts ending in
  // dim R-2 with coefficient 1), or 0.
  int64_t merged_rows(const View& v) const {
    size_t n = v.rank();
    if (n < 2 || v.parts[n - 2].size() < 2) return 0;
    int last = static_cast<int>(tensor_of(v.root).shape.size()) - 1;
    const Part& inner = v.parts[n - 2].back();
    if (inner.dim != last - 1 || inner.coef != 1 || inner.div != 1 || inner.mod == 0) return 0;
    for (size_t k = 0; k + 1 < v.parts[n - 2].size(); ++k)
      if (v.parts[n - 2][k].dim >= last - 1) return 0;
    return inner.mod;
  }

  // A load of a view with a valid region reads only the valid part: the tile's valid shape
  // (`valid`, or the whole tile) is cut to the valid extents of the view's last two axes.
  void cut_to_valid(const View& v, const std::vector<ExprPtr>& at, int64_t rows, int64_t cols,
                    std::vector<ExprPtr>& valid, const Span& span) {
    const size_t n = v.rank();
    for (size_t a = 0; a + std::min<size_t>(2, n) < n; ++a)
      if (v.valid[a])
        fail(ErrorKind::kValue, span,
             "a load of the view '" + v.name + "', whose axis " + std::to_string(a) + " is only partly valid: a tile "
             "covers the last two axes, so only those may have a valid extent smaller than the view's",
             "drop the axis with an integer index (x[i]) or narrow the last two axes with valid_shape=");
    if (valid.empty()) valid = {idx(rows), idx(cols)};
    if (n == 1) valid = {valid[0], valid.back()};
    for (size_t k = 0; k < std::min<size_t>(2, n); ++k) {
      size_t a = n - std::min<size_t>(2, n) + k;
      size_t t = n == 1 ? 1 : k;  // the tile axis (a rank-1 view is one row)
      if (v.valid[a]) valid[t] = vmin(valid[t], vmax(idx(0), sub(v.valid[a], at[a])));
    }
  }

  ExprPtr load_view(const View& v, const std::vector<ExprPtr>& at, int64_t rows, int64_t cols,
                    std::vector<ExprPtr> valid, MemorySpace mem, const Span& span) {
    const Box box = tile_in_root(v, span, "a load", rows, at.size() >= 2 ? at[at.size() - 2] : nullptr);
    const bool tr = box.transposed;
    if (!v.valid.empty()) cut_to_valid(v, at, rows, cols, valid, span);
    std::vector<ExprPtr> root = root_at(v, at);
    std::vector<int64_t> shape = {rows, cols};
    if (tr) {
      std::swap(shape[0], shape[1]);
      if (!valid.empty()) std::swap(valid[0], valid[1]);
    }
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    if (!valid.empty()) kwargs.push_back({"valid_shape", ListExpr::make(valid)});
    Attrs attrs = {{"shape", shape}, {"target_memory", mem}};
    if (!box.dims.empty()) attrs["dims"] = box.dims;
    if (v.dtype) {  // a reinterpreted view: the root's bytes, then the tile seen as the view's dtype
      int rb = dtype_bits(tensor_of(v.root).dtype);
      root.back() = scale(root.back(), v.unit_bits, rb, span, v.name);
      shape[1] = *as_const_int(scale(idx(shape[1]), v.unit_bits, rb, span, v.name));
      kwargs.clear();
      if (!valid.empty()) {
        valid[1] = scale(valid[1], v.unit_bits, rb, span, v.name);
        kwargs.push_back({"valid_shape", ListExpr::make(valid)});
      }
      attrs["shape"] = shape;
    }
    ExprPtr t = assign(v.name + "_tile", make_op_call("tile.load", {v.root, ListExpr::make(root)}, kwargs, attrs, span));
    if (v.dtype) t = assign(v.name + "_as", call("tile.reinterpret_view", {t}, {{"dtype", *v.dtype}}, span));
    if (!tr) return t;
    if (mem == MemorySpace::Mat) return assign(v.name + "_t", call("tile.transpose_view", {t}, {}, span));
    return assign(v.name + "_t", call("tile.transpose", {t}, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, span));
  }

  // Rebuilds a call of c's op with new expression arguments (aligned with its expression
  // params; null for an absent optional one), re-inferring its type.
  static ExprPtr rebuild(const Call& c, const std::vector<ExprPtr>& args, const Span& span) {
    return rebuild(c, args, c.attrs, span);
  }
  static ExprPtr rebuild(const Call& c, const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) {
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    size_t k = 0;
    for (const auto& p : c.op->params)
      if (p.kind != ParamKind::kAttr) {
        if (k < args.size() && args[k]) kwargs.push_back({p.name, args[k]});
        ++k;
      }
    return make_op_call(c.op->name, {}, kwargs, attrs, span);
  }
  static size_t arg_pos(const OpDef& op, const std::string& name) {
    size_t k = 0;
    for (const auto& p : op.params)
      if (p.kind != ParamKind::kAttr) {
        if (p.name == name) return k;
        ++k;
      }
    PYPTO_CHECK(false, "op " + op.name + " has no argument " + name);
    return 0;
  }

  // `out[b, :, h, :] = v` (tensor.assemble with drop_dims): the write through the window
  // view out[b, :, h, :] (a tensor.slice dropping those axes), at offsets 0; `var` is the
  // target's new version (write_parent_), not the window's.
  bool write_dropped_window(const Call& c, const VarPtr& var) {
    const auto& drop = std::get<std::vector<int64_t>>(c.attrs.at("drop_dims"));
    const auto& target = tensor_of(c.args[0]);
    std::vector<ExprPtr> src_shape;
    if (auto* t = c.args[1]->type->as<TileType>()) src_shape = t->shape;
    else src_shape = tensor_of(c.args[1]).shape;
    std::vector<ExprPtr> extents;
    for (size_t d = 0, k = 0; d < target.shape.size(); ++d)
      extents.push_back(std::count(drop.begin(), drop.end(), static_cast<int64_t>(d)) ? idx(1) : src_shape.at(k++));
    ExprPtr slice = make_op_call("tensor.slice", {c.args[0], ListExpr::make(extents), c.args[2]}, {},
                                 {{"drop_dims", drop}}, c.span);
    auto* tv = c.args[0]->as<Var>();
    auto window = Var::make((tv ? tv->name : std::string("out")) + "_window", slice->type, c.span);
    keep_.push_back(window);
    record_view(*slice->as<Call>(), window);
    std::vector<ExprPtr> zeros(src_shape.size(), idx(0));
    auto write = Call::make(c.op, std::vector<ExprPtr>{window, c.args[1], ListExpr::make(zeros)},
                            Attrs{{"atomic", c.attrs.at("atomic")}, {"drop_dims", std::vector<int64_t>{}}}, slice->type,
                            c.span);
    const View* parent = view_of(c.args[0]);
    write_parent_ = parent ? std::optional<View>(*parent) : std::nullopt;
    write_plain_ = !parent;
    struct Reset {
      Lowerer& self;
      ~Reset() { self.write_parent_.reset(), self.write_plain_ = false; }
    } reset{*this};
    return lower_call(write, var);
  }
  std::optional<View> write_parent_;  // write_dropped_window: the target when it is a view
  bool write_plain_ = false;          // ... when it is a tensor

  // `var` is the root's new version after a write through a view: later reads of the root
  // (its return, a loop's yield) see it when the root lives in this scope.
  void new_root_version(const View& v0, const VarPtr& root_next, const VarPtr& var) {
    if (write_plain_) {  // a dropped-axes window of a tensor: var is the tensor's new version
      if (var) replaced_[var.get()] = root_next;
      return;
    }
    const View& v = write_parent_ ? *write_parent_ : v0;
    if (var) {
      View next = v;
      next.root = root_next;
      views_[var.get()] = next;
    }
    auto* r = v.root->as<Var>();
    auto it = r ? depth_of_.find(r) : depth_of_.end();
    if (it != depth_of_.end() && it->second == depth_) {
      for (auto& [from, to] : replaced_)  // earlier versions of the root now name the newest
        if (to.get() == r) to = root_next;
      replaced_[r] = root_next;
      depth_of_[root_next.get()] = depth_;
    }
  }

  // Tile-level access of a view (pl.load / pl.store / pl.assemble of a tile / pl.read /
  // pl.write): the same access of the root, the view's offsets added. True when folded.
  bool fold_view_access(const Call& c, const VarPtr& var) {
    static const std::map<std::string, std::pair<const char*, const char*>> access = {
        {"tile.load", {"tensor", "offsets"}},     {"tile.store", {"output_tensor", "offsets"}},
        {"tensor.assemble", {"target", "offsets"}}, {"tensor.read", {"tensor", "indices"}},
        {"tensor.write", {"tensor", "indices"}}};
    auto it = access.find(c.op->name);
    if (it == access.end()) return false;
    const size_t ti = arg_pos(*c.op, it->second.first), oi = arg_pos(*c.op, it->second.second);
    const View* found = view_of(c.args[ti]);
    if (!found) return false;
    if (c.op->name == "tensor.assemble" && c.args[1]->type->as<TensorType>()) return false;  // a tensor-level write
    const View v = *found;
    std::vector<ExprPtr> args;
    for (auto& a : c.args) args.push_back(a ? mutate(a) : a);
    auto* offs = args[oi]->as<ListExpr>();
    PYPTO_CHECK(offs, "view access offsets");
    const bool element = c.op->name == "tensor.read" || c.op->name == "tensor.write";
    if (c.op->name == "tile.load") {
      if (std::get<bool>(c.attrs.at("clamp")))
        fail(ErrorKind::kValue, c.span, "pl.load(..., clamp=True) of the view '" + v.name + "' inside a kernel",
             "pass valid_shape= for the part of the window inside the view");
      auto shape = std::get<std::vector<int64_t>>(c.attrs.at("shape"));
      check_whole(c.args[ti], "pl.load", shape[0], shape[1], dtype_size(v.root->type), c.span,
                  std::get<MemorySpace>(c.attrs.at("target_memory")));
      std::vector<ExprPtr> valid;
      if (auto* l = args[2] ? args[2]->as<ListExpr>() : nullptr) valid = l->elems;
      ExprPtr t = load_view(v, offs->elems, shape[0], shape[1], valid,
                            std::get<MemorySpace>(c.attrs.at("target_memory")), c.span);
      if (var) replaced_[var.get()] = std::static_pointer_cast<const Var>(t);
      return true;
    }
    const size_t si = element ? 0 : arg_pos(*c.op, c.op->name == "tile.store" ? "tile" : "src");
    auto* stored = element ? nullptr : args[si]->type->as<TileType>();
    auto stored_rows = stored ? as_const_int(stored->shape[0]) : std::nullopt;
    if (stored && !v.valid.empty() && stored->shape.size() == 2) {  // a store writes only the view's valid part
      auto r = as_const_int(stored->shape[0]), cl = as_const_int(stored->shape[1]);
      std::vector<ExprPtr> valid = stored->valid_shape;
      if (r && cl) cut_to_valid(v, offs->elems, *r, *cl, valid, c.span);
      if (valid != stored->valid_shape)
        args[si] = assign("stored_valid", make_op_call("tile.set_validshape", {args[si]},
                                                       {{"valid_shape", ListExpr::make(valid)}}, {}, c.span));
      stored = args[si]->type->as<TileType>();
    }
    Box box;
    if (!element)
      box = tile_in_root(v, c.span, "a store", stored_rows ? *stored_rows : 0,
                         offs->elems.size() >= 2 ? offs->elems[offs->elems.size() - 2] : nullptr);
    if (box.transposed)  // a transposed view: store the tile transposed
      args[si] = assign("stored_t", call("tile.transpose", {args[si]}, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, c.span));
    std::vector<ExprPtr> root = root_at(v, offs->elems);
    if (v.dtype) {  // a reinterpreted view: the tile's bytes stored as the root's dtype
      if (element)
        fail(ErrorKind::kType, c.span, "pl." + c.op->name.substr(c.op->name.find('.') + 1) +
                                           " of one element of the reinterpreted view '" + v.name + "' inside a kernel",
             "pl.load a tile of the view and read it, or read the tensor in its own dtype");
      int rb = dtype_bits(tensor_of(v.root).dtype);
      root.back() = scale(root.back(), v.unit_bits, rb, c.span, v.name);
      args[si] = assign("stored_as", call("tile.reinterpret_view", {args[si]}, {{"dtype", tensor_of(v.root).dtype}}, c.span));
    }
    args[ti] = v.root;
    args[oi] = ListExpr::make(root, offs->span);
    ExprPtr value;
    if (!box.dims.empty()) {  // a strided box of two other root dims: a tile.store with dims=
      Attrs attrs = {{"dims", box.dims}};
      if (c.attrs.count("atomic")) attrs["atomic"] = c.attrs.at("atomic");
      value = make_op_call("tile.store", {args[si], args[oi], v.root}, {}, attrs, c.span);
    } else {
      value = rebuild(c, args, c.span);
    }
    if (c.op->name == "tensor.read") {
      if (var) out_->push_back(AssignStmt::make(var, value, c.span));
      else out_->push_back(EvalStmt::make(value, c.span));
      return true;
    }
    auto root_var = v.root->as<Var>();
    VarPtr next = Var::make(root_var ? root_var->name : v.name, v.root->type, c.span);
    out_->push_back(AssignStmt::make(next, value, c.span));
    new_root_version(v, next, var);
    return true;
  }

  // --- Tensors used as tiles -------------------------------------------------------------
  // PyPTO's meaning inside a kernel: a tensor used as a tile is one whole tile ("a slice
  // inside InCore yields a Tile"). The parser loads a tensor operand of a tile op whole
  // (pl.load(t, [0, 0], shape)); here such a load of a view reads the view's root, a load
  // of a tensor-level value computes that block of the value, and a loop-carried value is
  // computed whole before the loop.

  // The whole of the 2-D tensor-level value, view or tensor `e`, checked against UB.
  ExprPtr whole_tile(const ExprPtr& e, const std::string& what, const Span& span, MemorySpace mem = MemorySpace::Vec) {
    const auto& shape = tensor_of(resolve(e)).shape;
    auto r = shape.size() == 2 ? as_const_int(shape[0]) : std::nullopt, c = shape.size() == 2 ? as_const_int(shape[1]) : std::nullopt;
    if (!r || !c)
      fail(ErrorKind::kValue, span,
           what + " is a tensor of shape " + dims(shape) + " used as one tile, which needs a static 2-D shape",
           "write it into a tensor (out[:] = ...) and pl.load tiles of that tensor");
    int64_t bytes = dtype_size(resolve(e)->type);
    check_whole(e, what, *r, *c, bytes, span, mem);
    Block whole{idx(0), idx(0), *r, *c, nullptr, nullptr};
    if (resolve(e)->as<Var>()) return load(e, whole, mem, span);  // a view or tensor: loaded (a cube operand into Mat)
    std::map<const Expr*, ExprPtr> memo;
    return tile_of(e, whole, memo);  // a computed value (a matmul's stays in Acc: the carry of split-K)
  }

  void check_whole(const ExprPtr& e, const std::string& what, int64_t rows, int64_t cols, int64_t bytes,
                   const Span& span, MemorySpace mem = MemorySpace::Vec) const {
    if (mem != MemorySpace::Mat) mem = MemorySpace::Vec;
    int64_t need = rows * cols * bytes, cap = chip_.capacity(mem);
    if (need <= cap) return;
    const View* v = view_of(e);
    std::string name = v ? "the tensor view '" + v->name + "'" : (e->as<Var>() ? "'" + e->as<Var>()->name + "'" : "the value");
    fail(ErrorKind::kCapacity, span,
         what + ": " + name + " [" + std::to_string(rows) + ", " + std::to_string(cols) + "] " +
             dtype_name(*element_dtype(resolve(e)->type)) + " is used as one tile, so it is loaded whole: " +
             std::to_string(need) + " bytes, but " + (mem == MemorySpace::Mat ? "Mat (L1)" : "Vec (UB)") + " holds " +
             std::to_string(cap),
         "use a smaller window (x[r:r + T, :]) or pl.load blocks of it in a loop; tensor-level ops on it (out[:] = "
         "pl.exp(view)) are tiled to fit for you");
  }

  // `tensor op(...)` reading a tile: its tile op, each tensor operand a whole tile.
  // `c` on the (mutated) arguments `args`.
  ExprPtr tile_form(const Call& c, const std::vector<ExprPtr>& args, const TensorOpInfo& info) {
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    size_t k = 0;
    for (const auto& p : c.op->params)
      if (p.kind != ParamKind::kAttr) {
        ExprPtr a = k < args.size() ? args[k] : nullptr;
        ++k;
        if (!a) continue;
        bool cube = info.shape == TensorOpShape::kMatmul || info.shape == TensorOpShape::kMatmulAcc;
        if (a->type && a->type->as<TensorType>())
          a = whole_tile(a, "argument '" + p.name + "' of pl." + c.op->name, c.span,
                         cube && (p.name == "lhs" || p.name == "rhs") ? MemorySpace::Mat : MemorySpace::Vec);
        kwargs.push_back({p.name, a});
      }
    const OpDef* op = info.shape == TensorOpShape::kMatmulAcc ? OpRegistry::instance().find("tile.matmul_acc") : info.tile_op;
    Attrs attrs;
    for (const auto& p : op->params)
      if (p.kind == ParamKind::kAttr && c.attrs.count(p.name)) attrs[p.name] = c.attrs.at(p.name);
    return assign(short_name(*op), make_op_call(op->name, {}, kwargs, attrs, c.span));
  }

  // pl.load of a tensor-level value (the parser's whole load of a tensor operand): that
  // block of the value; pl.load of a value made a tile: the tile. True when handled.
  bool load_of_value(const Call& c, const VarPtr& var) {
    if (c.op->name != "tile.load") return false;
    ExprPtr src = mutate(c.args[0]);
    bool value = src->as<Var>() && defs_.count(src->as<Var>());
    if (!value && !src->type->as<TileType>()) return false;
    auto shape = std::get<std::vector<int64_t>>(c.attrs.at("shape"));
    auto* offs = c.args[1]->as<ListExpr>();
    std::vector<ExprPtr> at;
    for (auto& o : offs->elems) at.push_back(mutate(o));
    std::vector<ExprPtr> valid;
    if (auto* l = c.args[2] ? c.args[2]->as<ListExpr>() : nullptr)
      for (auto& e : l->elems) valid.push_back(mutate(e));
    ExprPtr t;
    if (!value) {
      auto* tt = src->type->as<TileType>();
      bool whole = at.size() == 2 && as_const_int(at[0]) == 0 && as_const_int(at[1]) == 0 && valid.empty() &&
                   as_const_int(tt->shape[0]) == shape[0] && as_const_int(tt->shape[1]) == shape[1];
      if (!whole)
        fail(ErrorKind::kValue, c.span, "pl.load of a window of a loop-carried value (kept whole as a tile)",
             "load the whole value, or pl.slice the tile");
      t = src;
    } else {
      int64_t bytes = dtype_size(src->type);
      if (at.size() != 2) fail(ErrorKind::kType, c.span, "pl.load of a tensor-level value takes 2 offsets");
      check_whole(src, "pl.load", shape[0], shape[1], bytes, c.span, std::get<MemorySpace>(c.attrs.at("target_memory")));
      Block b{at[0], at[1], shape[0], shape[1], valid.empty() ? nullptr : valid[0], valid.empty() ? nullptr : valid[1]};
      std::map<const Expr*, ExprPtr> memo;
      t = tile_of(src, b, memo);
      if (std::get<MemorySpace>(c.attrs.at("target_memory")) == MemorySpace::Vec) t = as_vec(t, c.span);
    }
    if (var) replaced_[var.get()] = std::static_pointer_cast<const Var>(t);
    return true;
  }

  // --- Block sizes -----------------------------------------------------------------------

  struct TreeStats {
    int nodes = 0;
    int64_t widest_bytes = 4;
    bool matmul = false;
    bool transposed = false;  // a transposed view: its blocks are loaded as [cols, rows] tiles
    int64_t row_period = 0;   // a view merging axes into rows: blocks stay inside bands of this many rows
    int64_t whole_row_cols = 0;  // gather/scatter operands loaded as whole rows of this many columns
    const Call* whole = nullptr;  // an op without blocking (kWhole): the value is one block
    int64_t arg_col_rows = 0;     // a column index reduction: each block holds whole columns of this many rows
    int64_t arg_row_cols = 0;     // a row index reduction: each block holds whole rows of this many columns
    bool row_reduce = false, col_reduce = false;  // a row (column) reduction somewhere in the tree
  };
  void stats(const ExprPtr& e0, TreeStats& st) const {
    ExprPtr e = resolve(e0);
    if (!e->type || !e->type->as<TensorType>()) return;
    ++st.nodes;
    st.widest_bytes = std::max<int64_t>(st.widest_bytes, dtype_size(e->type));
    if (const View* v = view_of(e)) {
      int n = static_cast<int>(v->rank()), last = static_cast<int>(tensor_of(v->root).shape.size()) - 1;
      st.transposed |= n >= 2 && v->dim(n - 2) == last;
      if (int64_t period = merged_rows(*v)) st.row_period = st.row_period ? std::gcd(st.row_period, period) : period;
    }
    if (auto* c = e->as<Call>()) {
      auto info = tensor_op_info(*c->op);
      bool cube = info && (info->shape == TensorOpShape::kMatmul || info->shape == TensorOpShape::kBatchMatmul ||
                           info->shape == TensorOpShape::kMatmulAcc);
      if (cube) st.matmul = true;
      if (info && is_whole(*c, *info) && !st.whole) st.whole = c;
      if (info && info->shape == TensorOpShape::kRowReduce) st.row_reduce = true;
      if (info && info->shape == TensorOpShape::kColReduce) st.col_reduce = true;
      if (info && (info->shape == TensorOpShape::kColReduce || info->shape == TensorOpShape::kRowReduce) &&
          info->tile_op->name.find("arg") != std::string::npos) {
        const bool cols = info->shape == TensorOpShape::kColReduce;
        if (auto m = as_const_int(tensor_of(resolve(c->args[0])).shape[cols ? 0 : 1])) {
          int64_t& n = cols ? st.arg_col_rows : st.arg_row_cols;
          n = std::max(n, *m);
        }
      }
      if (info && info->shape == TensorOpShape::kMatmulAcc) stats(c->args[0], st);  // acc's block
      if (info && (info->shape == TensorOpShape::kGather || info->shape == TensorOpShape::kScatter)) {
        ++st.nodes;  // the whole-row operand block
        for (size_t k = 0; k < c->args.size(); ++k)
          if (c->args[k] && (k != 1 || info->shape == TensorOpShape::kScatter))
            if (auto n = as_const_int(tensor_of(resolve(c->args[k])).shape[1]))
              st.whole_row_cols = std::max(st.whole_row_cols, *n);
      }
      if (info && !cube)
        for (auto& a : c->args)
          if (a) stats(a, st);
    }
  }

  // Largest Vec block, in bytes, so that every tile of one block fits UB together.
  int64_t vec_block_bytes(const TreeStats& st) const { return chip_.capacity(MemorySpace::Vec) / (st.nodes + 2); }

  // Columns per block: whole rows up to 2 KiB, else a divisor; rows: what the budget leaves.
  std::pair<Tiling, Tiling> pick_blocks(const std::vector<ExprPtr>& shape, const TreeStats& st) const {
    if (st.whole) return whole_blocks(shape, st);
    int64_t bytes = st.widest_bytes;
    int64_t unit = std::max<int64_t>(1, 32 / bytes);
    auto one = as_const_int(shape[1]);
    int64_t col_cap = 2048 / bytes;
    if (st.arg_col_rows > 0)  // whole columns per block: as many as fit (at least one 32-byte row)
      col_cap = std::min(col_cap, std::max(unit, vec_block_bytes(st) / (st.arg_col_rows * bytes) / unit * unit));
    int64_t cols = one && *one == 1 ? 1 : pick_size(shape[1], col_cap, unit);
    if (st.matmul) cols = std::min<int64_t>(cols, 128);
    int64_t row_cap =
        std::max<int64_t>(1, vec_block_bytes(st) / (std::max<int64_t>({cols, 64, st.whole_row_cols}) * bytes));
    if (st.matmul) row_cap = std::min<int64_t>(row_cap, 128);
    if (st.arg_row_cols > 0) {  // whole rows per block (padded to 32 bytes): as many as fit
      const int64_t padded = (st.arg_row_cols + unit - 1) / unit * unit;
      row_cap = std::min(row_cap, std::max<int64_t>(1, vec_block_bytes(st) / (padded * bytes)));
    }
    auto r1 = as_const_int(shape[0]);
    int64_t rows = r1 && *r1 == 1 ? 1 : pick_size(shape[0], row_cap, st.transposed ? unit : 1);
    if (st.row_period) rows = std::gcd(rows, st.row_period);  // merged rows: a block inside one band
    return {Tiling{rows, shape[0]}, Tiling{cols, shape[1]}};
  }

  // An op without blocking (expand_clone, fillpad_expand, scatter_update): as PyPTO converts
  // one tensor into one tile, the value is one block holding the whole tensor.
  std::pair<Tiling, Tiling> whole_blocks(const std::vector<ExprPtr>& shape, const TreeStats& st) const {
    const Call& c = *st.whole;
    auto r = as_const_int(shape[0]), k = as_const_int(shape[1]);
    if (!r || !k)
      fail(ErrorKind::kValue, c.span,
           "pl." + c.op->name + " is not tiled (one tensor becomes one tile), but the value it is part of has a "
           "shape known only at run time",
           "use pl.tile." + c.op->name.substr(7) + " on tiles of static shape you load yourself");
    const int64_t bytes = *r * *k * st.widest_bytes * (st.nodes + 1);
    if (bytes > chip_.capacity(MemorySpace::Vec))
      fail(ErrorKind::kCapacity, c.span,
           "pl." + c.op->name + " is not tiled (one tensor becomes one tile): the [" + std::to_string(*r) + ", " +
               std::to_string(*k) + "] value and its operands need " + std::to_string(bytes) + " bytes of UB, which holds " +
               std::to_string(chip_.capacity(MemorySpace::Vec)),
           "split the tensor yourself and use pl.tile." + c.op->name.substr(7) + " on the tiles you load");
    return {Tiling{*r, shape[0]}, Tiling{*k, shape[1]}};
  }

  // --- Emission --------------------------------------------------------------------------

  VarPtr assign(const std::string& name, const ExprPtr& value) {
    auto v = Var::make(name, value->type, value->span);
    out_->push_back(AssignStmt::make(v, value, value->span));
    return v;
  }

  ExprPtr call(const std::string& op, const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) {
    return make_op_call(op, args, {}, attrs, span);
  }

  static std::string short_name(const OpDef& op) { return op.name.substr(op.name.find('.') + 1); }

  ExprPtr load(const ExprPtr& tensor, const Block& b, MemorySpace mem, const Span& span) {
    std::vector<ExprPtr> valid;
    if (b.vrows || b.vcols) valid = {b.vrows ? b.vrows : idx(b.rows), b.vcols ? b.vcols : idx(b.cols)};
    if (const View* v = view_of(tensor)) {  // a view: the block of its root
      std::vector<ExprPtr> at(v->rank() - std::min<size_t>(2, v->rank()), idx(0));
      if (v->rank() >= 3 && v->rank() - 2 == batch_.size())  // an operand of an N-D value: the current batch
        for (size_t k = 0; k < batch_.size(); ++k) at[k] = batch_[k];
      if (v->rank() >= 2) at.push_back(b.r0);
      at.push_back(b.c0);
      return load_view(*v, at, b.rows, b.cols, valid, mem, span);
    }
    std::vector<std::pair<std::string, ExprPtr>> kwargs;
    if (!valid.empty()) kwargs.push_back({"valid_shape", ListExpr::make(valid)});
    Attrs attrs = {{"shape", std::vector<int64_t>{b.rows, b.cols}}, {"target_memory", mem}};
    std::string name = tensor->as<Var>() ? tensor->as<Var>()->name + "_tile" : "tile";
    std::vector<ExprPtr> at = {b.r0, b.c0};
    if (tensor_of(tensor).shape.size() >= 3) {  // an operand of an N-D value: the current batch
      PYPTO_CHECK(batch_.size() + 2 == tensor_of(tensor).shape.size(), "an N-D tensor operand outside a batch loop");
      at.insert(at.begin(), batch_.begin(), batch_.end());
    }
    return assign(name, make_op_call("tile.load", {tensor, ListExpr::make(at)}, kwargs, attrs, span));
  }

  ExprPtr as_vec(const ExprPtr& tile, const Span& span) {
    if (tile->type->as<TileType>()->memory == MemorySpace::Vec) return tile;
    return assign("acc_vec", call("tile.move", {tile}, {{"target_memory", MemorySpace::Vec}}, span));
  }

  // The tile holding block `b` of the tensor-level value `e`.
  ExprPtr tile_of(const ExprPtr& e0, const Block& b, std::map<const Expr*, ExprPtr>& memo) {
    ExprPtr e = resolve(e0);
    if (auto it = memo.find(e.get()); it != memo.end()) return it->second;
    ExprPtr t;
    auto* c = e->as<Call>();
    auto info = c ? tensor_op_info(*c->op) : std::nullopt;
    if (!info && e->type && e->type->as<TileType>()) {  // a value made one whole tile (a loop carry)
      auto* tt = e->type->as<TileType>();
      auto r0 = as_const_int(b.r0), c0 = as_const_int(b.c0);
      if (!r0 || !c0 || *r0 != 0 || *c0 != 0 || as_const_int(tt->shape[0]) != b.rows || as_const_int(tt->shape[1]) != b.cols)
        fail(ErrorKind::kCapacity, e->span,
             "a loop-carried tensor-level value is one tile of " + dims(tt->shape) + ", but the expression reading it is "
             "computed in blocks of [" + std::to_string(b.rows) + ", " + std::to_string(b.cols) + "]",
             "write the carried value into a tensor after the loop (tmp[:] = acc) and compute from that tensor");
      memo[e.get()] = e;
      return e;
    }
    if (!info) {
      if (!e->as<Var>())
        fail(ErrorKind::kType, e->span, "this tensor value cannot be tiled: it is neither a tensor nor a tensor-level op",
             "write it into a tensor first");
      t = load(e, b, MemorySpace::Vec, e->span);
    } else {
      switch (info->shape) {
        case TensorOpShape::kElementwise: {
          std::vector<ExprPtr> args;
          for (auto& a : c->args)
            if (a) args.push_back(a->type->as<TensorType>() ? as_vec(tile_of(a, b, memo), c->span) : a);
          t = assign(short_name(*info->tile_op), call(info->tile_op->name, args, c->attrs, c->span));
          break;
        }
        case TensorOpShape::kRowExpand:
        case TensorOpShape::kColExpand: {
          bool rows = info->shape == TensorOpShape::kRowExpand;
          Block vb = rows ? Block{b.r0, idx(0), b.rows, 1, b.vrows, nullptr} : Block{idx(0), b.c0, 1, b.cols, nullptr, b.vcols};
          ExprPtr a = as_vec(tile_of(c->args[0], b, memo), c->span);
          ExprPtr v = as_vec(tile_of(c->args[1], vb, memo), c->span);
          t = assign(short_name(*info->tile_op), call(info->tile_op->name, {a, v}, c->attrs, c->span));
          break;
        }
        case TensorOpShape::kRowReduce:
        case TensorOpShape::kColReduce: t = reduce(*c, *info, b); break;
        case TensorOpShape::kMatmul:
        case TensorOpShape::kBatchMatmul: t = matmul(*c, *info, b); break;
        case TensorOpShape::kMatmulAcc: t = matmul_acc(*c, *info, b, memo); break;
        case TensorOpShape::kConcat: t = concat(*c, b); break;
        case TensorOpShape::kIdentity: t = tile_of(c->args[0], b, memo); break;
        case TensorOpShape::kGather: t = is_whole(*c, *info) ? whole(*c, *info) : gather(*c, b, memo); break;
        case TensorOpShape::kGenerate: t = generate(*c, *info, b); break;
        case TensorOpShape::kScatter: t = is_whole(*c, *info) ? whole(*c, *info) : scatter(*c, b, memo); break;
        case TensorOpShape::kWhole: t = whole(*c, *info); break;
        case TensorOpShape::kNone: PYPTO_CHECK(false, "tensor op " + c->op->name + " has no tile form");
      }
    }
    memo[e.get()] = t;
    return t;
  }

  // Block b of a generated tensor (full, ci): the tile op on the block's shape, cut to the
  // block's valid region. ci counts over the whole tensor in row-major order, so its block
  // must hold whole rows (the tile's row stride is then the tensor's), starting at
  // start +- r0 * N.
  ExprPtr generate(const Call& c, const TensorOpInfo& info, const Block& b) {
    Attrs attrs = c.attrs;
    attrs["shape"] = std::vector<int64_t>{b.rows, b.cols};
    std::vector<ExprPtr> args = c.args;
    if (info.tile_op->name == "tile.ci") {
      auto n = as_const_int(c.type->as<TensorType>()->shape[1]);
      auto c0 = as_const_int(b.c0);
      if (!n || !c0 || *c0 != 0 || b.cols != *n)
        fail(ErrorKind::kCapacity, c.span,
             "pl.tensor.ci counts across whole rows, but the result is written in blocks of " + std::to_string(b.cols) +
                 " columns of a row of " + (n ? std::to_string(*n) : std::string("run-time length")),
             "give the tensor a static row length that is a multiple of 32 bytes and fits a block (at most 2 KiB), or "
             "use pl.tile.ci on tiles you store yourself");
      const AttrValue& d = c.attrs.at("descending");
      bool down = std::holds_alternative<bool>(d) ? std::get<bool>(d) : std::get<int64_t>(d) != 0;
      ExprPtr step = mul(b.r0, *n);
      if (!as_const_int(step) || *as_const_int(step) != 0)
        args[0] = BinaryExpr::make(down ? BinaryOp::Sub : BinaryOp::Add, args[0], step, c.span);
    }
    if (info.tile_op->name == "tile.random") random_counter(c, b, args);
    std::vector<std::pair<std::string, ExprPtr>> kwargs;  // the call's arguments by name (positions count attributes)
    size_t k = 0;
    for (const auto& p : info.tile_op->params)
      if (p.kind != ParamKind::kAttr && k < args.size()) {
        if (args[k]) kwargs.push_back({p.name, args[k]});
        ++k;
      }
    ExprPtr t = assign(short_name(*info.tile_op), make_op_call(info.tile_op->name, {}, kwargs, attrs, c.span));
    if (b.vrows || b.vcols) {
      std::vector<ExprPtr> valid = {b.vrows ? b.vrows : idx(b.rows), b.vcols ? b.vcols : idx(b.cols)};
      t = assign(short_name(*info.tile_op), make_op_call("tile.set_validshape", {t, ListExpr::make(valid)}, {}, {}, c.span));
    }
    return t;
  }

  // random numbers element i of the whole tensor (row-major) from word i % 4 of the block for
  // counter + i / 4: a block of whole rows starting at element r0 * N starts at counter +
  // r0 * N / 4 (a 128-bit add, word by word with carries, in INDEX arithmetic).
  void random_counter(const Call& c, const Block& b, std::vector<ExprPtr>& args) const {
    auto n = as_const_int(c.type->as<TensorType>()->shape[1]);
    auto c0 = as_const_int(b.c0);
    if (!n || !c0 || *c0 != 0 || b.cols != *n || (b.rows * *n) % 4 != 0)
      fail(ErrorKind::kCapacity, c.span,
           "pl.tensor.random numbers the whole tensor in row-major order, but the result is written in blocks of " +
               std::to_string(b.rows) + " x " + std::to_string(b.cols) + " of rows of " +
               (n ? std::to_string(*n) : std::string("run-time length")),
           "give the tensor a static row length that fits a block (at most 2 KiB) with a multiple of 4 elements per "
           "block, or use pl.tile.random on tiles you store yourself");
    if (args.size() > 6 && args[6])
      fail(ErrorKind::kType, c.span, "pl.tensor.random takes no valid_shape (every tensor element is generated)",
           "drop valid_shape=, or use pl.tile.random");
    auto r0 = as_const_int(b.r0);
    if (r0 && *r0 == 0) return;
    ExprPtr carry = BinaryExpr::make(BinaryOp::FloorDiv, mul(b.r0, *n), idx(4), c.span);
    const ExprPtr word = idx(int64_t{1} << 32);
    for (int w = 0; w < 4; ++w) {
      ExprPtr sum = BinaryExpr::make(BinaryOp::Add, carry, args[2 + w], c.span);  // INDEX on the left: no wrap
      args[2 + w] = BinaryExpr::make(BinaryOp::Mod, sum, word, c.span);
      carry = BinaryExpr::make(BinaryOp::FloorDiv, sum, word, c.span);
    }
  }

  // Block b of concat(src0 [M, A], src1 [M, B]): whole rows of the result, from the same rows
  // of each operand (an edge block's operands made fully valid for TCONCAT, the result cut back).
  ExprPtr concat(const Call& c, const Block& b) {
    int64_t unit = std::max<int64_t>(1, 32 / dtype_size(c.type));
    int64_t a = static_dim(c, c.args[0], 1, "row length of 'src0'"), w = static_dim(c, c.args[1], 1, "row length of 'src1'");
    auto c0 = as_const_int(b.c0);
    if (!c0 || *c0 != 0 || b.cols != a + w || a % unit || w % unit)
      fail(ErrorKind::kCapacity, c.span,
           "pl.tensor.concat joins whole rows, but the result is written in blocks of " + std::to_string(b.cols) +
               " columns of rows of " + std::to_string(a) + " + " + std::to_string(w) + " elements",
           "give both operands row lengths that are multiples of 32 bytes and together fit a block (at most 2 KiB), or "
           "use pl.tile.concat on tiles you load yourself");
    auto part = [&](const ExprPtr& e, int64_t cols) {
      std::map<const Expr*, ExprPtr> memo;  // blocks of another width than b
      ExprPtr t = as_vec(tile_of(e, Block{b.r0, idx(0), b.rows, cols, b.vrows, nullptr}, memo), c.span);
      if (b.vrows) t = assign("whole", call("tile.fillpad", {t}, {}, c.span));
      return t;
    };
    ExprPtr lhs = part(c.args[0], a), rhs = part(c.args[1], w);
    ExprPtr t = assign("concat", call("tile.concat", {lhs, rhs}, {}, c.span));
    if (b.vrows)
      t = assign("concat", make_op_call("tile.set_validshape", {t, ListExpr::make({b.vrows, idx(b.cols)})}, {}, {}, c.span));
    return t;
  }

  // The static extent of dimension `d` of a tensor operand of a row-wise gather/scatter.
  int64_t static_dim(const Call& c, const ExprPtr& e, int d, const char* what) const {
    auto n = as_const_int(tensor_of(resolve(e)).shape[d]);
    if (!n)
      fail(ErrorKind::kValue, c.span,
           "pl." + c.op->name + ": the " + what + " must be known at compile time; each block holds whole rows",
           "use pl.tile." + c.op->name.substr(7) + " on tiles you load yourself");
    return *n;
  }

  // A block of whole rows (r0.., all `n` columns, padded to whole 32-byte Vec rows).
  Block whole_rows(const Block& b, int64_t n, int64_t bytes) const {
    int64_t unit = std::max<int64_t>(1, 32 / bytes), padded = (n + unit - 1) / unit * unit;
    return Block{b.r0, idx(0), b.rows, padded, b.vrows, padded != n ? idx(n) : nullptr};
  }

  void check_fits(const Call& c, const Block& b, int64_t bytes, const char* what) const {
    if (b.rows * b.cols * bytes > chip_.capacity(MemorySpace::Vec) / 4)
      fail(ErrorKind::kCapacity, c.span,
           "pl." + c.op->name + ": a block of " + std::to_string(b.rows) + " whole rows of " + what + " (" +
               std::to_string(b.cols) + " elements each) does not fit a quarter of UB",
           "use pl.tile." + c.op->name.substr(7) + " on row blocks you load yourself");
  }

  // Block b of gather(src, indices): whole rows of src (indices may name any column) and
  // block b of the indices.
  ExprPtr gather(const Call& c, const Block& b, std::map<const Expr*, ExprPtr>& memo) {
    ExprPtr src = resolve(c.args[0]);
    if (!src->as<Var>())
      fail(ErrorKind::kType, c.span, "pl.tensor.gather: 'src' must be a tensor, not a computed value",
           "write it into a tensor first (tmp[:] = ...) and gather from that tensor");
    int64_t bytes = dtype_size(src->type);
    Block rows = whole_rows(b, static_dim(c, src, 1, "row length of 'src'"), bytes);
    check_fits(c, rows, bytes, "'src'");
    ExprPtr src_tile = load(src, rows, MemorySpace::Vec, c.span);
    ExprPtr index = as_vec(tile_of(c.args[1], b, memo), c.span);
    return assign("gather", call("tile.gather", {src_tile, index}, c.attrs, c.span));
  }

  // Block b of scatter(target, indices, src): b must hold whole rows of the target (any
  // element of a row of src may land anywhere in the row); indices and src in whole rows.
  ExprPtr scatter(const Call& c, const Block& b, std::map<const Expr*, ExprPtr>& memo) {
    int64_t n = static_dim(c, c.args[0], 1, "row length of 'target'");
    auto c0 = as_const_int(b.c0);
    if (!c0 || *c0 != 0 || b.cols < n)
      fail(ErrorKind::kCapacity, c.span,
           "pl.tensor.scatter: the result is written in blocks of " + std::to_string(b.cols) +
               " columns, but a scatter needs whole rows of the target (" + std::to_string(n) + " columns)",
           "use pl.tile.scatter on row blocks you load yourself");
    ExprPtr target = as_vec(tile_of(c.args[0], b, memo), c.span);
    int64_t k = static_dim(c, c.args[2], 1, "row length of 'src'");
    Block rows = whole_rows(b, k, std::max(dtype_size(resolve(c.args[2])->type), dtype_size(resolve(c.args[1])->type)));
    check_fits(c, rows, dtype_size(resolve(c.args[2])->type), "'src'");
    std::map<const Expr*, ExprPtr> row_memo;  // blocks of another width than b
    ExprPtr index = as_vec(tile_of(c.args[1], rows, row_memo), c.span);
    ExprPtr src = as_vec(tile_of(c.args[2], rows, row_memo), c.span);
    return assign("scatter", call("tile.scatter", {target, index, src}, c.attrs, c.span));
  }

  // Ops computed on whole tensors: kWhole ones, and gather / scatter down the columns
  // (dim=0), whose any row may read or write any other.
  static bool is_whole(const Call& c, const TensorOpInfo& info) {
    if (info.shape == TensorOpShape::kWhole) return true;
    if (info.shape != TensorOpShape::kGather && info.shape != TensorOpShape::kScatter) return false;
    auto it = c.attrs.find("dim");
    if (it == c.attrs.end()) return false;
    const int64_t* d = std::get_if<int64_t>(&it->second);
    return d && (*d == 0 || *d == -2);
  }

  // The whole value of an op without blocking (the block is the whole tensor, see
  // whole_blocks): every tensor operand loaded (or computed) whole, then the tile op.
  ExprPtr whole(const Call& c, const TensorOpInfo& info) {
    std::map<const Expr*, ExprPtr> memo;  // operands have shapes of their own
    std::vector<std::pair<std::string, ExprPtr>> args;  // by name: attributes may sit between them
    size_t k = 0;
    for (auto& p : c.op->params) {
      if (p.kind == ParamKind::kAttr) continue;
      const ExprPtr& a = c.args.at(k++);
      if (!a) continue;
      if (!a->type || !a->type->as<TensorType>()) {
        args.push_back({p.name, a});
        continue;
      }
      const auto& sh = tensor_of(resolve(a)).shape;
      auto r = as_const_int(sh[0]), n = as_const_int(sh[1]);
      if (!r || !n)
        fail(ErrorKind::kValue, c.span,
             "pl." + c.op->name + " is not tiled (one tensor becomes one tile), but an operand has a shape known only at run time",
             "use pl.tile." + c.op->name.substr(7) + " on tiles of static shape you load yourself");
      args.push_back({p.name, as_vec(tile_of(a, Block{idx(0), idx(0), *r, *n, nullptr, nullptr}, memo), c.span)});
    }
    return assign(short_name(*info.tile_op), make_op_call(info.tile_op->name, {}, args, c.attrs, c.span));
  }

  // Combines two partial reductions of the same rows (or columns).
  static std::string combine_op(const std::string& reduce_name) {
    std::string kind = reduce_name.substr(reduce_name.find('_') + 1);
    if (kind == "sum") return "tile.add";
    if (kind == "max") return "tile.maximum";
    if (kind == "min") return "tile.minimum";
    return "tile.mul";
  }

  // A row (column) reduction of block b: the operand's columns (rows) are walked in blocks,
  // reducing each and combining into a loop-carried partial result.
  ExprPtr reduce(const Call& c, const TensorOpInfo& info, const Block& b) {
    bool rows = info.shape == TensorOpShape::kRowReduce;
    ExprPtr x = c.args[0];
    const auto& full = tensor_of(resolve(x)).shape;
    const std::vector<ExprPtr> shape(full.end() - 2, full.end());  // one batch of a 3-D operand
    TreeStats st;
    stats(x, st);
    int64_t bytes = st.widest_bytes, unit = std::max<int64_t>(1, 32 / bytes);
    Tiling walk;
    if (rows) {
      int64_t cap = std::min<int64_t>(2048 / bytes, vec_block_bytes(st) / (b.rows * bytes));
      walk = Tiling{pick_size(shape[1], std::max(cap, unit), unit), shape[1]};
    } else {
      int64_t cap = std::max<int64_t>(1, vec_block_bytes(st) / (b.cols * bytes));
      walk = Tiling{pick_size(shape[0], cap, 1), shape[0]};
    }
    auto block_at = [&](const ExprPtr& start) {
      return rows ? Block{b.r0, start, b.rows, walk.size, b.vrows, walk.valid(start)}
                  : Block{start, b.c0, walk.size, b.cols, walk.valid(start), b.vcols};
    };
    // Sums and products continue the sequential order across blocks (docs/isa.md, "Reduction
    // order"): the partial result is folded into each row's (column's) first element of the
    // next block, acc op x[k], before that block is reduced.
    const std::string kind = info.tile_op->name.substr(info.tile_op->name.find('_') + 1);
    const bool ordered = kind == "sum" || kind == "prod";
    auto reduce_block = [&](const ExprPtr& start, const ExprPtr& seed) {
      std::map<const Expr*, ExprPtr> memo;
      ExprPtr tile = as_vec(tile_of(x, block_at(start), memo), c.span);
      if (seed) {
        Attrs at = {{"shape", rows ? std::vector<int64_t>{b.rows, 1} : std::vector<int64_t>{1, b.cols}}};
        ExprPtr first = assign("first", call("tile.extract", {tile, idx(0), idx(0)}, at, c.span));
        ExprPtr seeded = assign("seeded", call(combine_op(info.tile_op->name), {seed, first}, {}, c.span));
        tile = assign("seeded_block", call("tile.assemble", {tile, seeded, ListExpr::make({idx(0), idx(0)})}, {}, c.span));
      }
      return assign(short_name(*info.tile_op), call(info.tile_op->name, {tile}, c.attrs, c.span));
    };
    if (info.tile_op->name.find("arg") != std::string::npos) {
      // An index reduction has no partial combine: each whole row (column) in one block.
      const ExprPtr& extent = shape[rows ? 1 : 0];
      auto n = as_const_int(extent);
      int64_t width = rows ? b.rows : b.cols;
      int64_t padded = n ? (rows ? (*n + unit - 1) / unit * unit : *n) : 0;
      if (!n || width * padded * bytes > vec_block_bytes(st))
        fail(ErrorKind::kCapacity, c.span,
             "pl." + c.op->name + ": an index reduction needs each whole " + (rows ? "row" : "column") +
                 " in one block, but " + std::to_string(width) + " " + (rows ? "rows" : "columns") + " of " +
                 (n ? std::to_string(*n) : std::string("a run-time number of")) + " elements do not fit the " +
                 std::to_string(vec_block_bytes(st)) + " bytes of UB a block may take",
             std::string("make the ") + (rows ? "rows" : "columns") + " shorter (static, at most " +
                 std::to_string(vec_block_bytes(st) / (width * bytes)) + " elements), or use pl.tile." +
                 c.op->name.substr(7) + " on tiles you load yourself");
      walk = Tiling{padded, extent};
    }
    ExprPtr first = reduce_block(idx(0), nullptr);
    if (walk.single()) return first;
    auto loop_var = Var::make(rows ? "rj" : "ri", ScalarType::make(DataType::INDEX));
    auto carried = Var::make("partial", first->type);
    std::vector<StmtPtr> body;
    std::vector<StmtPtr>* saved = out_;
    out_ = &body;
    ExprPtr next = ordered ? reduce_block(mul(loop_var, walk.size), carried)
                           : assign("partial_next", call(combine_op(info.tile_op->name),
                                                         {carried, reduce_block(mul(loop_var, walk.size), nullptr)}, {},
                                                         c.span));
    body.push_back(YieldStmt::make({next}));
    out_ = saved;
    // What the walk's blocks share (a reduction of the whole row nested in the reduced value,
    // as softmax's row_max inside its row_sum) is computed once, before the walk.
    for (const StmtPtr& s : hoist_out_of({loop_var, carried}, body)) out_->push_back(s);
    auto result = Var::make("reduced", first->type);
    out_->push_back(ForStmt::make(loop_var, idx(1), walk.count(), idx(1), {carried}, {first}, SeqStmts::make(body), {result},
                                  ForKind::Range, 0, c.span));
    return result;
  }

  // Block b of a @ bm: K is walked in blocks, the first with matmul, the rest with matmul_acc
  // into the loop-carried Acc tile.
  // Block b of matmul_acc(acc, lhs, rhs): the product's block (as pl.matmul's) added to acc's
  // block; a literal init_cond=True drops acc, a run-time one is refused.
  ExprPtr matmul_acc(const Call& c, const TensorOpInfo& info, const Block& b, std::map<const Expr*, ExprPtr>& memo) {
    ExprPtr init = c.args.size() > 3 ? c.args[3] : nullptr;
    auto* lit = init ? init->as<ConstBool>() : nullptr;
    if (init && !lit)
      fail(ErrorKind::kValue, c.span,
           "pl.tensor.matmul_acc: init_cond must be a literal True or False on whole tensors (it picks the form at "
           "compile time), got a run-time value",
           "branch yourself: if cond: out[:] = pl.tensor.matmul(lhs, rhs) else: out[:] = pl.tensor.matmul_acc(acc, lhs, "
           "rhs), or use pl.tile.matmul_acc on tiles");
    ExprPtr prod = matmul(c, info, b, 1);
    if (lit && lit->value) return prod;
    ExprPtr acc = as_vec(tile_of(c.args[0], b, memo), c.span);
    return assign("acc_sum", call("tile.add", {acc, as_vec(prod, c.span)}, {}, c.span));
  }

  ExprPtr matmul(const Call& c, const TensorOpInfo& info, const Block& b, size_t first_arg = 0) {
    // A computed operand (pl.matmul(pl.exp(x), w), a cast) stays on chip: each of its blocks
    // is computed in Vec and moved Vec -> Mat; K blocks then also fit its tiles in UB.
    ExprPtr a = resolve(c.args[first_arg]), bm = resolve(c.args[first_arg + 1]);
    TreeStats computed;
    for (auto& operand : {a, bm})
      if (!operand->as<Var>()) stats(operand, computed);
    int64_t bytes = dtype_size(a->type);
    auto flag = [&](const char* name) {
      auto it = c.attrs.find(name);
      return it != c.attrs.end() && std::holds_alternative<bool>(it->second) && std::get<bool>(it->second);
    };
    const bool a_trans = flag("a_trans"), b_trans = flag("b_trans");  // lhs stored [K, M], rhs [N, K]
    ExprPtr k_extent = a_trans ? tensor_of(a).shape.front() : tensor_of(a).shape.back();
    int64_t k_cap = std::max<int64_t>(
        16, std::min({chip_.capacity(MemorySpace::Left) / (2 * b.rows * bytes),
                      chip_.capacity(MemorySpace::Right) / (2 * b.cols * bytes),
                      chip_.capacity(MemorySpace::Mat) / (4 * (b.rows + b.cols) * bytes), int64_t{256}}));
    int64_t k_unit = 1;
    if (computed.nodes) {
      k_unit = std::max<int64_t>(1, 32 / computed.widest_bytes);  // whole 32-byte Vec rows
      // A K block of a computed lhs is [rows, k] (or [k, rows]), of a computed rhs [k, cols].
      const bool lhs_computed = !a->as<Var>(), rhs_computed = !bm->as<Var>();
      const int64_t width = lhs_computed && rhs_computed ? std::max(b.rows, b.cols) : lhs_computed ? b.rows : b.cols;
      k_cap = std::max(k_unit, std::min(k_cap, vec_block_bytes(computed) / (width * computed.widest_bytes)));
    }
    Tiling k{pick_size(k_extent, k_cap, 1), k_extent};
    if (auto kv = as_const_int(k_extent); kv && k.ragged() && !k.single())
      for (int64_t d = std::min(k_cap, *kv); d >= 1; --d)
        if (*kv % d == 0) {
          k.size = d;  // any divisor: a K edge block would add partial products of padding
          break;
        }
    if (k.ragged() && !k.single())
      fail(ErrorKind::kValue, c.span,
           "pl.matmul on tensors: K must be a multiple of a block size the cube buffers hold (<= " + std::to_string(k_cap) +
               ")",
           "pad K with zeros to a multiple of 16");
    const bool k_is_vec_row = (!a->as<Var>() && !a_trans) || (!bm->as<Var>() && b_trans);  // a computed [*, K] block
    if (k_is_vec_row && k.size % k_unit)
      fail(ErrorKind::kValue, c.span,
           "pl.matmul on tensors: the computed operand is made in Vec in blocks of " + std::to_string(k.size) +
               " K columns, which are not whole 32-byte rows",
           "make K a multiple of " + std::to_string(k_unit) + ", or write the operand into a tensor first");
    auto operands = [&](const ExprPtr& k0) {
      Block ab = a_trans ? Block{k0, b.r0, k.size, b.rows, nullptr, b.vrows} : Block{b.r0, k0, b.rows, k.size, b.vrows, nullptr};
      Block bb = b_trans ? Block{b.c0, k0, b.cols, k.size, b.vcols, nullptr} : Block{k0, b.c0, k.size, b.cols, nullptr, b.vcols};
      auto operand = [&](const ExprPtr& e, const Block& blk) -> ExprPtr {
        if (e->as<Var>()) return load(e, blk, MemorySpace::Mat, c.span);
        std::map<const Expr*, ExprPtr> memo;  // the operand's blocks, not the product's
        ExprPtr t = as_vec(tile_of(e, blk, memo), c.span);
        return assign("operand_mat", call("tile.move", {t}, {{"target_memory", MemorySpace::Mat}}, c.span));
      };
      ExprPtr la = operand(a, ab), lb = operand(bm, bb);
      if (a_trans) la = assign("lhs_t", call("tile.transpose_view", {la}, {}, c.span));
      if (b_trans) lb = assign("rhs_t", call("tile.transpose_view", {lb}, {}, c.span));
      ExprPtr left = assign("lhs", call("tile.move", {la}, {{"target_memory", MemorySpace::Left}}, c.span));
      ExprPtr right = assign("rhs", call("tile.move", {lb}, {{"target_memory", MemorySpace::Right}}, c.span));
      return std::pair{left, right};
    };
    auto [l0, r0] = operands(idx(0));
    Attrs mm_attrs = c.attrs;  // the operands reach the cube already transposed
    mm_attrs["a_trans"] = false;
    mm_attrs["b_trans"] = false;
    if (first_arg) mm_attrs["out_dtype"] = c.type->as<TensorType>()->dtype;  // matmul_acc: acc's dtype
    // out_dtype=FP16 / BF16 on a tensor matmul: accumulate in FP32, narrow the block at the end.
    const DataType want = c.type->as<TensorType>() ? c.type->as<TensorType>()->dtype : DataType::FP32;
    const bool narrow = !first_arg && c.op->name == "tensor.matmul" && (want == DataType::FP16 || want == DataType::BF16);
    if (std::holds_alternative<std::string>(mm_attrs["out_dtype"])) mm_attrs["out_dtype"] = want;  // no out_dtype given
    if (narrow) mm_attrs["out_dtype"] = DataType::FP32;
    auto finish = [&](const ExprPtr& t) -> ExprPtr {
      if (!narrow || t->type->as<TileType>()->dtype == want) return t;
      return assign("acc_narrow", call("tile.cast", {as_vec(t, c.span)}, {{"target_type", want}, {"mode", std::string("rint")}}, c.span));
    };
    ExprPtr first = assign("acc", call("tile.matmul", {l0, r0}, mm_attrs, c.span));
    if (k.single()) return finish(first);
    auto loop_var = Var::make("kk", ScalarType::make(DataType::INDEX));
    auto carried = Var::make("acc", first->type);
    std::vector<StmtPtr> body;
    std::vector<StmtPtr>* saved = out_;
    out_ = &body;
    auto [l1, r1] = operands(mul(loop_var, k.size));
    ExprPtr next = assign("acc_next", call("tile.matmul_acc", {carried, l1, r1}, {}, c.span));
    body.push_back(YieldStmt::make({next}));
    out_ = saved;
    // A computed operand's row reductions (softmax's, in p @ v) once, before the K walk.
    for (const StmtPtr& s : hoist_out_of({loop_var, carried}, body)) out_->push_back(s);
    auto result = Var::make("acc_k", first->type);
    out_->push_back(ForStmt::make(loop_var, idx(1), k.count(), idx(1), {carried}, {first}, SeqStmts::make(body), {result},
                                  ForKind::Range, 0, c.span));
    (void)info;
    return finish(result);
  }

  // Writes the tensor-level value `src` into `target` at `offs`, block by block; returns the
  // updated target (the loops carry it, as `out = pl.store(...)` in a loop does).
  VarPtr write_tensor(const ExprPtr& target, const ExprPtr& src, const std::vector<ExprPtr>& offs, const Span& span,
                      const std::vector<ExprPtr>& lead = {}) {
    const auto& full = tensor_of(resolve(src)).shape;
    const std::vector<ExprPtr> shape(full.end() - 2, full.end());  // one batch of a batched value
    TreeStats st;
    stats(src, st);
    // Named members, not a structured binding: the lambdas below capture them, which
    // clang accepts only from version 16 (the fuzz build uses Debian 12's clang 14).
    st.transposed |= transpose_store_;  // a transposed block is stored: rows in whole 32-byte units
    const std::pair<Tiling, Tiling> blocks = pick_blocks(shape, st);
    const Tiling &rt = blocks.first, &ct = blocks.second;
    auto tgt_name = target->as<Var>() ? target->as<Var>()->name : std::string("out");
    auto ri = Var::make("bi", ScalarType::make(DataType::INDEX)), cj = Var::make("bj", ScalarType::make(DataType::INDEX));
    ExprPtr r0 = rt.single() ? idx(0) : mul(ri, rt.size);
    ExprPtr c0 = ct.single() ? idx(0) : mul(cj, ct.size);
    Block blk{r0, c0, rt.size, ct.size, rt.valid(r0), ct.valid(c0)};

    // Innermost: the block's statements and the store, inside 0, 1 or 2 loops.
    std::vector<StmtPtr> inner;
    std::vector<StmtPtr>* saved = out_;
    out_ = &inner;
    std::map<const Expr*, ExprPtr> memo;
    ExprPtr tile = tile_of(src, blk, memo);
    out_ = saved;

    auto tensor_type = target->type;
    auto wrap = [&](bool single, const VarPtr& loop_var, const Tiling& t, ExprPtr carried_in,
                    const std::function<ExprPtr(const ExprPtr&, std::vector<StmtPtr>&)>& body_fn,
                    std::vector<StmtPtr>& into) -> ExprPtr {
      if (single) return body_fn(carried_in, into);
      auto carried = Var::make(tgt_name, tensor_type);
      std::vector<StmtPtr> body;
      ExprPtr next = body_fn(carried, body);
      body.push_back(YieldStmt::make({next}));
      auto result = Var::make(tgt_name, tensor_type);
      into.push_back(ForStmt::make(loop_var, idx(0), t.count(), idx(1), {carried}, {carried_in}, SeqStmts::make(body),
                                   {result}, ForKind::Range, 0, span));
      return result;
    };
    auto store_block = [&](const ExprPtr& tensor, std::vector<StmtPtr>& into) -> ExprPtr {
      for (auto& s : inner) into.push_back(s);
      auto v = Var::make(tgt_name, tensor_type);
      std::vector<ExprPtr> at = lead;
      ExprPtr stored = tile;
      if (transpose_store_) {  // through a transposed view: the block turned, at the swapped offsets
        std::vector<StmtPtr>* saved_out = out_;
        out_ = &into;
        stored = assign("stored_t", call("tile.transpose", {as_vec(tile, span)}, {{"axis1", int64_t{0}}, {"axis2", int64_t{1}}}, span));
        out_ = saved_out;
        at.push_back(add(c0, offs[0]));
        at.push_back(add(r0, offs[1]));
      } else {
        at.push_back(add(r0, offs[0]));
        at.push_back(add(c0, offs[1]));
      }
      Attrs store_attrs;
      if (atomic_ != "none") store_attrs["atomic"] = atomic_;
      if (!store_dims_.empty()) {  // `lead` holds every root coordinate: the block steps dims store_dims_
        at = lead;
        at[store_dims_[0]] = add(at[store_dims_[0]], r0);
        at[store_dims_[1]] = add(at[store_dims_[1]], c0);
        store_attrs["dims"] = store_dims_;
      }
      into.push_back(AssignStmt::make(v, call("tile.store", {stored, ListExpr::make(at), tensor}, store_attrs, span), span));
      return v;
    };
    // Row blocks outer, column blocks inner; columns outer when the value reduces columns (and
    // no rows). Work that does not depend on the inner loop's block (a row reduction over the
    // whole row, the [rows, 1] operand of a row broadcast; a column's reduction) runs once per
    // outer block, before the inner loop, and what depends on neither once, before both: a
    // value reading its own target (x[:] = x / pl.col_sum(x)) reduces it before writing it.
    const bool cols_outer = st.col_reduce && !st.row_reduce && !rt.single() && !ct.single();
    const VarPtr &outer_var = cols_outer ? cj : ri, &inner_var = cols_outer ? ri : cj;
    const Tiling &outer = cols_outer ? ct : rt, &inner_t = cols_outer ? rt : ct;
    std::vector<StmtPtr> per_outer = inner_t.single() ? std::vector<StmtPtr>{} : hoist_out_of({inner_var}, inner);
    for (const StmtPtr& s : outer.single() ? std::vector<StmtPtr>{}
                                           : hoist_out_of({outer_var}, inner_t.single() ? inner : per_outer))
      out_->push_back(s);
    auto inner_loop = [&](const ExprPtr& tensor, std::vector<StmtPtr>& into) {
      into.insert(into.end(), per_outer.begin(), per_outer.end());
      return wrap(inner_t.single(), inner_var, inner_t, tensor, store_block, into);
    };
    ExprPtr result = wrap(outer.single(), outer_var, outer, target, inner_loop, *out_);
    auto* rv = result->as<Var>();
    PYPTO_CHECK(rv, "tensor write result");
    return std::static_pointer_cast<const Var>(result);
  }

  // Moves out of `stmts` (a loop's body; the order of both parts kept) the statements that
  // use none of `loop_vars` (the loop's own: its variable, its carried values) nor a Var
  // defined by a statement that stays, and write no memory. A Mat / Left / Right / Acc tile is
  // moved only with every statement that reads it: those memories hold the loop's own double
  // buffers, with no room for a tile living across the loop (a small Vec tile has room).
  static std::vector<StmtPtr> hoist_out_of(const std::vector<VarPtr>& loop_vars, std::vector<StmtPtr>& stmts) {
    auto results = [](const StmtPtr& s) {  // the Vars a statement leaves to the ones after it
      if (auto* a = s->as<AssignStmt>()) return std::vector<VarPtr>{a->var};
      if (auto* f = s->as<ForStmt>()) return f->return_vars;
      return std::vector<VarPtr>{};
    };
    const size_t n = stmts.size();
    std::vector<VarUses> uses(n);
    std::vector<bool> pinned(n, false);  // stays whatever it uses
    for (size_t i = 0; i < n; ++i) {
      uses[i] = collect_var_uses(stmts[i]);
      pinned[i] = writes_memory(stmts[i]) || !(stmts[i]->as<AssignStmt>() || stmts[i]->as<ForStmt>());
    }
    std::vector<bool> hoist(n);
    for (bool changed = true; changed;) {
      changed = false;
      std::unordered_set<const Var*> staying;
      for (const VarPtr& v : loop_vars) staying.insert(v.get());
      for (size_t i = 0; i < n; ++i) {
        bool depends = pinned[i];
        for (const VarPtr& v : uses[i].free_vars()) depends |= staying.count(v.get()) > 0;
        hoist[i] = !depends;
        if (depends)
          for (const VarPtr& v : uses[i].defined) staying.insert(v.get());
      }
      std::unordered_set<const Var*> read_inside;
      for (size_t i = 0; i < n; ++i)
        if (!hoist[i])
          for (const VarPtr& v : uses[i].free_vars()) read_inside.insert(v.get());
      for (size_t i = 0; i < n; ++i)
        if (hoist[i])
          for (const VarPtr& v : results(stmts[i]))
            if (on_cube_side(v) && read_inside.count(v.get())) pinned[i] = changed = true;
    }
    std::vector<StmtPtr> hoisted, kept;
    for (size_t i = 0; i < n; ++i) (hoist[i] ? hoisted : kept).push_back(stmts[i]);
    stmts = std::move(kept);
    return hoisted;
  }

  const isa::ChipSpec& chip_;
  std::vector<StmtPtr>* out_ = nullptr;
  std::vector<ExprPtr> batch_;  // the leading coordinates while a batched value is written
  bool transpose_store_ = false;  // the value is written through a transposed view
  std::vector<int64_t> store_dims_;  // the value is written through a view of two other root dims (Box::dims)
  std::string atomic_ = "none";   // the atomic mode of the tensor.assemble being written
};

// Any tensor-level value still used after lowering was used by something other than a write.
class LeftoverCheck : public IRVisitor {
 public:
  LeftoverCheck(const std::unordered_map<const Var*, ExprPtr>& defs, const std::unordered_map<const Var*, std::string>& views)
      : defs_(defs), views_(views) {}

 protected:
  void visit_var(const VarPtr& v) override {
    if (auto it = views_.find(v.get()); it != views_.end())
      fail(ErrorKind::kType, v->span,
           "the tensor view '" + it->second + "' is used where a kernel cannot fold it into loads and stores (a loop "
           "carry, a branch result, a kernel result or an op that takes no views)",
           "use the view directly in tensor-level ops, pl.load / pl.store / pl.read / pl.write, or pl.load a tile of it");
    if (defs_.count(v.get()))
      fail(ErrorKind::kType, v->span,
           "the tensor-level value '" + v->name + "' is used other than by writing it into a tensor",
           "write it into a tensor with out[:] = " + v->name + " (or out[r0:r1, c0:c1] = ...) and use that tensor");
  }
  void visit_call(const Call& c) override {
    if (c.op->view && c.op->name.rfind("tensor.", 0) == 0)
      fail(ErrorKind::kType, c.span,
           "the tensor view pl." + c.op->name + " is used where a kernel cannot fold it into loads and stores (a loop "
           "carry, a branch result, a kernel result or an op that takes no views)",
           "name the view (v = x[a:b, c:d]) and use it in tensor-level ops, pl.load / pl.store / pl.read / pl.write");
    if (tensor_op_info(*c.op))
      fail(ErrorKind::kType, c.span, "pl." + c.op->name + " on whole tensors can only be written into a tensor here",
           "assign it with out[:] = ... inside the InCore scope");
    IRVisitor::visit_call(c);
  }

 private:
  const std::unordered_map<const Var*, ExprPtr>& defs_;
  const std::unordered_map<const Var*, std::string>& views_;
};

}  // namespace

ProgramPtr lower_tensor_ops(const ProgramPtr& program, const PassContext& ctx) {
  return map_kernels(program, [&](const FunctionPtr& f) {
    Lowerer lowerer(ctx.chip);
    FunctionPtr g = f;
    if (!g->body->as<SeqStmts>())
      g = Function::make(g->name, g->params, g->directions, g->return_types, SeqStmts::make({g->body}, g->body->span),
                         g->func_type, g->span, g->level, g->role, g->attrs);
    lowerer.enter(*g);
    FunctionPtr out = lowerer.mutate_function(g);
    LeftoverCheck(lowerer.defs_, lowerer.view_names()).visit_function(*out);
    return lowerer.defs_.empty() && lowerer.view_names().empty() && out == g ? f : out;
  });
}

}  // namespace pypto::passes
