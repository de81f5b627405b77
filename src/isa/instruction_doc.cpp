// Renders the instruction table as Markdown: docs/isa.md is this text, regenerated with
// `python tools/gen_isa_doc.py` and checked for freshness by tests/isa/test_reference_added.py (test_isa_doc_is_up_to_date).
#include <cstdio>
#include <sstream>

#include "pypto/isa/instructions.h"

namespace pypto::isa {

namespace {

// `mask_first`: the first operand is a packed mask tile.
std::string operand_text(const std::string& sig, bool mask_first = false) {
  if (sig.empty()) return "-";
  std::string s;
  for (char c : sig) {
    if (mask_first && s.empty()) {
      s = "mask tile (UINT8, packed)";
      continue;
    }
    const bool optional = c >= 'a' && c <= 'z';
    const char* kind = "scalar";
    switch (c) {
      case 'T': case 't': kind = "tile"; break;
      case 'G': case 'g': kind = "tensor"; break;
      case 'L': case 'l': kind = "offsets"; break;
      default: break;
    }
    s += std::string(s.empty() ? "" : ", ") + kind + (optional ? "?" : "");
  }
  return s;
}

std::string cost_text(const InstrDef& d) {
  char buf[96];
  if (d.family == InstrFamily::kMatmul) return "6 + ceil(M/16)·ceil(K/K0)·ceil(N/16) (x2 fp32)";
  if (d.name == "TPUSH")
    return "bytes / path GiB/s + 30: Acc -> Vec 128, other paths 100.9 (the global -> UB figure)";
  if (d.name == "TPOP") return "30 (handshake: one transfer startup)";
  if (d.family == InstrFamily::kSync || d.pipe == Pipe::S) std::snprintf(buf, sizeof buf, "%g", d.cost.head);
  else if (d.cost.bandwidth_gib_s > 0)
    std::snprintf(buf, sizeof buf, "bytes / %g GiB/s + %g", d.cost.bandwidth_gib_s, d.cost.startup_cycles);
  else std::snprintf(buf, sizeof buf, "%g R + %g", d.cost.slope, d.cost.head);
  return std::string(buf) + (d.cost.published ? " (published)" : "");
}

// The FIFO protocol in one paragraph (docs/isa.md states it under the family's table).
const char* cross_core_fifo_markdown() {
  return "**Cross-core FIFOs.** A mixed task (a Group kernel) runs one AIC kernel and one or two AIV kernels\n"
         "of a cluster at once. Each AIV has two FIFOs with the AIC, one per direction, of `fifo_depth` slots\n"
         "(chip table: 2). Attribute `peer` names the other end: \"AIV0\" / \"AIV1\" in the AIC kernel, \"AIC\"\n"
         "in an AIV kernel.\n\n"
         "- TPUSH copies its tile's valid region (dtype, valid rows x cols) into the next slot. It waits while\n"
         "  that slot is full or popped but not yet freed. An AIC push lands in the AIV's UB (Vec). An AIV push\n"
         "  lands in the AIC's L1 (Mat).\n"
         "- TPOP waits for the oldest filled slot and copies it into its destination tile. The destination's\n"
         "  dtype and valid shape must equal the pushed tile's. The slot stays popped until TFREE.\n"
         "- TFREE releases the oldest popped slot, so the producer may refill it. Its tile operand is the\n"
         "  popped tile, written as an output, so that every read of the tile is ordered before the free.\n"
         "- Timing (sim): a TPOP starts no earlier than its slot's TPUSH ended; a TPUSH into a recycled slot\n"
         "  starts no earlier than the TFREE that released it. When every unfinished part of a mixed task\n"
         "  waits on a FIFO, the run fails and names each part, its instruction, its line and the FIFO state.\n";
}

// The native engine's matmul paths per CPU feature (include/pypto/isa/optimized/matmul.h).
std::string matmul_fast_paths_markdown() {
  return "### Matmul fast paths (native engine)\n\n"
         "The native engine compiles TMATMUL / TMATMUL_ACC / TMATMUL_BIAS / TGEMV* with ND operands into\n"
         "include/pypto/isa/optimized/matmul.h; the kernel's compile target picks the path (-march=native,\n"
         "so the machine that runs it). `PYPTO_NATIVE_ISA` forces a lower target: `avx512_bf16` (x86-64-v4 +\n"
         "AVX512_BF16, no AMX), `avx512` (x86-64-v4), `avx2` (x86-64-v3), `scalar` (x86-64, SSE2), or `native`\n"
         "(the default); it is part of the kernel cache key (pypto/base/env.h, `pypto._core.cache_key_env_vars()`).\n"
         "`pypto._core.native_matmul_paths()` names the path of each operand dtype under the current setting\n"
         "(BF16 with AMX compiled in: the path this process runs, AMX only where a probe product ran on the tiles).\n\n"
         "| Target has | FP32 | BF16 | FP16 |\n"
         "|---|---|---|---|\n"
         "| AMX-BF16 (AMX-TILE) | as AVX-512 | `tdpbf16ps` on tile registers, whole 32 x 32 blocks of C and the "
         "multiples of 32 of each K block; the row, column and K tails on vdpbf16ps; M <= 16 (GEMV-shaped) wholly on "
         "the tiles: M tile rows, B in 32 x 64 blocks pair-interleaved once | as AVX-512 |\n"
         "| AVX-512F + AVX512_BF16 | 8 x 32 FMA micro-kernel | `vdpbf16ps` on (k, k+1) pairs, 8 x 32 | F16C widened, 8 x 32 FMA |\n"
         "| AVX-512F | 8 x 32 FMA | widened (a shift), 8 x 32 FMA | F16C widened, 8 x 32 FMA |\n"
         "| AVX2 + FMA | 6 x 16 FMA | widened, 6 x 16 FMA | F16C widened, 6 x 16 FMA |\n"
         "| baseline (SSE2) | 6 x 8 mul + add | widened, 6 x 8 | widened (fp16.h), 6 x 8 |\n\n"
         "B is packed per K block (KC = 256) into NR-wide column panels (pair-interleaved for vdpbf16ps\n"
         "and AMX), A is read in place (FP16 / BF16 rows widened first on the FMA paths); M <= 16 rows\n"
         "(GEMV-shaped, N a multiple of the vector) take a 16-row kernel (8 without AVX-512) that reads\n"
         "every B row once, unpacked; other shapes of at most three row panels of the FMA micro-kernel\n"
         "(M <= 18 with AVX2, the decode layer's 16 rows) read B in place too, every row panel widening\n"
         "it on the fly (BF16: each 32-bit pair of a row split into its even and odd column by a shift\n"
         "and an and, the sums zipped back), the line two ahead prefetched 8 rows ahead; with AMX, BF16 GEMV shapes (any N and K) run on the tiles instead:\n"
         "the M rows are the Acc and Left tiles' rows, and each 32 x 64 block of B is read once from\n"
         "memory, pair-interleaved into a 4 KiB buffer and multiplied as four Right tiles. Every path\n"
         "accumulates in FP32 and differs from the reference only\n"
         "in the order of the additions (products of FP16 / BF16 values are exact in FP32), so results\n"
         "agree within gamma_(K+1) * sum_k |a_ik b_kj| (tests/isa/test_matmul_fast_paths.py, on every\n"
         "target the CPU runs); vdpbf16ps and tdpbf16ps also flush subnormal inputs and results to zero.\n"
         "The AMX path requests the tile state from Linux (arch_prctl ARCH_REQ_XCOMP_PERM) once per process\n"
         "(refused: vdpbf16ps), and loads its tile configuration at the start of each matmul and releases\n"
         "the tiles at its end (another library on the thread may use them between two calls).\n";
}

// The accumulation order of TROW* / TCOL* (src/isa/families/reduction.cpp;
// include/pypto/isa/optimized/tile_ops.h keeps the same order).
std::string reduction_order_markdown() {
  return "### Reduction order\n\n"
         "The chip's vector unit adds in the element dtype, so a reduction's order shows in its FP16 / BF16\n"
         "(and, less, FP32) result. Both libraries (the reference and the native engine's optimised one)\n"
         "follow one model, bit for bit:\n\n"
         "| Instruction | Without a scratch tile | With a scratch tile (ins[1], PyPTO's `tmp_tile`) | Accumulator |\n"
         "|---|---|---|---|\n"
         "| TROWSUM, TCOLSUM | sequential | binary tree | the dtype: each step rounded to FP32 / FP16 / BF16 |\n"
         "| TROWPROD, TCOLPROD | sequential | binary tree | the dtype: each step rounded |\n"
         "| TROWMAX, TROWMIN, TCOLMAX, TCOLMIN | order-free | order-free | exact |\n"
         "| integer dtypes (all of the above) | order-free | order-free | int64, wrapped to the dtype on store |\n\n"
         "- **Sequential**: over the n valid elements x[0..n) of a row (TROW*) or column (TCOL*),\n"
         "  `acc = x[0]; acc = round(acc op x[k])` for k = 1 .. n-1.\n"
         "- **Binary tree**: the upper half folded onto the lower half until one element is left:\n"
         "  `while n > 1: v[i] = round(v[i] op v[i + ceil(n/2)]) for i < floor(n/2); n = ceil(n/2)`\n"
         "  (n = 5: (x0+x3)+x2 and x1+x4, then their sum). Each level is one contiguous vector add.\n"
         "- `round` rounds the FP32 result of the step to the dtype (nearest even): the correctly rounded\n"
         "  FP16 / BF16 step. A sum accumulated in FP32 and rounded once can differ by an ulp or more,\n"
         "  and a long sequential FP16 sum stagnates (past 2048 an FP16 sum no longer takes addends below\n"
         "  1): on tiles pass a scratch tile for the tree, or cast to FP32 before summing.\n"
         "- Max / min give the same value in any order; a zero result has the sign of the last zero in\n"
         "  index order (either order). Wrapping integer sums and products do not depend on the order.\n"
         "- Where PyPTO programs meet it: a tile `pl.row_sum(t, tmp_tile=tmp)` (PyPTO requires tmp_tile on tile\n"
         "  row reductions) and `pl.tile.col_sum(t, tmp_tile=tmp)` sum in the tree; `pl.tile.col_sum(t)` and\n"
         "  `pl.tile.row_sum(t)` (accepted here without tmp_tile) sum sequentially. Tensor reductions\n"
         "  (`s[:] = pl.row_sum(x)`) pass no scratch and are sequential over the whole row (column): where\n"
         "  LowerTensorOps walks it in blocks, the partial sum (product) is folded into the first element of\n"
         "  each row (column) of the next block before that block is reduced, so the order stays acc op x[k].\n";
}

}  // namespace

std::string instruction_table_markdown() {
  std::ostringstream os;
  os << "# PTO instruction table\n\n"
     << "Generated from include/pypto/isa/instructions.h by `python tools/gen_isa_doc.py`; do not edit.\n"
     << "Cost: R = ceil(valid bytes / 256) vector repeats (+16 cycles when a row is not a whole number\n"
     << "of repeats); transfers at 1.85 GHz. Memories: where the destination tile may live. Dtypes: of the\n"
     << "destination; of the first source for TSTORE, MSCATTER, TPREFETCH, the arg-reductions, TCMP and TCMPS\n"
     << "(whose destination is a packed mask).\n\n"
     << "Precision (the reference library, src/isa/families/ and src/engines/sim/, is the spec): float operands are\n"
     << "read as FP32 and every arithmetic step is one FP32 operation rounded to nearest even; the\n"
     << "result is rounded once to the destination dtype. One +, -, *, /, max, min, abs or neg of\n"
     << "FP16/BF16 operands is thereby correctly rounded (FP32 has more than twice their bits plus\n"
     << "two). The scalar of a float instruction is first rounded to the instruction's dtype.\n"
     << "sqrt, 1/x, exp, log, 1/sqrt, pow and EXPDIF's exp are computed in double and rounded once:\n"
     << "sqrt and 1/x correctly rounded, the others within 1 ulp of it. TAXPY, TMULADDDST, TADDC\n"
     << "and TSUBC are two FP32 steps (no fused multiply-add); matmul accumulates in FP32 in index\n"
     << "order; reductions accumulate in their dtype, in the order of \"Reduction order\" below.\n"
     << "Conversions (TCVT, TMOV, ...) round once, under TCVT's mode.\n\n"
     << "Integer dtypes: INT8, INT16, INT32, INT64, UINT8, UINT16 and UINT32 compute as numpy's fixed-width\n"
     << "integers (+, -, * wrap modulo 2^bits; comparisons, max/min, division and right shifts see the\n"
     << "unsigned value of a UINT dtype). UINT64 tiles load, store, move, select, broadcast and convert\n"
     << "(TCVT reads their unsigned value) but no arithmetic instruction takes them.\n\n"
     << "Vec row padding: a Vec tile's rows are allocated in whole 32-byte units, so a tile whose row is\n"
     << "narrower ([32, 1] FP32, the row-reduction result; [16, 4] FP16) or not a multiple of 32 bytes\n"
     << "takes rows x ceil(row bytes / 32) x 32 bytes of UB (PyPTO's rule: `[N, 1]` tiles are implicitly\n"
     << "col_major, rows padded to 32 bytes). Memory planning, overlap checks and the footprint count\n"
     << "that size; the engines keep the elements row-major and dense from the tile's address, inside\n"
     << "the padded allocation. Other memories hold tiles densely.\n\n"
     << "## Scalar semantics\n\n"
     << "Scalar arithmetic (the scalar unit of kernels and of the host) has one definition,\n"
     << "include/pypto/base/scalar_ops.h, used by Simplify's constant folding, the scalar machine of\n"
     << "both engines and of the host, the native engine's generated C++, the `@pto.kernel` lane API\n"
     << "(its launch-time folding and the warp model); the torch script's prelude states the same\n"
     << "rules (`_scalar_divmod`). tests/isa/test_scalar_semantics.py runs one table of pairs through\n"
     << "all of them against Python's `//` and `%`. Scalar casts: include/pypto/base/scalar_cast.h.\n\n"
     << "| case | rule | example |\n"
     << "|---|---|---|\n"
     << "| integer `a // b`, `a % b` | Python's: quotient rounded toward -inf, remainder with the divisor's sign | `-7 // 2 == -4`, `-7 % 2 == 1`, `7 % -2 == -1` |\n"
     << "| integer `+ - *` overflow, at run time | an error at the user's line on every engine (sim, host, native: the generated code checks and reports through the reference path): offsets and indices are computed this way, and a wrapped offset would pass the bounds check | `integer overflow: 4611686018427387904 * 4 does not fit in 64 bits (-2**63 .. 2**63 - 1)` |\n"
     << "| integer `+ - *` overflow, constant | Simplify leaves it unfolded (the run reports it if the code runs); Python constants the parser folds are checked there | `the integer 18446744073709551616 does not fit in 64 bits` |\n"
     << "| integer division overflow | 64-bit two's complement (Python's ints would grow) | `INT64_MIN // -1 == INT64_MIN`, `INT64_MIN % -1 == 0` |\n"
     << "| integer divisor 0, constant | compile error at the user's line (Python raises ZeroDivisionError) | `integer division by zero: the divisor of '//' is the constant 0` |\n"
     << "| integer divisor 0, at run time | every engine raises `integer division by zero` at the line (sim, native: through the reference; host; warp model; torch script: ZeroDivisionError) | `64 // n` with `n == 0` |\n"
     << "| float `x // y`, `x % y` | Python's (CPython's float divmod): `x % y` has y's sign (a zero remainder is 0.0 with y's sign), `x // y` is `(x - x % y) / y` rounded to an integer | `1.0 // 0.1 == 9.0`, `-0.0 % 1.0 == 0.0`, `-1.0 // inf == -1.0`, `-1.0 % inf == inf`, `inf // 1.0` is NaN |\n"
     << "| float divisor 0.0, at run time | IEEE results, no error (a device keeps going, as TDIV does) | `x // 0.0 == floor(x / 0.0)` (+-inf; NaN for 0 or NaN), `x % 0.0` is NaN, `x / 0.0` is +-inf |\n"
     << "| float divisor 0.0, constant | compile error (Python's rule), also for `/` | `float division by zero: ...` |\n"
     << "| lane values (`@pto.kernel`) | numbers (doubles; lanes hold fp32): `//` and `%` follow the float rules above, which equal the integer rules for integer values; an integer divisor 0 is an error at the kernel's line (at launch when the divisor is known then, from the warp model otherwise) | `pto.store(o + i, a // b)` |\n\n";
  for (int f = 0; f <= static_cast<int>(InstrFamily::kCrossCore); ++f) {
    const InstrFamily family = static_cast<InstrFamily>(f);
    os << "\n## " << instr_family_name(family) << "\n\n"
       << "| Instruction | .pto | Pipe | Outs | Ins | Dtypes | Memories | Cycles | Computes |\n"
       << "|---|---|---|---|---|---|---|---|---|\n";
    for (const InstrDef* d : all_instrs()) {
      if (d->family != family) continue;
      std::string dts, mems;
      for (DataType t : d->dtypes) dts += std::string(dts.empty() ? "" : " ") + dtype_name(t);
      for (MemorySpace m : d->memories) mems += std::string(mems.empty() ? "" : " ") + memory_space_name(m);
      if (d->family == InstrFamily::kSync) dts = "-";
      os << "| " << d->name << " | `" << pto_mnemonic(*d) << "` | " << pipe_name(d->pipe) << " | "
         << operand_text(d->outs_sig, d->mask == MaskUse::kWritesOut0) << " | "
         << operand_text(d->ins_sig, d->mask == MaskUse::kReadsIn0) << " | " << dts << " | "
         << (mems.empty() ? "-" : mems) << " | " << cost_text(*d) << " | " << d->summary << " |\n";
    }
    if (family == InstrFamily::kCompare) os << "\n" << packed_mask_layout_markdown();
    if (family == InstrFamily::kReduction) os << "\n" << reduction_order_markdown();
    if (family == InstrFamily::kMatmul) os << "\n" << matmul_fast_paths_markdown();
    if (family == InstrFamily::kCrossCore) os << "\n" << cross_core_fifo_markdown();
  }
  return os.str();
}

}  // namespace pypto::isa
