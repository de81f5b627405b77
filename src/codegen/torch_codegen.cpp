// The PyTorch script of a program (pypto.debug.torch_codegen). Statements map one to one:
// loops stay loops, branches stay branches, scalars are Python numbers, kernel calls are
// function calls, `pl.at` blocks run inline and SPMD launches loop over their blocks. Each op
// call is the torch expression of its registry definition (OpDef::torch), expanded here.
// A tile is a torch tensor of its allocated shape; an op computes its result's valid region
// and `_fit` places it in the allocated shape, as the engines write only valid regions.
#include "pypto/codegen/torch_codegen.h"

#include <algorithm>
#include <sstream>

#include "pypto/ops/op_registry.h"
#include "pypto/isa/chip.h"
#include "pypto/ir/printer.h"

namespace pypto::codegen {

namespace {

using namespace ir;

// The script's model of tiles and memory: the helpers op spellings call.
const char* kPrelude = R"PY(import math
import queue
import threading
import time

import torch

# Tiles are torch tensors of their allocated shape. An op computes over its result's valid
# region (a [rows, cols] prefix); outside it a tile holds its pad value (zero by default).
# Global tensors are the caller's torch tensors, written in place by stores.


def _pad_value(pad, dtype):
    if pad in (None, "null", "zero"):
        return 0
    if dtype == torch.bool:
        return pad == "max"
    info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
    return info.max if pad == "max" else info.min


def _fit(v, rows, cols, pad=None):
    """A valid region `v` placed in a [rows, cols] tile whose other elements hold `pad`."""
    if tuple(v.shape) == (rows, cols):
        return v
    out = torch.full((rows, cols), _pad_value(pad, v.dtype), dtype=v.dtype)
    out[: v.shape[0], : v.shape[1]] = v
    return out


def _tslice(t, offsets, shape, drop_dims=()):
    """The window [shape] at offsets of tensor t, a view sharing t's storage (drop_dims removed)."""
    view = t[tuple(slice(int(o), int(o) + int(n)) for o, n in zip(offsets, shape))]
    for d in sorted({int(x) % view.dim() for x in drop_dims}, reverse=True):
        view = view.squeeze(d)
    return view


def _treinterpret(t, dtype, shape=None):
    """t's bytes as dtype (a view); without shape the last axis scales by the element sizes."""
    v = t.view(dtype)
    return v if shape is None else v.reshape([int(n) for n in shape])


# torch's uint16 / uint32 / uint64 have few ops (no add): tiles of those dtypes are held as
# int64 (the same values; stores convert back to the tensor's dtype).
_UNSIGNED = tuple(getattr(torch, n) for n in ("uint16", "uint32", "uint64") if hasattr(torch, n))


def _widen(t):
    return t.to(torch.int64) if t.dtype in _UNSIGNED else t


def _box(t, o, dims, rows, cols):
    """The view of t whose rows step dim dims[0] and columns dim dims[1] (a strided box)."""
    r, c = dims
    ix = tuple(slice(o[d], o[d] + rows) if d == r else slice(o[d], o[d] + cols) if d == c else o[d]
               for d in range(t.dim()))
    v = t[ix]
    return v if r < c else v.transpose(0, 1)


def _window(t, offsets, rows, cols, dims=()):
    """A copy of the [rows, cols] window of t's last two dims at offsets (1-D t: one row);
    dims=[r, c]: the box whose rows step dim r and columns dim c."""
    o = [int(x) for x in offsets]
    if dims:
        return _widen(_box(t, o, dims, rows, cols).clone())
    if t.dim() == 1:
        return _widen(t[o[0] : o[0] + cols].reshape(1, -1).clone())
    if t.dim() >= 3 and o[-2] + rows > t.shape[-2]:  # an N-D tile: rows of the merged leading axes
        f0 = 0
        for a, n in zip(o[:-1], t.shape[:-1]):
            f0 = f0 * n + a
        return _widen(t.reshape(-1, t.shape[-1])[f0 : f0 + rows, o[-1] : o[-1] + cols].clone())
    return _widen(t[tuple(o[:-2]) + (slice(o[-2], o[-2] + rows), slice(o[-1], o[-1] + cols))].clone())


def _store(dst, offsets, src, atomic="none", dims=()):
    """Writes src into dst at offsets, in place (atomic="add" adds); returns dst. dims=[r, c]:
    into the box whose rows step dim r and columns dim c."""
    o = [int(x) for x in offsets]
    if dims:
        view = _box(dst, o, dims, src.shape[0], src.shape[1])
        view.copy_(src) if atomic != "add" else view.add_(src.to(dst.dtype))
        return dst
    if dst.dim() == 1 and src.dim() == 2:
        src = src.reshape(-1)
    n = src.dim()
    if dst.dim() >= 3 and n == 2 and o[-2] + src.shape[0] > dst.shape[-2]:  # an N-D tile's merged rows
        f0 = 0
        for a, m in zip(o[:-1], dst.shape[:-1]):
            f0 = f0 * m + a
        view = dst.view(-1, dst.shape[-1])[f0 : f0 + src.shape[0], o[-1] : o[-1] + src.shape[1]]
        view.copy_(src) if atomic != "add" else view.add_(src.to(dst.dtype))
        return dst
    view = dst[tuple(o[: len(o) - n]) + tuple(slice(a, a + s) for a, s in zip(o[len(o) - n :], src.shape))]
    if atomic == "add":
        view.copy_(_widen(view) + src.to(torch.int64) if dst.dtype in _UNSIGNED else view + src.to(dst.dtype))
    else:
        view.copy_(src)
    return dst


def _write(dst, indices, value):
    """dst[indices] = value (an index per dimension, or one flat row-major index), in place; returns dst."""
    if len(indices) == 1 and dst.dim() > 1:
        dst.view(-1)[int(indices[0])] = value
        return dst
    dst[tuple(int(i) for i in indices)] = value
    return dst


def _insert(target, src, offsets):
    """A copy of the tile target with src written at offsets."""
    out = target.clone()
    r, c = int(offsets[0]), int(offsets[1])
    out[r : r + src.shape[0], c : c + src.shape[1]] = src
    return out


def _div(a, b):
    """a / b; integer tiles divide truncating toward zero."""
    if isinstance(a, torch.Tensor) and not a.is_floating_point():
        return torch.div(a, b, rounding_mode="trunc")
    return a / b


def _mm(a, b, dtype):
    """The cube's a @ b: floating-point operands accumulate in FP32, integers in int64."""
    if dtype.is_floating_point:
        return (a.float() @ b.float()).to(dtype)
    return (a.long() @ b.long()).to(dtype)


_CMP = {"EQ": torch.eq, "NE": torch.ne, "LT": torch.lt, "LE": torch.le, "GT": torch.gt, "GE": torch.ge}


def _cmp(a, b, mode):
    """The BOOL mask a <mode> b; mode is EQ NE LT LE GT GE (or 0..5)."""
    return _CMP[list(_CMP)[mode] if isinstance(mode, int) else mode.upper()](a, b)


def _pack_mask(bits):
    """A BOOL [rows, cols] tensor as a packed mask: element (r, c) is bit c % 8 of byte (r, c // 8)."""
    rows, cols = bits.shape
    padded = torch.zeros(rows, (cols + 7) // 8 * 8, dtype=torch.int32)
    padded[:, :cols] = bits.to(torch.int32)
    return (padded.view(rows, -1, 8) << torch.arange(8, dtype=torch.int32)).sum(-1).to(torch.uint8)


def _unpack_mask(mask, rows, cols):
    """The BOOL [rows, cols] elements of a packed mask."""
    packed = mask[:rows, : (cols + 7) // 8].to(torch.int32)
    bits = (packed.unsqueeze(-1) >> torch.arange(8, dtype=torch.int32)) & 1
    return bits.reshape(rows, -1)[:, :cols].bool()


def _round_to_integer(x, mode):
    if mode in ("none", "rint"):
        return torch.round(x)  # ties to even
    if mode == "round":
        return torch.where(x >= 0, torch.floor(x + 0.5), torch.ceil(x - 0.5))  # ties away from zero
    if mode == "floor":
        return torch.floor(x)
    if mode == "ceil":
        return torch.ceil(x)
    if mode == "trunc":
        return torch.trunc(x)
    lo = torch.floor(x)  # "odd": the odd neighbour of a non-integer
    return torch.where(lo == x, x, torch.where(torch.fmod(lo, 2) != 0, lo, lo + 1))


def _narrow(x, dtype, mode):
    """FP32 x to FP16/BF16, choosing between the two neighbours of |x| by mode."""
    ax = x.abs()
    m = ax.to(dtype)
    mb = m.view(torch.int16).to(torch.int32)
    lo_b = torch.where(m.float() < ax, mb, mb - 1)
    hi_b = lo_b + 1
    lo = lo_b.to(torch.int16).view(dtype).double()
    hi = hi_b.to(torch.int16).view(dtype).double()
    # Past the largest finite value hi is infinity: "round" measures to 2^(emax + 1) instead
    # (IEEE roundTiesToAway overflows from the largest finite value plus half an ulp).
    hi = torch.where(torch.isinf(hi), 65536.0 if dtype == torch.float16 else 2.0**128, hi)
    neg = torch.signbit(x)
    pick = {
        "trunc": lo_b,
        "floor": torch.where(neg, hi_b, lo_b),
        "ceil": torch.where(neg, lo_b, hi_b),
        "odd": torch.where(lo_b % 2 == 1, lo_b, hi_b),
        "round": torch.where(ax.double() - lo < hi - ax.double(), lo_b, hi_b),
    }[mode]
    bits = torch.where(m.float() == ax, mb, pick) | torch.where(neg, 0x8000, 0)
    out = bits.to(torch.int16).view(dtype)
    return torch.where(torch.isnan(x) | torch.isinf(x), x.to(dtype), out)


def _cast(x, dtype, mode="round"):
    """pl.cast: integers wrap, floats to integers round by mode and saturate (NaN -> 0)."""
    if x.dtype == dtype:
        return x.clone()
    if not x.is_floating_point():
        return x.to(dtype)
    if dtype == torch.bool:
        return x != 0
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        r = _round_to_integer(x.double(), mode)
        return torch.nan_to_num(r, nan=0.0).clamp(info.min, info.max).to(dtype)
    if dtype in (torch.float16, torch.bfloat16) and mode not in ("none", "rint"):
        return _narrow(x.float(), dtype, mode)
    return x.to(dtype)


_INT_BITS = {"INT8": (8, True), "INT16": (16, True), "INT32": (32, True), "INT64": (64, True), "INDEX": (64, True),
             "UINT8": (8, False), "UINT16": (16, False), "UINT32": (32, False), "UINT64": (64, False)}
_FLOAT_TYPES = {"FP32": torch.float32, "FP16": torch.float16, "BF16": torch.bfloat16}


def _scalar_cast(x, dtype):
    """Scalar pl.cast (pypto/base/scalar_cast.h): integers wrap to the target width, floats to
    integers truncate toward zero and saturate (NaN -> 0), floats round to the target's precision."""
    x = x.item() if isinstance(x, torch.Tensor) else x
    if dtype == "BOOL":
        return 1 if x != 0 else 0
    if dtype in _FLOAT_TYPES:
        return float(torch.tensor(float(x), dtype=torch.float64).to(torch.float32).to(_FLOAT_TYPES[dtype]).double())
    bits, signed = _INT_BITS[dtype]
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << min(bits, 63)) - 1)
    if isinstance(x, float):
        if x != x:
            return 0
        if math.isinf(x):
            return hi if x > 0 else lo
        return min(max(math.trunc(x), lo), hi)
    x = int(x)
    if bits == 64:
        return x
    x &= (1 << bits) - 1
    return x - (1 << bits) if signed and x >> (bits - 1) else x


def _wrap64(x):
    """An integer as the scalar unit holds it: 64-bit two's complement (pypto/base/scalar_ops.h)."""
    return ((x + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)


def _scalar_divmod(a, b, mod):
    """Scalar a // b (mod False) or a % b (mod True) as every engine computes them
    (pypto/base/scalar_ops.h): Python's rules, integers wrap to 64 bits, an integer divisor 0
    raises, a float divisor 0.0 gives IEEE results (x // 0.0 = floor(x / 0.0), x % 0.0 = NaN)."""
    a = a.item() if isinstance(a, torch.Tensor) else a
    b = b.item() if isinstance(b, torch.Tensor) else b
    if not isinstance(a, float) and not isinstance(b, float):
        if b == 0:
            raise ZeroDivisionError("integer " + ("modulo" if mod else "division") + " by zero")
        return _wrap64(int(a) % int(b) if mod else int(a) // int(b))
    a, b = float(a), float(b)
    if b == 0:
        if mod or a != a or a == 0:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a % b if mod else a // b


def _fit_each(values, shapes):
    """_fit of each tile of a tuple result: shapes holds (rows, cols, pad) per tile."""
    return tuple(_fit(v, r, c, p) for v, (r, c, p) in zip(values, shapes))


def _operand(t, like):
    """A scalar operand as a tensor of like's computing dtype (floats in FP32, integers in int64)."""
    return torch.as_tensor(t, dtype=torch.float32 if like.is_floating_point() else torch.int64)


def _computing(t):
    """A tile in the dtype its elementwise arithmetic runs in: FP32 for floats, int64 for integers."""
    return t.float() if t.is_floating_point() else t.long()


def _int_divisor(b):
    if not b.is_floating_point() and bool((b == 0).any()):
        raise ZeroDivisionError("integer remainder by zero")


def _rem(a, b):
    """Remainder with the sign of b (numpy.remainder); a zero float remainder takes b's sign."""
    dtype = a.dtype
    a = _computing(a)
    b = _computing(b) if isinstance(b, torch.Tensor) else _operand(b, a)
    _int_divisor(b)
    r = torch.fmod(a, b)
    if a.is_floating_point():
        r = torch.where(r == 0, torch.copysign(torch.zeros_like(r), b), r)
    r = torch.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)
    return r.to(dtype)


def _fmod(a, b):
    """Remainder with the sign of a (C fmod)."""
    dtype = a.dtype
    a = _computing(a)
    b = _computing(b) if isinstance(b, torch.Tensor) else _operand(b, a)
    _int_divisor(b)
    return torch.fmod(a, b).to(dtype)


def _shl(a, b):
    """a << b in 64 bits, wrapped to a's dtype; counts outside [0, 64) give 0."""
    b = b.long() if isinstance(b, torch.Tensor) else torch.tensor(int(b))
    out = torch.bitwise_left_shift(a.long(), b.clamp(0, 63))
    return torch.where((b < 0) | (b >= 64), 0, out).to(a.dtype)


def _shr(a, b):
    """a >> b: arithmetic for signed dtypes, logical for unsigned; counts outside [0, 64) give 0 or -1."""
    b = b.long() if isinstance(b, torch.Tensor) else torch.tensor(int(b))
    x = a.long()
    out = torch.bitwise_right_shift(x, b.clamp(0, 63))
    return torch.where((b < 0) | (b >= 64), torch.where(x < 0, -1, 0), out).to(a.dtype)


def _part(a, b, rows, cols, op):
    """op(a, b) where both valid regions hold, the valid operand's element where one does."""
    out = torch.zeros(rows, cols, dtype=a.dtype)
    for t in (b, a):
        out[: t.shape[0], : t.shape[1]] = t[:rows, :cols]
    r, c = min(a.shape[0], b.shape[0], rows), min(a.shape[1], b.shape[1], cols)
    out[:r, :c] = op(a[:r, :c], b[:r, :c])
    return out


def _philox(rows, cols, k0, k1, c0, c1, c2, c3, rounds, dtype):
    """Philox4x32-rounds: element i is word i % 4 of the block for counter + i // 4."""
    m = 0xFFFFFFFF
    base = int(c0) | int(c1) << 32 | int(c2) << 64 | int(c3) << 96
    words = []
    for b in range((rows * cols + 3) // 4):
        n = (base + b) % (1 << 128)
        x = [(n >> (32 * w)) & m for w in range(4)]
        a, k = int(k0) & m, int(k1) & m
        for r in range(int(rounds)):
            if r:
                a, k = (a + 0x9E3779B9) & m, (k + 0xBB67AE85) & m
            p0, p1 = 0xD2511F53 * x[0], 0xCD9E8D57 * x[2]
            x = [(p1 >> 32) ^ x[1] ^ a, p1 & m, (p0 >> 32) ^ x[3] ^ k, p0 & m]
        words += x
    z = torch.tensor(words[: rows * cols], dtype=torch.int64).reshape(rows, cols)
    if dtype.is_floating_point:
        p = {torch.float16: 11, torch.bfloat16: 8}.get(dtype, 24)
        return ((z >> (32 - p)).double() / 2.0**p).to(dtype)
    return z.to(dtype)  # integers: the 32-bit word, wrapped to the dtype's width


def _tri(rows, cols, diagonal, upper, dtype):
    """1 where c - r <= diagonal (c - r >= diagonal when upper), else 0."""
    d = torch.arange(cols).reshape(1, -1) - torch.arange(rows).reshape(-1, 1)
    return (d >= int(diagonal) if upper else d <= int(diagonal)).to(dtype)


def _read(t, indices):
    """One element: an index per dimension, or one flat row-major index (pl.read(t, k))."""
    if len(indices) == 1 and t.dim() > 1:
        return t.reshape(-1)[int(indices[0])].item()
    return t[tuple(int(i) for i in indices)].item()


def _arange(rows, cols, start, dtype, descending=False):
    """start + r * cols + c over [rows, cols] (start - r * cols - c when descending)."""
    i = torch.arange(rows * cols, dtype=torch.int64).reshape(rows, cols)
    if descending:
        i = -i
    return (i.double() + float(start) if dtype.is_floating_point else i + int(start)).to(dtype)


def _arg_reduce(t, along_rows, want_max):
    """INT32 index of the first max (min) of each row ([R, 1]) or column ([1, C])."""
    x = t.double() if t.is_floating_point() else t.long()
    if not along_rows:
        x = x.transpose(0, 1)
    best = torch.zeros(x.shape[0], dtype=torch.int64)
    value = x[:, 0].clone()
    for k in range(1, x.shape[1]):
        better = x[:, k] > value if want_max else x[:, k] < value  # NaN never wins
        best = torch.where(better, k, best)
        value = torch.where(better, x[:, k], value)
    best = best.to(torch.int32)
    return best.reshape(-1, 1) if along_rows else best.reshape(1, -1)


def _check_index(idx, limit, what):
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= limit):
        bad = idx[(idx < 0) | (idx >= limit)][0]
        raise IndexError(f"index {int(bad)} is outside {what} (size {limit})")


def _gather(src, idx, rows, cols):
    """result[r, c] = src[r, idx[r, c]] over [rows, cols]."""
    i = idx[:rows, :cols].long()
    _check_index(i, src.shape[1], "the source row")
    return torch.gather(src[:rows], 1, i)


def _paged_gather(src, indices, table, block_size, size, count, col_off, trans):
    """Rows block_table[t // block_size] * block_size + t % block_size of a paged cache."""
    t = indices.flatten()[:count].long()
    rows = table.flatten()[t // block_size].long() * block_size + t % block_size
    out = src.reshape(-1, src.shape[-1])[rows, col_off : col_off + size]
    return out.transpose(0, 1) if trans else out


def _scatter(target, idx, src):
    """A copy of target with target[r, idx[r, c]] = src[r, c]."""
    out = target.clone()
    rows, cols = src.shape[0], src.shape[1]
    i = idx[:rows, :cols].long()
    _check_index(i, out.shape[1], "the destination row")
    for c in range(cols):  # in order: a later column wins a repeated index
        out[:rows].scatter_(1, i[:, c : c + 1], src[:, c : c + 1].to(out.dtype))
    return out


def _flat_index(t, i):
    """The per-dimension indices of row-major element numbers i of t."""
    out = []
    for d in reversed(t.shape):
        out.append(i % d)
        i = torch.div(i, d, rounding_mode="floor")
    return tuple(reversed(out))


def _mgather(tensor, idx, rows, cols):
    """result[r, c] = tensor.flat[idx[r, c]] (row-major element numbers)."""
    i = idx[:rows, :cols].long()
    _check_index(i, tensor.numel(), "the tensor")
    return tensor[_flat_index(tensor, i)].clone()


def _mscatter(tile, idx, tensor):
    """tensor.flat[idx[r, c]] = tile[r, c], in place; returns tensor."""
    i = idx[: tile.shape[0], : tile.shape[1]].long().reshape(-1)
    _check_index(i, tensor.numel(), "the tensor")
    values = tile.reshape(-1).to(tensor.dtype)
    for k in range(i.numel()):  # in order: a later element wins a repeated index
        tensor[_flat_index(tensor, i[k : k + 1])] = values[k : k + 1]
    return tensor


def _sort32(t, idx=None):
    """Each block of 32 columns of each row sorted descending (stable), with the INT32 columns
    (or the values' entries of the index tile idx, in its dtype)."""
    values = torch.empty_like(t)
    indices = torch.empty(t.shape, dtype=torch.int32 if idx is None else idx.dtype)
    for c0 in range(0, t.shape[1], 32):
        v, i = torch.sort(t[:, c0 : c0 + 32], dim=1, descending=True, stable=True)
        values[:, c0 : c0 + 32] = v
        if idx is None:
            indices[:, c0 : c0 + 32] = (i + c0).to(torch.int32)
        else:
            block = idx[: t.shape[0], c0 : c0 + 32].to(torch.int64)
            indices[:, c0 : c0 + 32] = torch.gather(block, 1, i).to(idx.dtype)
    return values, indices


def _mrgsort(av, ai, bv, bi):
    """Two descending rows per row merged into one (ties take a), indices carried along."""
    rows, na, nb = av.shape[0], av.shape[1], bv.shape[1]
    ai, bv, bi = ai[:rows, :na], bv[:rows], bi[:rows, :nb]
    values = torch.empty(rows, na + nb, dtype=av.dtype)
    indices = torch.empty(rows, na + nb, dtype=ai.dtype)
    i = torch.zeros(rows, dtype=torch.int64)
    j = torch.zeros(rows, dtype=torch.int64)
    r = torch.arange(rows)
    for k in range(na + nb):
        ia, jb = i.clamp(max=max(na - 1, 0)), j.clamp(max=max(nb - 1, 0))
        va = av[r, ia] if na else torch.zeros(rows, dtype=av.dtype)
        vb = bv[r, jb].to(av.dtype) if nb else torch.zeros(rows, dtype=av.dtype)
        take_a = (i < na) & ((j >= nb) | (va >= vb))
        values[:, k] = torch.where(take_a, va, vb)
        indices[:, k] = torch.where(take_a, ai[r, ia] if na else 0, bi[r, jb] if nb else 0).to(torch.int32)
        i, j = i + take_a.long(), j + (~take_a).long()
    return values, indices


def _array(n, dtype):
    """pl.array.create: a list of n zeros (task ids: 0 names no task; the script runs launches
    in order, so task ids only need to be distinct)."""
    return [0.0 if dtype.is_floating_point else 0] * n


def _aset(array, index, value):
    array[int(index)] = value
    return array


def _bmm(a, b, dtype, a_trans=False, b_trans=False):
    """[B, M, K] @ [B, K, N] (or a shared [K, N]): one _mm per batch."""
    if a_trans:
        a = a.transpose(-1, -2)
    if b_trans:
        b = b.transpose(-1, -2)
    return torch.stack([_mm(a[i], b[i] if b.dim() == 3 else b, dtype) for i in range(a.shape[0])])


# Mixed tasks: a Group function runs its AIC part and its AIV parts at once as threads that
# share one cluster's tile FIFOs, one per (direction, AIV index). A push takes a free slot of
# the FIFO (_FIFO_DEPTH of them: it waits while all are full) and queues a copy of the tile;
# a pop waits for the oldest queued tile; a free gives the popped tile's slot back.
_FIFO_WAIT_S = 60.0
_core_of_thread = threading.local()


class _Cluster:
    def __init__(self, name):
        self.name, self.failed, self.lock, self.fifos = name, False, threading.Lock(), {}

    def fifo(self, key):
        with self.lock:
            if key not in self.fifos:
                self.fifos[key] = (queue.Queue(), threading.Semaphore(_FIFO_DEPTH))
            return self.fifos[key]


def _fifo_of(direction, aiv, what):
    cluster = getattr(_core_of_thread, "cluster", None)
    if cluster is None:
        raise RuntimeError(f"pl.{what} runs outside a mixed task: call the AIC / AIV function from a Group function")
    return cluster, _core_of_thread.role, cluster.fifo((direction, _core_of_thread.aiv if aiv is None else aiv))


def _fifo_wait(cluster, role, what, attempt):
    deadline = time.monotonic() + _FIFO_WAIT_S
    while True:
        got = attempt()
        if got is not None:
            return got
        if cluster.failed:
            raise RuntimeError(f"{role} stopped waiting to {what}: another part of mixed task '{cluster.name}' failed")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{role} of mixed task '{cluster.name}' waited {_FIFO_WAIT_S:g} s to {what}: a deadlock "
                               "(pushes and pops of the parts do not match, or a tile is never freed)")


def _subblock_idx():
    """pl.get_subblock_idx(): the AIV lane of this part of a mixed task, 0 elsewhere."""
    return getattr(_core_of_thread, "aiv", None) or 0


def _tpush(direction, aiv, tile):
    cluster, role, (tiles, slots) = _fifo_of(direction, aiv, "tpush")
    _fifo_wait(cluster, role, f"push to the {direction} FIFO (full)", lambda: True if slots.acquire(timeout=0.05) else None)
    tiles.put(tile.clone())


def _tpop(direction, aiv, rows, cols, dtype):
    cluster, role, (tiles, _) = _fifo_of(direction, aiv, "tpop")

    def attempt():
        try:
            return tiles.get(timeout=0.05)
        except queue.Empty:
            return None

    tile = _fifo_wait(cluster, role, f"pop from the {direction} FIFO (empty)", attempt)
    return tile[:rows, :cols].to(dtype)


def _tfree(direction, aiv, tile):
    _, _, (_, slots) = _fifo_of(direction, aiv, "tfree")
    slots.release()


def _run_group(name, parts):
    """Runs the parts (role, AIV index, function, arguments) of a mixed task at once; their results."""
    cluster = _Cluster(name)
    results, errors = [None] * len(parts), []

    def body(k, role, aiv, fn, args):
        _core_of_thread.cluster, _core_of_thread.role, _core_of_thread.aiv = cluster, role, aiv
        try:
            results[k] = fn(*args)
        except BaseException as e:  # reported by the caller
            errors.append((role, e))
            cluster.failed = True
        finally:
            _core_of_thread.cluster = None

    threads = [threading.Thread(target=body, args=(k,) + p, daemon=True) for k, p in enumerate(parts)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        role, e = errors[0]
        raise RuntimeError(f"{role} of mixed task '{name}' failed: {e}") from e
    left = [f"{d} of AIV {a}" for (d, a), (tiles, _) in cluster.fifos.items() if not tiles.empty()]
    if left:
        raise RuntimeError(f"mixed task '{name}' ended with tiles pushed but never popped: {', '.join(left)}")
    return results
)PY";

const char* torch_dtype(DataType d) {
  switch (d) {
    case DataType::BOOL: return "torch.bool";
    case DataType::INT8: return "torch.int8";
    case DataType::INT16: return "torch.int16";
    case DataType::INT32: return "torch.int32";
    case DataType::INT64: return "torch.int64";
    case DataType::UINT8: return "torch.uint8";
    case DataType::UINT16: return "torch.uint16";
    case DataType::UINT32: return "torch.uint32";
    case DataType::UINT64: return "torch.uint64";
    case DataType::FP16: return "torch.float16";
    case DataType::BF16: return "torch.bfloat16";
    case DataType::FP32: return "torch.float32";
    case DataType::INDEX:
    case DataType::TASK_ID: return "torch.int64";
    case DataType::FP8E4M3FN: return "torch.float8_e4m3fn";
    case DataType::FP8E5M2: return "torch.float8_e5m2";
    case DataType::FP8E8M0:
    case DataType::HF8:
    case DataType::FP4:
    case DataType::HF4:
    case DataType::INT4:
    case DataType::UINT4: return "torch.uint8";  // no op computes on these: their bytes
  }
  return "torch.float32";
}

std::string quoted(const std::string& s) { return print_attr(AttrValue(s)); }

// The torch dtype a tile of `d` is held in: UINT16 / UINT32 / UINT64 as int64 (torch has few
// ops on them; the script's _widen).
const char* torch_tile_dtype(DataType d) {
  if (d == DataType::UINT16 || d == DataType::UINT32 || d == DataType::UINT64) return "torch.int64";
  return torch_dtype(d);
}

std::string attr_value(const AttrValue& v) {
  if (auto* d = std::get_if<DataType>(&v)) return torch_tile_dtype(*d);
  if (auto* m = std::get_if<MemorySpace>(&v)) return quoted(memory_space_name(*m));
  if (auto* p = std::get_if<PadValue>(&v)) return quoted(pad_value_name(*p));
  if (auto* s = std::get_if<std::string>(&v); s && s->empty()) return "None";
  return print_attr(v);  // ints, floats, bools, strings and int lists spell the same in Python
}

bool is_block_param(const std::string& name) { return name == "__block_idx" || name == "__block_num"; }

class TorchEmitter {
 public:
  explicit TorchEmitter(const Program& program) : program_(program) {}

  std::string emit() {
    os_ << "# PyTorch equivalent of pypto program '" << program_.name << "', generated by pypto.debug.torch_codegen.\n";
    os_ << kPrelude;
    os_ << "\n\n_FIFO_DEPTH = " << isa::chip_for_platform("a2a3sim")->fifo_depth
        << "  # slots of each cross-core tile FIFO (the chip model)\n";
    const Function* entry = nullptr;
    for (const FunctionPtr& f : program_.functions) {
      os_ << "\n\n";
      function(*f);
      if (f->func_type == FunctionType::Orchestration && !entry) entry = f.get();
    }
    os_ << "\n\nENTRY = " << (entry ? entry->name : "None") << "\n";
    if (entry) main(*entry);
    return os_.str();
  }

 private:
  // -- expressions ---------------------------------------------------------------------------
  // One method per expression node, dispatched from the node list (ir/nodes.def).
  std::string expr(const ExprPtr& e) {
    if (!e) return "None";
    switch (e->kind) {
#define PYPTO_TORCH_EXPR(Kind, Class, hook) \
  case ExprKind::Kind: return emit_##hook(*static_cast<const Class*>(e.get()));
      PYPTO_EXPR_NODES(PYPTO_TORCH_EXPR)
#undef PYPTO_TORCH_EXPR
    }
    return "None";
  }
  std::string emit_var(const Var& v) { return namer_.name(&v); }
  std::string emit_const_int(const ConstInt& c) { return std::to_string(c.value); }
  std::string emit_const_float(const ConstFloat& c) { return python_float(c.value); }
  std::string emit_const_bool(const ConstBool& c) { return c.value ? "True" : "False"; }
  std::string emit_binary(const BinaryExpr& b) {
    if (b.op == BinaryOp::Min || b.op == BinaryOp::Max)
      return std::string(b.op == BinaryOp::Min ? "min(" : "max(") + expr(b.a) + ", " + expr(b.b) + ")";
    if (b.op == BinaryOp::FloorDiv || b.op == BinaryOp::Mod)  // the engines' rules (base/scalar_ops.h)
      return "_scalar_divmod(" + expr(b.a) + ", " + expr(b.b) + (b.op == BinaryOp::Mod ? ", True)" : ", False)");
    const char* sym = b.op == BinaryOp::And ? "and" : b.op == BinaryOp::Or ? "or" : binary_op_symbol(b.op);
    return operand(b.a) + " " + sym + " " + operand(b.b);
  }
  std::string emit_unary(const UnaryExpr& u) { return (u.op == UnaryOp::Neg ? "-" : "not ") + operand(u.a); }
  std::string emit_cast(const CastExpr& c) {
    return "_scalar_cast(" + expr(c.a) + ", \"" + dtype_name(c.type->as<ScalarType>()->dtype) + "\")";
  }
  std::string emit_call(const Call& c) { return call(c); }
  std::string emit_func_call(const FuncCall& f) {
    std::string out = f.callee + "(";
    for (size_t i = 0; i < f.args.size(); ++i) out += (i ? ", " : "") + expr(f.args[i]);
    return out + ")";
  }
  std::string emit_list(const ListExpr& l) {
    std::string out = "[";
    for (size_t i = 0; i < l.elems.size(); ++i) out += (i ? ", " : "") + expr(l.elems[i]);
    return out + "]";
  }
  std::string emit_tuple_get(const TupleGetItem& t) { return operand(t.tuple) + "[" + std::to_string(t.index) + "]"; }

  // An operand of an operator, indexing or slicing: parenthesised unless it is atomic.
  std::string operand(const ExprPtr& e) { return wrap(expr(e)); }

  // Python text `s`, parenthesised unless nothing in it binds looser than a call or an
  // index: no operator or space outside brackets and strings, no leading sign.
  static std::string wrap(const std::string& s) {
    int depth = 0;
    char quote = 0;
    bool atomic = !s.empty() && s[0] != '-';
    for (char ch : s) {
      if (quote) {
        if (ch == quote) quote = 0;
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
      } else if (ch == '(' || ch == '[' || ch == '{') {
        ++depth;
      } else if (ch == ')' || ch == ']' || ch == '}') {
        --depth;
      } else if (depth == 0 && std::string(" +-*/%<>=&|^~,").find(ch) != std::string::npos) {
        atomic = false;
      }
    }
    return atomic ? s : "(" + s + ")";
  }

  // Valid rows and columns of a tile or tensor of type `type` (Python expressions).
  std::pair<std::string, std::string> valid_extent(const TypePtr& type) {
    if (auto* t = type ? type->as<TupleType>() : nullptr)  // a tuple of tiles: its first
      return t->elems.empty() ? std::pair<std::string, std::string>{"None", "None"} : valid_extent(t->elems[0]);
    if (auto* t = type ? type->as<TileType>() : nullptr) {
      const auto& dims = t->valid_shape.empty() ? t->shape : t->valid_shape;
      return {expr(dims[0]), expr(dims[1])};
    }
    if (auto* t = type ? type->as<TensorType>() : nullptr) {
      if (t->shape.size() == 1) return {"1", expr(t->shape[0])};
      if (t->shape.size() >= 2) return {expr(t->shape[t->shape.size() - 2]), expr(t->shape.back())};
    }
    return {"None", "None"};
  }

  // `a` cut to `rows` x `cols` unless that is all of it.
  std::string cut(const ExprPtr& a, const std::string& rows, const std::string& cols) {
    auto* t = a->type ? a->type->as<TileType>() : nullptr;
    if (!t) return operand(a);  // tensors have no valid region
    auto shape = static_shape(t->shape);
    if (shape && rows == std::to_string((*shape)[0]) && cols == std::to_string((*shape)[1])) return operand(a);
    return operand(a) + "[:" + rows + ", :" + cols + "]";
  }

  // One op call: its torch template expanded over the call (see OpDef::torch).
  std::string call(const Call& c) {
    const OpDef& op = *c.op;
    if (op.torch.empty())
      fail(ErrorKind::kValue, c.span, "pl." + op.name + " has no PyTorch spelling for pypto.debug.torch_codegen",
           "add one to the op's registry definition (OpDef::torch in src/ops/families/)");
    auto [rows, cols] = valid_extent(c.type);
    std::string out;
    const std::string& t = op.torch;
    for (size_t i = 0; i < t.size();) {
      if (t[i] != '{') {
        out += t[i++];
        continue;
      }
      const size_t close = t.find('}', i);
      PYPTO_CHECK(close != std::string::npos, "unclosed '{' in the torch spelling of " + op.name);
      out += placeholder(c, t.substr(i + 1, close - i - 1), rows, cols);
      i = close + 1;
    }
    // Place a valid region in the allocated shape (with the result's pad value).
    if (auto* tile = c.type ? c.type->as<TileType>() : nullptr)
      if (!tile->valid_shape.empty() || tile->pad != PadValue::null) {
        auto shape = static_shape(tile->shape);
        PYPTO_CHECK(shape.has_value(), "tile with a dynamic shape");
        std::string pad = tile->pad == PadValue::null ? "" : ", " + quoted(pad_value_name(tile->pad));
        out = "_fit(" + out + ", " + std::to_string((*shape)[0]) + ", " + std::to_string((*shape)[1]) + pad + ")";
      }
    // A tuple of tiles (sort32, mrgsort): each placed in its allocated shape.
    if (auto* tuple = c.type ? c.type->as<TupleType>() : nullptr) {
      bool fit = false;
      std::string shapes;
      for (const TypePtr& e : tuple->elems) {
        auto* tile = e ? e->as<TileType>() : nullptr;
        auto shape = tile ? static_shape(tile->shape) : std::nullopt;
        if (!shape) return out;
        fit |= !tile->valid_shape.empty() || tile->pad != PadValue::null;
        std::string pad = tile->pad == PadValue::null ? "None" : quoted(pad_value_name(tile->pad));
        shapes += (shapes.empty() ? "(" : ", (") + std::to_string((*shape)[0]) + ", " + std::to_string((*shape)[1]) +
                  ", " + pad + ")";
      }
      if (fit) out = "_fit_each(" + out + ", [" + shapes + "])";
    }
    return out;
  }

  std::string placeholder(const Call& c, const std::string& token, const std::string& rows, const std::string& cols) {
    if (token == "R") return rows;
    if (token == "C") return cols;
    if (token == "dtype") {
      auto d = element_dtype(c.type);
      PYPTO_CHECK(d.has_value(), "{dtype} in the torch spelling of " + c.op->name + ", whose result has no dtype");
      return torch_tile_dtype(*d);
    }
    std::string name = token, view, fallback = "None";
    if (auto eq = name.find('='); eq != std::string::npos) {
      fallback = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (auto colon = name.find(':'); colon != std::string::npos) {
      view = name.substr(colon + 1);
      name = name.substr(0, colon);
    }
    size_t k = 0;
    for (const ParamSpec& p : c.op->params) {
      if (p.kind == ParamKind::kAttr) {
        if (p.name != name) continue;
        auto it = c.attrs.find(name);
        return it == c.attrs.end() ? fallback : attr_value(it->second);
      }
      const size_t index = k++;
      if (p.name != name) continue;
      ExprPtr a = index < c.args.size() ? c.args[index] : nullptr;
      if (!a) return fallback;
      if (view.empty()) return operand(a);
      if (view == "r") return cut(a, rows, cols);
      auto [vr, vc] = valid_extent(a->type);
      if (view == "v") return cut(a, vr, vc);
      if (view == "vr") return vr;
      if (view == "vc") return vc;
      PYPTO_CHECK(false, "unknown view ':" + view + "' in the torch spelling of " + c.op->name);
    }
    PYPTO_CHECK(false, "the torch spelling of " + c.op->name + " names '" + name + "', which is not a parameter");
    return "";
  }

  // -- statements ----------------------------------------------------------------------------
  void line(int indent, const std::string& s) { os_ << std::string(4 * indent, ' ') << s << "\n"; }

  std::string names(const std::vector<VarPtr>& vars) {
    std::string out;
    for (size_t i = 0; i < vars.size(); ++i) out += (i ? ", " : "") + expr(vars[i]);
    return out;
  }

  std::string exprs(const std::vector<ExprPtr>& xs) {
    std::string out;
    for (size_t i = 0; i < xs.size(); ++i) out += (i ? ", " : "") + expr(xs[i]);
    return out;
  }

  void block(const StmtPtr& s, int indent) {
    const size_t before = os_.tellp();
    if (s) stmt(s, indent);
    if (static_cast<size_t>(os_.tellp()) == before) line(indent, "pass");
  }

  // A kernel launch over `block_num` SPMD blocks: the callee's __block_idx / __block_num
  // parameters take each block's values (the call may pass placeholders or leave them out).
  bool spmd_launch(const ExprPtr& value, const std::string& target, int indent) {
    auto* f = value ? value->as<FuncCall>() : nullptr;
    if (!f || (f->task.block_num <= 0 && !f->task.core_num)) return false;
    FunctionPtr callee = program_.find(f->callee);
    PYPTO_CHECK(callee != nullptr, "call of unknown function " + f->callee);
    size_t hidden = 0;
    for (const VarPtr& p : callee->params) hidden += is_block_param(p->name);
    const bool omitted = f->args.size() + hidden == callee->params.size();
    const std::string n = f->task.core_num ? "int(" + expr(f->task.core_num) + ")" : std::to_string(f->task.block_num);
    std::string args;
    size_t next = 0;
    for (const VarPtr& p : callee->params) {
      std::string a;
      if (is_block_param(p->name)) {
        a = p->name == "__block_idx" ? "_block" : n;
        if (!omitted) ++next;
      } else {
        a = expr(f->args.at(next++));
      }
      args += (args.empty() ? "" : ", ") + a;
    }
    line(indent, "for _block in range(" + n + "):  # SPMD launch over " + n + " blocks");
    line(indent + 1, (target.empty() ? "" : target + " = ") + f->callee + "(" + args + ")");
    return true;
  }

  // A launch with predicate=(t[i] OP v) runs only when the comparison holds (the runtime
  // evaluates it at dispatch; the script runs launches in order, after their producers).
  int predicated(const ExprPtr& value, const std::string&, int indent) {
    auto* f = value ? value->as<FuncCall>() : nullptr;
    if (!f || !f->task.predicate) return indent;
    line(indent, "if " + expr(f->task.predicate) + ":  # predicate=: the task is retired when false");
    return indent + 1;
  }
  // ... and a retired launch's result is the tensors it would have written, unchanged.
  void retired_value(const ExprPtr& value, const std::string& target, int indent) {
    auto* f = value ? value->as<FuncCall>() : nullptr;
    if (!f || !f->task.predicate) return;
    FunctionPtr callee = program_.find(f->callee);
    std::vector<std::string> vals;  // a kernel returns the Out / InOut tensors it writes
    for (size_t i = 0; callee && i < callee->params.size() && i < f->args.size(); ++i)
      if (callee->directions[i] != ParamDirection::In) vals.push_back(expr(f->args[i]));
    line(indent, "else:");
    std::string joined;
    for (size_t i = 0; i < vals.size(); ++i) joined += (i ? ", " : "") + vals[i];
    line(indent + 1, target + " = " + (vals.size() == 1 ? joined : "(" + joined + ")"));
  }

  // One method per statement node, dispatched from the node list (ir/nodes.def).
  void stmt(const StmtPtr& s, int indent) {
    switch (s->kind) {
#define PYPTO_TORCH_STMT(Kind, Class, hook) \
  case StmtKind::Kind: emit_##hook(*static_cast<const Class*>(s.get()), indent); break;
      PYPTO_STMT_NODES(PYPTO_TORCH_STMT)
#undef PYPTO_TORCH_STMT
    }
  }
  void emit_seq(const SeqStmts& q, int indent) {
    for (const StmtPtr& x : q.stmts) stmt(x, indent);
  }
  void emit_assign(const AssignStmt& a, int indent) {
    const int at = predicated(a.value, expr(a.var), indent);
    if (!spmd_launch(a.value, expr(a.var), at)) line(at, expr(a.var) + " = " + expr(a.value));
    retired_value(a.value, expr(a.var), indent);
  }
  void emit_eval(const EvalStmt& e, int indent) {
    const int at = predicated(e.expr, "", indent);
    if (!spmd_launch(e.expr, "", at)) line(at, expr(e.expr));
  }
  void emit_yield(const YieldStmt& y, int indent) {
    const std::vector<VarPtr>* targets = yield_targets_.empty() ? nullptr : yield_targets_.back();
    if (targets && !targets->empty()) line(indent, names(*targets) + " = " + exprs(y.values));
  }
  void emit_return(const ReturnStmt& r, int indent) {
    line(indent, r.values.empty() ? "return" : "return " + exprs(r.values));
  }
  void emit_for(const ForStmt& f, int indent) {
    if (!f.iter_args.empty()) line(indent, names(f.iter_args) + " = " + exprs(f.init_values));
    std::string head = "for " + expr(f.loop_var) + " in range(" + expr(f.start) + ", " + expr(f.stop) + ", " +
                       expr(f.step) + "):";
    if (f.for_kind != ForKind::Range) head += std::string("  # pl.") + for_kind_name(f.for_kind);
    line(indent, head);
    yield_targets_.push_back(&f.iter_args);
    block(f.body, indent + 1);
    yield_targets_.pop_back();
    if (!f.return_vars.empty()) line(indent, names(f.return_vars) + " = " + names(f.iter_args));
  }
  void emit_while(const WhileStmt& w, int indent) {
    if (!w.iter_args.empty()) line(indent, names(w.iter_args) + " = " + exprs(w.init_values));
    line(indent, "while " + expr(w.cond) + ":");
    yield_targets_.push_back(&w.iter_args);
    block(w.body, indent + 1);
    yield_targets_.pop_back();
    if (!w.return_vars.empty()) line(indent, names(w.return_vars) + " = " + names(w.iter_args));
  }
  void emit_if(const IfStmt& i, int indent) {
    line(indent, "if " + expr(i.cond) + ":");
    yield_targets_.push_back(&i.return_vars);
    block(i.then_body, indent + 1);
    if (i.else_body) {
      line(indent, "else:");
      block(i.else_body, indent + 1);
    }
    yield_targets_.pop_back();
  }
  void emit_scope(const ScopeStmt& sc, int indent) {
    yield_targets_.push_back(nullptr);
    if (sc.task.block_num > 0 || sc.task.core_num) {
      std::string idx = "_block", num;
      for (const VarPtr& v : sc.block_vars) (v->name == "__block_idx" ? idx : num) = expr(v);
      const std::string n = sc.task.core_num ? "int(" + expr(sc.task.core_num) + ")" : std::to_string(sc.task.block_num);
      line(indent, "for " + idx + " in range(" + n + "):  # pl.spmd(" + n + ")");
      if (!num.empty()) line(indent + 1, num + " = " + n);
      block(sc.body, indent + 1);
    } else {
      line(indent, std::string("# pl.at(level=pl.Level.") + level_name(sc.level) + "): one task");
      stmt(sc.body, indent);
    }
    yield_targets_.pop_back();
  }

  // Trailing INDEX parameters that are dimensions of tensor parameters (pl.dynamic): each
  // with the (tensor parameter, axis) it can be read from.
  std::vector<std::pair<size_t, std::pair<size_t, size_t>>> dimension_params(const Function& f) {
    std::vector<std::pair<size_t, std::pair<size_t, size_t>>> out;
    for (size_t j = f.params.size(); j-- > 0;) {
      if (!f.params[j]->type->as<ScalarType>()) break;
      bool found = false;
      for (size_t i = 0; i < j && !found; ++i)
        if (auto* t = f.params[i]->type->as<TensorType>())
          for (size_t axis = 0; axis < t->shape.size() && !found; ++axis)
            if (t->shape[axis].get() == f.params[j].get()) {
              out.push_back({j, {i, axis}});
              found = true;
            }
      if (!found) break;
    }
    return out;
  }

  void function(const Function& f) {
    namer_ = PythonNamer();
    for (const char* builtin : {"range", "min", "max", "int", "tuple", "slice", "list", "float", "ENTRY"}) namer_.reserve(builtin);
    for (const FunctionPtr& g : program_.functions) namer_.reserve(g->name);
    // Dimension parameters default to the extent of their tensor (a call may leave them out).
    const auto dims = dimension_params(f);
    std::string head = "def " + f.name + "(";
    for (size_t i = 0; i < f.params.size(); ++i) {
      const bool dim = std::any_of(dims.begin(), dims.end(), [&](const auto& d) { return d.first == i; });
      head += (i ? ", " : "") + expr(f.params[i]) + (dim ? "=None" : "");
    }
    line(0, head + "):");
    line(1, std::string("\"\"\"") + function_type_name(f.func_type) + " function '" + f.name + "'.\"\"\"");
    if (f.func_type == FunctionType::Group) {
      group_body(f);
      return;
    }
    for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
      const std::string p = expr(f.params[it->first]);
      line(1, "if " + p + " is None:");
      line(2, p + " = " + expr(f.params[it->second.first]) + ".shape[" + std::to_string(it->second.second) + "]");
    }
    block(f.body, 1);
  }

  // A Group function (a mixed task): its AIC and AIV calls run at once as threads sharing one
  // cluster's FIFOs (_run_group); the first AIV call is AIV 0, the second AIV 1. Results are
  // bound after all parts end; parameter aliases and the return stay as they are.
  void group_body(const Function& f) {
    std::vector<const Stmt*> stmts;
    if (f.body && f.body->kind == StmtKind::Seq)
      for (const StmtPtr& x : f.body->as<SeqStmts>()->stmts) stmts.push_back(x.get());
    else if (f.body)
      stmts.push_back(f.body.get());
    std::vector<std::string> parts, bind;
    std::string ret;
    int aivs = 0;
    for (const Stmt* st : stmts) {
      const FuncCall* call = nullptr;
      std::string target;
      if (auto* e = st->as<EvalStmt>()) {
        call = e->expr->as<FuncCall>();
      } else if (auto* a = st->as<AssignStmt>()) {
        call = a->value->as<FuncCall>();
        target = expr(a->var);
        if (!call) {
          line(1, target + " = " + expr(a->value));
          continue;
        }
      } else if (auto* r = st->as<ReturnStmt>()) {
        ret = r->values.empty() ? "return" : "return " + exprs(r->values);
        continue;
      }
      FunctionPtr callee = call ? program_.find(call->callee) : nullptr;
      if (!callee || (callee->func_type != FunctionType::AIC && callee->func_type != FunctionType::AIV))
        fail(ErrorKind::kValue, st->span,
             "pypto.debug.torch_codegen: Group function '" + f.name +
                 "' may only call its AIC and AIV functions (a mixed task), but has another statement here",
             "call one AIC function and one or two AIV functions in the Group function");
      std::string role = "\"AIC\", None", args;
      if (callee->func_type == FunctionType::AIV) {
        role = "\"AIV " + std::to_string(aivs) + "\", " + std::to_string(aivs);
        ++aivs;
      }
      for (const ExprPtr& a : call->args) args += expr(a) + ", ";
      if (!target.empty()) {
        // The part returns the tensor it writes, in place: bound now when that is its one
        // output parameter, so that a later part may take it; otherwise after the parts end.
        std::vector<size_t> outs;
        for (size_t i = 0; i < callee->params.size() && i < callee->directions.size(); ++i)
          if (callee->directions[i] != ParamDirection::In && callee->params[i]->type->as<TensorType>()) outs.push_back(i);
        if (outs.size() == 1 && outs[0] < call->args.size()) line(1, target + " = " + expr(call->args[outs[0]]));
        else bind.push_back(target + " = _results[" + std::to_string(parts.size()) + "]");
      }
      parts.push_back("(" + role + ", " + call->callee + ", (" + args + "))");
    }
    line(1, "_results = _run_group(" + quoted(f.name) + ", [");
    for (const std::string& p : parts) line(2, p + ",");
    line(1, "])");
    for (const std::string& b : bind) line(1, b);
    if (!ret.empty()) line(1, ret);
  }

  // `python script.py` runs the entry on random inputs (static shapes only).
  void main(const Function& entry) {
    std::vector<std::string> args;
    for (size_t i = 0; i < entry.params.size(); ++i) {
      const TypePtr& t = entry.params[i]->type;
      if (auto* s = t->as<ScalarType>()) {
        args.push_back(dtype_is_float(s->dtype) ? "1.0" : "1");
        continue;
      }
      auto* tt = t->as<TensorType>();
      auto shape = tt ? static_shape(tt->shape) : std::nullopt;
      if (!shape) return;  // a dynamic shape: no example inputs
      std::string dims = "(";
      for (size_t d = 0; d < shape->size(); ++d) dims += std::to_string((*shape)[d]) + (shape->size() == 1 || d + 1 < shape->size() ? ", " : "");
      dims += ")";
      const std::string dt = torch_dtype(tt->dtype);
      if (entry.directions[i] == ParamDirection::Out) args.push_back("torch.zeros(" + dims + ", dtype=" + dt + ")");
      else if (dtype_is_float(tt->dtype)) args.push_back("torch.randn(" + dims + ").to(" + dt + ")");
      else if (tt->dtype == DataType::BOOL) args.push_back("torch.rand(" + dims + ") < 0.5");
      else args.push_back("torch.randint(0, 8, " + dims + ", dtype=" + dt + ")");
    }
    os_ << "\n\nif __name__ == \"__main__\":\n    torch.manual_seed(0)\n    args = [";
    for (size_t i = 0; i < args.size(); ++i) os_ << (i ? ", " : "") << args[i];
    os_ << "]\n    result = " << entry.name << "(*args)\n";
    os_ << "    for name, value in zip(" << "[";
    for (size_t i = 0; i < entry.params.size(); ++i) os_ << (i ? ", " : "") << quoted(entry.params[i]->name);
    os_ << "], args):\n";
    os_ << "        if isinstance(value, torch.Tensor):\n";
    os_ << "            print(f\"{name}: shape {list(value.shape)} {value.dtype} sum {value.double().sum().item():.6g}\")\n";
  }

  const Program& program_;
  std::ostringstream os_;
  PythonNamer namer_;
  std::vector<const std::vector<VarPtr>*> yield_targets_;
};

}  // namespace

std::string emit_torch(const ir::ProgramPtr& program) {
  PYPTO_CHECK(program != nullptr, "emit_torch of a null program");
  return TorchEmitter(*program).emit();
}

}  // namespace pypto::codegen
