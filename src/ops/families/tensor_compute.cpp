// Tensor-level compute ops: every vector/cube tile op that computes a value (add, exp,
// row_sum, row_expand_sub, matmul, ...) also exists as tensor.<name> on 2-D Tensors. Types are
// inferred by running the tile op's own rules on stand-in Vec (or Left/Right) tiles, so one
// rule serves both levels; LowerTensorOps later rewrites these calls into tile loops.
#include <algorithm>
#include <unordered_map>

#include "../op_rules.h"
#include "pypto/ir/structural_equal.h"
#include "pypto/ops/tensor_ops.h"

namespace pypto::ops {

namespace {

std::unordered_map<const OpDef*, TensorOpInfo>& infos() {
  static std::unordered_map<const OpDef*, TensorOpInfo> table;
  return table;
}

bool same_dim(const ExprPtr& a, const ExprPtr& b) {
  auto ca = as_const_int(a), cb = as_const_int(b);
  if (ca || cb) return ca && cb && *ca == *cb;
  return a.get() == b.get() || structural_equal(a, b);
}

// Stand-in extents for the tile rules: static dims keep their value; each distinct run-time
// dim gets its own large placeholder, mapped back to the dim's expression afterwards.
struct DimProxy {
  std::vector<ExprPtr> symbols;
  int64_t extent(const ExprPtr& d) {
    if (auto c = as_const_int(d)) return *c;
    for (size_t i = 0; i < symbols.size(); ++i)
      if (same_dim(symbols[i], d)) return kBase + static_cast<int64_t>(i);
    symbols.push_back(d);
    return kBase + static_cast<int64_t>(symbols.size() - 1);
  }
  ExprPtr dim(const ExprPtr& e) const {
    auto c = as_const_int(e);
    if (c && *c >= kBase && *c < kBase + static_cast<int64_t>(symbols.size())) return symbols[*c - kBase];
    return e;
  }
  static constexpr int64_t kBase = int64_t{1} << 40;
};

const TensorType& tensor2d(const CallSite& s, const std::string& name) {
  const TensorType& t = tensor_arg(s, name);
  if (t.shape.size() != 2)
    op_fail(s, ErrorKind::kType,
            "argument '" + name + "' has rank " + std::to_string(t.shape.size()) + "; tensor-level ops take 2-D tensors",
            "load tiles explicitly with pl.load for tensors of other ranks");
  return t;
}

// Runs the tile op's inference on stand-in tiles and turns the tile result back into a tensor.
// `batched`: rank >= 3 operands [B.., M, N] are accepted (every tensor operand of one rank
// with the same leading extents): the tile rule runs on one batch [M, N] and the result gets B.. in front
// (LowerTensorOps writes the value batch by batch; docs/language.md "N-D tiles").
TypePtr infer_through_tile(const CallSite& s, const OpDef& tile_op, bool batched = false,
                           MemorySpace lhs_mem = MemorySpace::Vec, MemorySpace rhs_mem = MemorySpace::Vec) {
  DimProxy proxy;
  std::vector<ExprPtr> args;
  std::vector<ExprPtr> batch;  // the leading extents of rank >= 3 operands
  std::string first_2d, first_3d;
  size_t k = 0;
  for (auto& p : s.op.params) {
    if (p.kind == ParamKind::kAttr) continue;
    ExprPtr a = k < s.args.size() ? s.args[k] : nullptr;
    ++k;
    if (a && a->type && a->type->as<TensorType>()) {
      const TensorType* tp = a->type->as<TensorType>();
      if (batched && tp->shape.size() >= 3) {
        std::vector<ExprPtr> lead(tp->shape.begin(), tp->shape.end() - 2);
        bool same = batch.empty() || batch.size() == lead.size();
        for (size_t d = 0; same && !batch.empty() && d < lead.size(); ++d) same = same_dim(batch[d], lead[d]);
        if (!same)
          op_fail(s, ErrorKind::kType,
                  "the leading extents of the N-D operands differ: '" + first_3d + "' and '" + p.name + "' (" +
                      type_str(a->type) + ")",
                  "give every N-D operand the same rank and leading extents [B.., M, N]");
        if (batch.empty()) batch = lead, first_3d = p.name;
        tp = nullptr;
      } else if (!first_2d.size()) {
        first_2d = p.name;
      }
      const TensorType& full = *a->type->as<TensorType>();
      const TensorType& t = tp ? tensor2d(s, p.name) : full;
      const size_t lead = t.shape.size() - 2;
      MemorySpace mem = args.empty() ? lhs_mem : rhs_mem;
      std::vector<ExprPtr> shape = {ConstInt::make(proxy.extent(t.shape[lead])),
                                    ConstInt::make(proxy.extent(t.shape[lead + 1]))};
      a = Var::make(p.name, TileType::make(shape, t.dtype, mem), a->span);
    } else if (a && a->type && a->type->as<TileType>()) {
      op_fail(s, ErrorKind::kType, "argument '" + p.name + "' is a tile; the tensor form takes tensors",
              "use pl.tile." + tile_op.name.substr(5) + " for tiles, or pass a tensor");
    }
    args.push_back(a);
  }
  if (!batch.empty() && !first_2d.empty())
    op_fail(s, ErrorKind::kType,
            "'" + first_2d + "' is 2-D but '" + first_3d + "' is " + std::to_string(batch.size() + 2) +
                "-D; a tensor-level op on N-D tensors takes operands of one rank",
            "give '" + first_2d + "' the leading extents too ([B.., M, N]), or write the N-D value batch by batch");
  TypePtr r = tile_op.infer_type(CallSite{s.op, args, s.attrs, s.span});
  auto* tile = r->as<TileType>();
  PYPTO_CHECK(tile, "tile op " + tile_op.name + " did not give a tile");
  if (!batch.empty()) {
    batch.push_back(proxy.dim(tile->shape[0]));
    batch.push_back(proxy.dim(tile->shape[1]));
    return TensorType::make(batch, tile->dtype);
  }
  return TensorType::make({proxy.dim(tile->shape[0]), proxy.dim(tile->shape[1])}, tile->dtype);
}

TypePtr infer_matmul(const CallSite& s, const OpDef& tile_op) {
  const TensorType& a = tensor2d(s, "lhs");
  const TensorType& b = tensor2d(s, "rhs");
  // a_trans / b_trans: the operand is stored transposed (lhs [K, M], rhs [N, K]); LowerTensorOps
  // loads its blocks and views them transposed (pl.tile.transpose_view) on the way to the cube.
  bool at = bool_attr(s, "a_trans"), bt = bool_attr(s, "b_trans");
  const ExprPtr& m = a.shape[at ? 1 : 0];
  const ExprPtr& ka = a.shape[at ? 0 : 1];
  const ExprPtr& kb = b.shape[bt ? 1 : 0];
  const ExprPtr& n = b.shape[bt ? 0 : 1];
  if (!same_dim(ka, kb))
    op_fail(s, ErrorKind::kType, "inner dimensions differ: 'lhs' is " + type_str(s.arg("lhs")->type) +
                                     (at ? " (a_trans)" : "") + " and 'rhs' is " + type_str(s.arg("rhs")->type) +
                                     (bt ? " (b_trans)" : ""),
            std::string("lhs must be ") + (at ? "[K, M]" : "[M, K]") + " and rhs " + (bt ? "[N, K]" : "[K, N]"));
  // The cube's extent limits apply to tiles, not to whole tensors: check dtypes on small stand-ins.
  std::vector<ExprPtr> args;
  for (auto [t, mem] : {std::pair{&a, MemorySpace::Left}, {&b, MemorySpace::Right}})
    args.push_back(Var::make("x", TileType::make(const_shape({16, 16}), t->dtype, mem)));
  Attrs attrs = s.attrs;
  attrs["a_trans"] = false;
  attrs["b_trans"] = false;
  // Without out_dtype a tensor matmul gives its operands' float dtype (PyPTO: the promoted input
  // dtype; fp16 x fp16 -> fp16, accumulated in FP32 and rounded once per block); integer
  // operands give the cube's INT32.
  if (auto it = attrs.find("out_dtype"); it == attrs.end() || std::holds_alternative<std::string>(it->second)) {
    DataType promoted = a.dtype == b.dtype && (a.dtype == DataType::FP16 || a.dtype == DataType::BF16) ? a.dtype
                                                                                                     : DataType::FP32;
    attrs["out_dtype"] = dtype_is_float(a.dtype) ? promoted : DataType::INT32;
  }
  // pl.matmul(a, b, out_dtype=pl.FP16 / pl.BF16) on tensors: the cube's FP32 accumulator
  // narrowed on the way out (LowerTensorOps casts each block, round to nearest even).
  DataType want = dtype_attr(CallSite{s.op, s.args, attrs, s.span}, "out_dtype");
  bool narrow = s.op.name == "tensor.matmul" && (want == DataType::FP16 || want == DataType::BF16);
  if (narrow) attrs["out_dtype"] = DataType::FP32;
  TypePtr r = tile_op.infer_type(CallSite{tile_op, args, attrs, s.span});
  DataType got = r->as<TileType>()->dtype;
  return TensorType::make({m, n}, narrow && got == DataType::FP32 ? want : got);
}

// matmul_acc(acc [M, N], lhs, rhs): the product's type must be acc's.
TypePtr infer_matmul_acc(const CallSite& s, const OpDef& tile_op) {
  const TensorType& acc = tensor2d(s, "acc");
  if (ExprPtr init = s.arg("init_cond")) scalar_arg(s, "init_cond");
  Attrs attrs = s.attrs;
  attrs["out_dtype"] = acc.dtype;
  TypePtr p = infer_matmul(CallSite{s.op, s.args, attrs, s.span}, tile_op);
  const TensorType& prod = *p->as<TensorType>();
  if (!same_dim(prod.shape[0], acc.shape[0]) || !same_dim(prod.shape[1], acc.shape[1]) || prod.dtype != acc.dtype)
    op_fail(s, ErrorKind::kType,
            "'acc' is " + type_str(s.arg("acc")->type) + " but lhs @ rhs is " + type_str(p),
            "give acc the product's shape [M, N] and dtype (FP32 for float operands)");
  return s.arg("acc")->type;
}

// batch_matmul(lhs [B, M, K], rhs [B, K, N] or [K, N]) -> [B, M, N]: dtypes checked by the
// tile matmul's rules on stand-in tiles.
TypePtr infer_batch_matmul(const CallSite& s, const OpDef& tile_op) {
  for (const char* name : {"lhs", "rhs"}) {
    ExprPtr e = s.arg(name);
    if (e && e->type && e->type->as<TileType>())
      op_fail(s, ErrorKind::kType,
              std::string("argument '") + name + "' is a tile; batch_matmul multiplies 3-D tensors [B, M, K] @ [B, K, N] "
              "and tiles are 2-D",
              "call pl.matmul on the [M, K] and [K, N] tiles of each batch, or pass the 3-D tensors");
  }
  const TensorType& a = tensor_arg(s, "lhs");
  const TensorType& b = tensor_arg(s, "rhs");
  // Rank N > 3: the leading axes [B1, .., M, K] are the batch (written batch by batch over them merged).
  const size_t n = a.shape.size();
  if (n < 3)
    op_fail(s, ErrorKind::kType, "'lhs' must be a 3-D tensor [B, M, K], got " + type_str(s.arg("lhs")->type),
            "use pl.matmul for 2-D operands");
  if (b.shape.size() != n && b.shape.size() != 2)
    op_fail(s, ErrorKind::kType, "'rhs' must be [B.., K, N] (lhs's rank) or a shared [K, N], got " +
                                     type_str(s.arg("rhs")->type));
  size_t kb = b.shape.size() - 2;
  for (size_t d = 0; b.shape.size() == n && d + 2 < n; ++d)
    if (!same_dim(a.shape[d], b.shape[d]))
      op_fail(s, ErrorKind::kType,
              "batch sizes differ: 'lhs' is " + type_str(s.arg("lhs")->type) + ", 'rhs' is " + type_str(s.arg("rhs")->type),
              "give both operands the same leading dimensions B.., or a 2-D rhs shared by every batch");
  if (!same_dim(a.shape[n - 1], b.shape[kb]))
    op_fail(s, ErrorKind::kType,
            "inner dimensions differ: 'lhs' is " + type_str(s.arg("lhs")->type) + " and 'rhs' is " +
                type_str(s.arg("rhs")->type),
            "lhs must be [B, M, K] and rhs [B, K, N]");
  std::vector<ExprPtr> args;
  for (auto [t, mem] : {std::pair{&a, MemorySpace::Left}, {&b, MemorySpace::Right}})
    args.push_back(Var::make("x", TileType::make(const_shape({16, 16}), t->dtype, mem)));
  TypePtr r = tile_op.infer_type(CallSite{s.op, args, s.attrs, s.span});
  std::vector<ExprPtr> shape(a.shape.begin(), a.shape.end() - 1);
  shape.push_back(b.shape[kb + 1]);
  return TensorType::make(shape, r->as<TileType>()->dtype);
}

void lower_unlowered(const Call& c, const VarPtr&, KernelBuilder&) {
  fail(ErrorKind::kType, c.span, "pl." + c.op->name + " on whole tensors is only compiled inside an InCore scope",
       "put it inside `with pl.at(level=pl.Level.CORE_GROUP):` and write the result with out[:] = ...");
}

// tensor.<name> for the tile op `tile_op` (whose record asks for it: OpDef::tensor_form).
void add_form(OpRegistry& r, const OpDef* tile_op) {
  const std::string name = tile_op->name.substr(5);  // "tile.<name>"
  const TensorOpShape shape = tile_op->tensor_form;
  InferTypeFn infer = shape == TensorOpShape::kMatmul
                          ? InferTypeFn([tile_op](const CallSite& s) { return infer_matmul(s, *tile_op); })
                          : InferTypeFn([tile_op, shape](const CallSite& s) {
                              // 3-D tensors: elementwise ops, last-axis reductions and broadcasts, batch by batch.
                              bool nd = shape == TensorOpShape::kElementwise || shape == TensorOpShape::kRowReduce ||
                                        shape == TensorOpShape::kRowExpand || shape == TensorOpShape::kColExpand;
                              return infer_through_tile(s, *tile_op, nd);
                            });
  if (shape == TensorOpShape::kConcat)
    infer = [tile_op](const CallSite& s) {
      for (const char* p : {"lhs", "rhs"})
        if (s.arg(p) && s.arg(p)->type && s.arg(p)->type->as<TensorType>() && !as_const_int(tensor2d(s, p).shape[1]))
          op_fail(s, ErrorKind::kType,
                  std::string("the row length of '") + p + "' (" + type_str(s.arg(p)->type) + ") is known only at run time",
                  "concatenate tensors whose column counts are static");
      return infer_through_tile(s, *tile_op);
    };
  std::string variant = tile_op->scalar_variant.empty() ? "" : "tensor." + tile_op->scalar_variant.substr(5);
  // PyPTO's tensor gather/scatter take `dim` second: pl.tensor.gather(input, dim, index);
  // scatter also has the mask form's `dst` (rejected by type inference).
  std::vector<ParamSpec> params = tile_op->params;
  if (shape == TensorOpShape::kMatmul)  // tensor.matmul: no out_dtype means the promoted input dtype (infer_matmul)
    for (auto& p : params)
      if (p.name == "out_dtype") p = quiet(attr_param("out_dtype", std::string()));
  if (shape == TensorOpShape::kGather || shape == TensorOpShape::kScatter) {
    auto dim = std::find_if(params.begin(), params.end(), [](const ParamSpec& p) { return p.name == "dim"; });
    ParamSpec d = *dim;
    params.erase(dim);
    params.insert(params.begin() + 1, d);
    if (shape == TensorOpShape::kScatter) {
      params[0].aliases = {"input"};
      params.push_back(hint(expr_param("dst", true)));
    }
  }
  const OpDef& def = r.add({.name = "tensor." + name,
                            .params = params,
                            .infer_type = infer,
                            .pto = "",
                            .lower = lower_unlowered,
                            .doc = "Whole-tensor form of pl.tile." + name + ", tiled by LowerTensorOps: " + tile_op->doc,
                            .aliases = tile_op->tensor_aliases,
                            .scalar_variant = variant,
                            .torch = tile_op->torch});
  infos()[&def] = {tile_op, shape};
}

}  // namespace

void register_tensor_compute_ops(OpRegistry& r) {
  using S = TensorOpShape;
  // The whole-tensor form of every tile op whose record asks for one (OpDef::tensor_form),
  // in registration order: a new tile op gets its pl.tensor.<name> from its own record.
  for (const OpDef* op : r.all())
    if (op->tensor_form != S::kNone && op->name.rfind("tile.", 0) == 0) add_form(r, op);
  // Tensor ops of their own (no one tile op computes a block of them alone).
  const OpDef* matmul = r.find("tile.matmul");
  const OpDef& bmm = r.add({.name = "tensor.batch_matmul",
                            .params = matmul->params,  // lhs, rhs, out_dtype, a_trans, b_trans
                            .infer_type = [matmul](const CallSite& s) { return infer_batch_matmul(s, *matmul); },
                            .pto = "",
                            .lower = lower_unlowered,
                            .doc = "[B, M, K] @ [B, K, N] (or a [K, N] rhs shared by every batch) -> [B, M, N], one "
                                   "matmul per batch, tiled by LowerTensorOps like pl.matmul (TMATMUL, TMATMUL_ACC).",
                            .aliases = {},
                            .scalar_variant = "",
                            .torch = "_bmm({lhs}, {rhs}, {dtype}, {a_trans}, {b_trans})"});
  infos()[&bmm] = {matmul, S::kBatchMatmul};
  const OpDef& mma = r.add({.name = "tensor.matmul_acc",
                            .params = {expr_param("acc"), expr_param("lhs"), expr_param("rhs"), attr_param("a_trans", false),
                                       attr_param("b_trans", false), expr_param("init_cond", true)},
                            .infer_type = [matmul](const CallSite& s) { return infer_matmul_acc(s, *matmul); },
                            .pto = "",
                            .lower = lower_unlowered,
                            .doc = "acc + lhs @ rhs on whole tensors (a_trans / b_trans as pl.matmul's), tiled by "
                                   "LowerTensorOps: each block of the product (TMATMUL, TMATMUL_ACC over K) is added to "
                                   "acc's block; a literal init_cond=True gives lhs @ rhs alone.",
                            .aliases = {},
                            .scalar_variant = "",
                            .torch = "(_mm({lhs}.transpose(-1, -2) if {a_trans} else {lhs}, {rhs}.transpose(-1, -2) if "
                                     "{b_trans} else {rhs}, {dtype}) + (0 if {init_cond=False} else {acc}))"});
  infos()[&mma] = {matmul, S::kMatmulAcc};
}

std::optional<TensorOpInfo> tensor_op_info(const OpDef& op) {
  auto& t = infos();
  auto it = t.find(&op);
  if (it == t.end()) return std::nullopt;
  return it->second;
}
}  // namespace pypto::ops
