// The on-chip movement family: copies between tiles (TMOV across memories, TTRANS, TFILLPAD,
// TEXTRACT, TINSERT, TCONCAT) and the views of PTO (TRESHAPE, TSUBVIEW, TASSIGN, the
// TFILLPAD forms). Records with their reference functions; the model's tiles are separate
// buffers, so a view copies.
#include <cstring>

#include "families.h"

namespace pypto::isa::families {

namespace {

void tmov(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  call.require_covers(src, dst.valid_rows, dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) convert_element(dst.at(r, c), dst.dtype, src.at(r, c), src.dtype);
}

void ttrans(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  call.require_covers(src, dst.valid_cols, dst.valid_rows);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c) convert_element(dst.at(r, c), dst.dtype, src.at(c, r), src.dtype);
}

void tfillpad(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  const float pad = pad_value(dst.pad, dst.dtype);
  for (int64_t r = 0; r < dst.rows; ++r)
    for (int64_t c = 0; c < dst.cols; ++c)
      if (r < src.valid_rows && c < src.valid_cols && r < src.rows && c < src.cols)
        convert_element(dst.at(r, c), dst.dtype, src.at(r, c), src.dtype);
      else
        dst.set_f(r, c, pad);
}

// The (row, col) offsets into a tile of TEXTRACT / TINSERT / TSUBVIEW (the kernel
// validator rejects other lengths; single instructions from Python arrive here unchecked).
const std::vector<int64_t>& tile_offsets(const TileCall& call) {
  const auto& off = call.ins.at(1).list;
  if (off.size() != 2)
    call.fail_runtime("the offsets into a tile are [row, col], got " + std::to_string(off.size()) + " entries",
                      "pass two offsets");
  return off;
}

void textract(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  const auto& off = tile_offsets(call);
  call.require_covers(src, off.at(0) + dst.valid_rows, off.at(1) + dst.valid_cols);
  for (int64_t r = 0; r < dst.valid_rows; ++r)
    for (int64_t c = 0; c < dst.valid_cols; ++c)
      convert_element(dst.at(r, c), dst.dtype, src.at(r + off[0], c + off[1]), src.dtype);
}

void tinsert(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  const auto& off = tile_offsets(call);
  call.require_covers(dst, off.at(0) + src.valid_rows, off.at(1) + src.valid_cols);
  for (int64_t r = 0; r < src.valid_rows; ++r)
    for (int64_t c = 0; c < src.valid_cols; ++c)
      convert_element(dst.at(r + off[0], c + off[1]), dst.dtype, src.at(r, c), src.dtype);
}

void tconcat(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& a = call.in_tile(0);
  const TileRef& b = call.in_tile(1);
  call.require_covers(dst, a.valid_rows, a.cols + b.valid_cols);
  for (int64_t r = 0; r < a.valid_rows; ++r) {
    for (int64_t c = 0; c < a.valid_cols; ++c) convert_element(dst.at(r, c), dst.dtype, a.at(r, c), a.dtype);
    for (int64_t c = 0; c < b.valid_cols; ++c) convert_element(dst.at(r, a.cols + c), dst.dtype, b.at(r, c), b.dtype);
  }
}

// TRESHAPE: dst takes src's bytes in row-major order (the byte sizes must agree).
void treshape(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const TileRef& src = call.in_tile(0);
  if (dst.bytes() != src.bytes())
    call.fail_runtime("tile '" + src.name + "' has " + std::to_string(src.bytes()) + " B, '" + dst.name + "' " +
                          std::to_string(dst.bytes()) + " B",
                      "reshape between tiles of the same byte size");
  if (dst.data != src.data) std::memmove(dst.data, src.data, static_cast<size_t>(dst.bytes()));
}

void tfillpad_inplace(const TileCall& call) {
  const TileRef& dst = call.out_tile();
  const float pad = pad_value(dst.pad, dst.dtype);
  for (int64_t r = 0; r < dst.rows; ++r)
    for (int64_t c = 0; c < dst.cols; ++c)
      if (r >= dst.valid_rows || c >= dst.valid_cols) dst.set_f(r, c, pad);
}

void no_data(const TileCall&) {}  // TASSIGN: addresses are planned, nothing moves

}  // namespace

void add_move_family(std::vector<InstrDef>& t) {
  using F = InstrFamily;
  using M = MemorySpace;
  t.push_back(instr("TMOV", F::kMove, Pipe::MTE1, "T", "T", kAny, xfer(441), "dst = src across memories, with fp32 -> fp16/bf16 conversion", {M::Vec, M::Mat, M::Left, M::Right, M::Bias}, tmov));
  t.push_back(vector_instr("TTRANS", F::kMove, "T", "T", kAny, kPassDefault, "dst[i, j] = src[j, i]", ttrans));
  t.push_back(vector_instr("TFILLPAD", F::kMove, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value elsewhere", tfillpad));
  t.push_back(instr("TEXTRACT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst = src[offsets : offsets + dst's valid shape]", kViewMemories, textract));
  t.push_back(instr("TINSERT", F::kMove, Pipe::V, "T", "TL", kAny, kPassDefault, "dst[offsets : offsets + src's valid shape] = src; the rest of dst is kept (Vec into Vec; an Acc src into a Mat dst "
      "runs on the fixpipe, FIX, and may narrow FP32 to FP16 / BF16)", {M::Vec, M::Mat}, tinsert));
  t.push_back(vector_instr("TCONCAT", F::kMove, "T", "TT", kAny, kPassDefault, "dst = [a | b]: b's columns follow a's", tconcat));
  t.push_back(instr("TRESHAPE", F::kMove, Pipe::S, "T", "T", kAny, vec(0, 1), "dst = src's bytes seen with dst's shape", kViewMemories, treshape));
  // A view in PTO; the model's tiles are separate buffers, so it copies.
  t.push_back(instr("TSUBVIEW", F::kMove, Pipe::S, "T", "TL", kAny, vec(0, 1), "dst = src[offsets : offsets + dst's valid shape] (a view)", kViewMemories, textract));
  t.push_back(instr("TASSIGN", F::kMove, Pipe::S, "T", "S", kAny, vec(0, 1), "place tile dst at byte address s (addresses are planned: no data moves)", kViewMemories, no_data));
  t.push_back(vector_instr("TFILLPAD_INPLACE", F::kMove, "T", "", kAny, kPassDefault, "dst outside its valid region = dst's pad value", tfillpad_inplace));
  t.push_back(vector_instr("TFILLPAD_EXPAND", F::kMove, "T", "T", kAny, kPassDefault, "dst = src on src's valid region, dst's pad value on the rest of the larger dst", tfillpad));
}

}  // namespace pypto::isa::families
