// The compiler's pipeline: one list, read top to bottom. Each entry is its own file.
#include <chrono>
#include "pypto/passes/insert_sync.h"
#include "pypto/passes/pass.h"

namespace pypto::passes {

const std::vector<Pass>& default_pipeline() {
  static const std::vector<Pass> pipeline = {
      {"OutlineIncore", outline_incore,
       "Turns every `with pl.at(level=...)` scope of an orchestration function into its own InCore "
       "function (AIC/AIV for those levels). Values used inside but defined outside become parameters; "
       "tensors written inside become Out (or InOut when also read) parameters; values defined inside and "
       "used after the scope become the function's results. The scope is replaced by a call, which the "
       "runtime later runs as one task; a scope with several results becomes the call into a tuple and one "
       "TupleGetItem per result, spliced into the enclosing statement sequence (as they print)."},
      {"PassValidRegions", pass_valid_regions,
       "Carries the valid region of an orchestration view passed to a kernel into the kernel (pl.slice(..., "
       "valid_shape=[...]) with run-time extents, pl.slice(..., clamp=True), pl.tensor.set_validshape, "
       "pl.tensor.view(..., valid_shape=)): each axis some launch narrows becomes a trailing INDEX parameter "
       "`<param>_valid<axis>` of the kernel, every launch passes the view's valid extent there (the full extent for "
       "a whole argument). Inside the kernel every pl.load of the parameter (or of a version of it: a store's result, "
       "a value a loop carries) gets its valid_shape cut to the valid part, every tile stored into it is cut to the "
       "valid part first (pl.tile.set_validshape), and its other uses (tensor-level ops) read a whole-window pl.slice "
       "of it with those valid extents, which LowerTensorOps folds the same way."},
      {"SplitAiv", split_aiv,
       "Divides every InCore function holding a `for aiv_id in pl.split_aiv(2, mode=pl.SplitMode.X)` region between "
       "the cores of a cluster: the function becomes a Group function (one mixed task, same name and signature) "
       "calling an AIC function `<name>_aic` (the cube work before and after the region) and an AIV function "
       "`<name>_aiv` once per vector lane (the region's body, `aiv_id` its last parameter, 0 or 1). Each "
       "`t = pl.aiv_shard(x)` becomes a push of `x` on the cube (split=1 for UP_DOWN, 2 for LEFT_RIGHT: each lane "
       "gets its half; NONE: a push to each lane) and a pop on the lanes; each `g = pl.aic_gather(v)` a push on the "
       "lanes and a pop on the cube (the halves joined; NONE: lane 0's tile, lane 1's is freed unread). Popped "
       "tiles are freed at the end of each side. A vector op outside the region, a cube op inside it, or a value "
       "crossing it without pl.aiv_shard / pl.aic_gather is an error; so is a region inside a loop or branch, a "
       "second region, or more than 2 crossings one way (the FIFO depth)."},
      {"LowerTensorOps", lower_tensor_ops,
       "Rewrites tensor-level compute inside InCore functions into tiles. A value built from tensor ops "
       "(`out[:] = pl.exp(pl.add(x, y))`, row/column reductions, row/column broadcasts, `pl.matmul` on "
       "Tensors) is written into its target block by block: loops over output blocks load the operand "
       "blocks, run the tile ops and store. Block sizes keep every tile of one block inside UB together, "
       "rows a multiple of 32 bytes, and prefer sizes that divide the extent; otherwise the edge block gets "
       "a run-time valid shape. Reductions walk the reduced axis in blocks and combine partial results "
       "(sums and products fold the partial into the next block's first elements: one sequential order). Row "
       "blocks are the outer loop, column blocks the inner one (columns outer when the value reduces columns and "
       "no rows). Work that does not depend on the inner loop's block (a row reduction and what is computed from "
       "it, the [rows, 1] operand of a row broadcast; a column's reduction) runs once per outer block, before the "
       "inner loop, what depends on neither once before both, and a reduction nested in "
       "a walk's blocks (softmax's row max inside its row sum, the row reductions of a computed matmul operand "
       "such as softmax(q k^T) in p @ v inside the K walk) once before the walk, with the Mat / Left / Right / "
       "Acc tiles that only it reads: a row of many blocks is read a fixed number of times, and "
       "`x[:] = x / pl.row_sum(x)` (or `pl.col_sum`) sums x before writing it; a "
       "matmul block walks K through Mat -> Left/Right with matmul then matmul_acc into Acc. A computed matmul "
       "operand (`pl.matmul(pl.exp(x), w)`, a cast) stays on chip: each of its K blocks is computed in Vec and moved "
       "Vec -> Mat, with K blocks small enough for its tiles to fit UB. A 3-D value (batch_matmul; elementwise ops, "
       "last-axis reductions and broadcasts of 3-D tensors) is written batch by batch. Tensor views "
       "(`x[a:b, c:d]`, slices of slices, `pl.transpose`, reshapes that add or remove unit axes or split or merge static axes) are folded into "
       "the loads and stores of the tensor they view, their offsets added (a transposed block is loaded as the "
       "transposed box and turned with tile.transpose in Vec, transpose_view in Mat); pl.load / pl.store / "
       "pl.assemble / pl.read / pl.write of a view address that tensor. A tensor used as a tile is one whole tile: "
       "a load of a tensor-level value computes that block, and a tensor-level value carried by a loop (split-K's "
       "`acc = pl.matmul_acc(acc, x[:, k:k+64], w[k:k+64, :])`) is computed whole before the loop, the tensor ops "
       "reading it becoming their tile ops."},
      {"InferMemory", infer_memory,
       "Puts every tile operand in the memory its consumer reads and inserts the moves, so kernels may omit "
       "pl.move: the cube reads `lhs` from Left, `rhs` from Right and `bias` from Bias, pl.transpose_view reads "
       "Mat, and every vector-pipe op reads Vec. A default (Vec) pl.load whose every use needs Mat, Left, "
       "Right or Bias loads into Mat instead; any other operand in the wrong memory gets the shortest chain "
       "of pl.tile.move over the chip's legal moves (Mat->Left/Right/Bias, Acc->Vec/Mat, Vec->Mat), e.g. a "
       "matmul result read by a vector op is moved Acc->Vec, and a vector result multiplied on the cube goes "
       "Vec->Mat->Left. Operands no chain reaches (a Left tile read by a vector op) are rejected when the op "
       "is written. pl.tile.assemble runs where its operands are (Vec into Vec, or an Acc tile into Mat through the "
       "fixpipe), so nothing is moved for it."},
      {"Unroll", unroll,
       "Replaces every `for i in pl.unroll(n)` loop (bounds known at compile time, at most 1024 iterations) by "
       "one copy of its body per iteration: the loop variable becomes the iteration's constant, every value the "
       "body defines is a fresh value of its copy, and loop-carried values flow from one copy's yield into the "
       "next copy; the loop's results are the last copy's yields."},
      {"Simplify", simplify,
       "Folds scalar arithmetic and comparisons on constants (`0 * 64 + 16` becomes 16), drops `x + 0` and "
       "`x * 1` on integers, and removes assignments of pure values that nothing uses (including uses in "
       "valid shapes), repeating until none is left. Stores, assembles and kernel calls always stay."},
      {"FlattenCalls", flatten_calls,
       "Gives every op call that is nested inside another expression (`pl.store(pl.add(a, b), ...)`) its own "
       "assignment to a fresh value just before the statement, so that every tile the program computes has a "
       "name that memory planning can place and codegen can refer to."},
      {"CommonSubexpressions", common_subexpressions,
       "In each statement list of a kernel (a function body, a loop body, a branch), a tile op that computes "
       "what an earlier op of the same list computed (the same op and attributes on the same values) is "
       "dropped, and what read its result reads the earlier one; so is a plain loop that only computes values "
       "(a reduction walking a row's blocks, a matmul walking K) repeating an earlier loop, its own values "
       "matched one to one. LowerTensorOps lowers each tensor-level statement on its own, so a value two "
       "statements read (an online softmax's scores, read by the row max and by the exp; softmax's row max, "
       "read by the exp and inside the row sum) was loaded and computed twice. A write to memory (a store, an assemble into a "
       "tensor) or an op with effects ends what is known, so a load after a store is kept; pl.tile.create "
       "(a fresh buffer) and fills made from scalars alone (pl.full, ci, tri: cheaper than the copy a shared "
       "fill needs when it starts two loop-carried values) are never merged; and a Mat / Left / Right / Acc tile is merged only when nothing that "
       "stays reads it (those buffers hold the kernel's double buffers, with no room for a tile kept alive "
       "longer)."},
      {"ExpandOps", expand_ops,
       "Rewrites every call of a composite op, one that no single PTO instruction computes (`pl.sin` and "
       "`pl.cos`: range reduction and a polynomial; `pl.addsc`: TADDS then TADD; `pl.expand_clone` of a "
       "[1, 1] tile: a row then a column broadcast), into the single-instruction op calls its registry entry "
       "gives, each assigned to a fresh value, so that memory planning places the intermediate tiles like any "
       "other tile."},
      {"InsertCarryCopies", insert_carry_copies,
       "A loop-carried tile and the value yielded for it share one buffer address. When the loop body still "
       "reads the carried tile after computing its next value (`alpha = exp(m - m_new)` after `m_new = ...`, "
       "then `m = m_new`), or yields a value it did not compute (a swap, a value from before the loop), the "
       "yielded value is first copied with pl.tile.move into a fresh tile that takes the shared address. "
       "A branch result is one value: each arm is checked on its own, so `if k == 0: acc = matmul(a, b) else: "
       "acc = matmul_acc(acc, a, b)` needs no copy (the else arm reads the carried tile only before replacing "
       "it), while a read after the replacement in either arm still does; Acc tiles cannot be copied, so such a "
       "conflict on an Acc tile is an error. "
       "The initial value shares the address too: when it is read again once the loop has started (in the "
       "body, after the loop, as the initial value of a second carry, or by the next iteration of an "
       "enclosing loop), it is copied just before the loop and the copy starts the carry."},
      {"PlanMemory", plan_memory,
       "Places every tile of every InCore function at a 32-byte aligned address of its buffer "
       "(Vec=UB, Mat=L1, Left=L0A, Right=L0B, Acc=L0C, Bias). Loop-carried tiles, branch results and views "
       "share their source's address. The two tiles an op such as sort32 returns (a tuple: values, indices) are "
       "placed as one block, the second right after the first. A Vec tile takes its rows padded to whole 32-byte units "
       "(PyPTO's rule: a [32, 1] FP32 tile takes 32 x 32 bytes). A function whose tiles exceed a buffer of the platform's chip fails "
       "with an error naming the buffer, the capacity and the largest tiles; a buffer made by pl.tile.create / pl.full "
       "(or pl.create_tensor in kernel code) that alone exceeds its memory fails first, at its own line."},
      {"PipelineLoops", pipeline_loops,
       "Software-pipelines every `for i in pl.pipeline(n, stage=k)` loop of an InCore function: it becomes a "
       "plain loop stepping k iterations at a time whose body holds k copies of the original body (copy j "
       "computes iteration i + j*step), followed by the iterations left over (unrolled when the trip count is "
       "known, else a plain loop). Copy 0 keeps PlanMemory's addresses; copy j gets its own copy of the body's "
       "tiles in a region above every other tile of the buffer (k buffer sets, ping-pong for k=2), so one copy's "
       "loads (MTE2) overlap the previous copy's compute (V/M) and stores (MTE3) once InsertSync orders only true "
       "dependencies. Tiles sharing storage with values outside the body (loop-carried values, views of outer "
       "tiles) keep one address. Fails with the bytes needed when k buffer sets do not fit; k=1 or a trip count "
       "below 2 leaves a plain loop."},
  };
  return pipeline;
}

const std::vector<KernelPass>& kernel_pipeline() {
  static const std::vector<KernelPass> pipeline = {
      {"InsertSync", [](isa::Kernel& k) { return passes::insert_sync(k) > 0; },
       "Makes each kernel's instruction stream race-free; codegen runs it on every kernel it lowers (pipes are "
       "known only per instruction). A static walk keeps, per pipe, a vector clock of what that pipe is known to be "
       "ordered after, and the pending accesses to on-chip buffer byte ranges. Before an instruction on pipe Q that "
       "conflicts with an unordered access of pipe P (read-after-write, write-after-read, write-after-write on "
       "overlapping bytes) it inserts `wait_flag(P, Q, ev)`; the matching `set_flag(P, Q, ev)` goes right after the "
       "producer when both are in one straight-line block, else right before the wait. Branch arms are merged (a "
       "pipe is ordered after what both paths order it after); loop bodies, counted and while, are walked until the "
       "flags stop changing, so dependencies from one iteration to the next are ordered too. Event ids rotate over "
       "0..7 per pipe pair, so the pairs of double-buffered tiles stay distinct; jump targets are remapped. "
       "`RunConfig(dump_passes=True)` writes `kernel_passes_dump/NN_after_InsertSync.<kernel>.pto` for each kernel "
       "it changed; `pypto._core.run_kernel_pass(kernel, \"InsertSync\")` runs it alone."},
  };
  return pipeline;
}

void run_kernel_pipeline(isa::Kernel& kernel, const KernelPassHook& after_pass) {
  int index = 0;
  for (const KernelPass& pass : kernel_pipeline()) {
    ++index;
    if (pass.run(kernel) && after_pass) after_pass(index, pass.name, kernel);
  }
}

isa::Kernel run_kernel_pass(const std::string& name, const isa::Kernel& kernel) {
  for (const KernelPass& pass : kernel_pipeline())
    if (pass.name == name) {
      isa::Kernel out = kernel;
      pass.run(out);
      return out;
    }
  std::string names;
  for (const KernelPass& p : kernel_pipeline()) names += (names.empty() ? "" : ", ") + p.name;
  fail(ErrorKind::kValue, {}, "no kernel pass named '" + name + "'", "use one of: " + names);
}

bool is_kernel_function(FunctionType t) {
  return t == FunctionType::InCore || t == FunctionType::AIC || t == FunctionType::AIV;
}

ir::ProgramPtr map_kernels(const ir::ProgramPtr& program,
                           const std::function<ir::FunctionPtr(const ir::FunctionPtr&)>& rewrite) {
  std::vector<ir::FunctionPtr> functions;
  bool changed = false;
  for (auto& f : program->functions) {
    functions.push_back(is_kernel_function(f->func_type) ? rewrite(f) : f);
    changed |= functions.back() != f;
  }
  return changed ? ir::Program::make(program->name, functions) : program;
}

ir::ProgramPtr run_pipeline(const ir::ProgramPtr& program, const PassContext& ctx) {
  if (ctx.verify) verify_program(program, "parsing");
  ir::ProgramPtr current = program;
  int index = 0;
  for (const Pass& pass : default_pipeline()) {
    const auto t0 = std::chrono::steady_clock::now();
    current = pass.run(current, ctx);
    if (ctx.pass_times)
      ctx.pass_times->emplace_back(pass.name, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    if (ctx.verify) verify_program(current, pass.name);
    if (ctx.after_pass) ctx.after_pass(++index, pass.name, current);
  }
  return current;
}

const Pass* find_pass(const std::string& name) {
  for (const Pass& pass : default_pipeline())
    if (pass.name == name) return &pass;
  return nullptr;
}

ir::ProgramPtr run_pass(const std::string& name, const ir::ProgramPtr& program, const PassContext& ctx) {
  const Pass* pass = find_pass(name);
  if (!pass) {
    std::string names;
    for (const Pass& p : default_pipeline()) names += (names.empty() ? "" : ", ") + p.name;
    fail(ErrorKind::kValue, {}, "no pass named '" + name + "'", "use one of: " + names);
  }
  if (ctx.verify)
    verify_program(program, name == default_pipeline().front().name ? "parsing" : "the pass before " + name);
  ir::ProgramPtr out = pass->run(program, ctx);
  if (ctx.verify) verify_program(out, name);
  return out;
}

}  // namespace pypto::passes
