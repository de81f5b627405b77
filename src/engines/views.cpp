// Orchestration views at run time: the TensorView of a kTensorView instruction (a window,
// transpose, reshape or reinterpretation of a tensor slot, no copy), checked against its
// parent, and the host copy of an orchestration-level `y[a:b, :] = t`.
#include <algorithm>
#include <cstring>

#include "pypto/engines/tensor.h"

namespace pypto::engines {

namespace {

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t d = 0; d < v.size(); ++d) s += (d ? ", " : "") + std::to_string(v[d]);
  return s + "]";
}

// The origin of `t` itself: the identity map onto its own index space.
std::shared_ptr<const ViewOrigin> own_origin(const TensorView& t) {
  if (t.origin) return t.origin;
  auto o = std::make_shared<ViewOrigin>();
  o->base = t.data;
  o->strides = t.strides;
  o->offset.assign(t.shape.size(), 0);
  for (size_t d = 0; d < t.shape.size(); ++d) o->dims.push_back(static_cast<int>(d));
  return o;
}

// A view with another index space than its parent's (reshape, reinterpret): its own root.
TensorView rooted(const TensorView& parent, const std::string& name) {
  TensorView v;
  v.data = parent.data;
  v.dtype = parent.dtype;
  v.name = name;
  return v;
}

bool contiguous(const TensorView& t) {
  const std::vector<int64_t> want = row_major_strides(t.shape);
  for (size_t d = 0; d < t.shape.size(); ++d)
    if (t.shape[d] != 1 && t.strides[d] != want[d]) return false;
  return true;
}

// The product of positive extents; -1 when it overflows (it then matches no element count).
int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v)
    if (__builtin_mul_overflow(n, x, &n)) return -1;
  return n;
}

void positive_extents(const std::vector<int64_t>& extents, const char* what, const std::string& name, const Span& span) {
  for (size_t d = 0; d < extents.size(); ++d)
    if (extents[d] < 1)
      fail(ErrorKind::kValue, span,
           std::string(what) + " '" + name + "' has extent " + std::to_string(extents[d]) + " in dimension " +
               std::to_string(d) + " (extents " + list_text(extents) + ")",
           "compute a positive extent for every dimension of the view");
}

}  // namespace

TensorView slice_view(const TensorView& parent, const std::vector<int64_t>& offsets, const std::vector<int64_t>& extents,
                      const std::vector<int64_t>& drop_dims, const std::string& name, const Span& span, bool clamp,
                      const std::vector<int64_t>& valid) {
  const size_t rank = parent.shape.size();
  if (offsets.size() != rank || extents.size() != rank)
    fail(ErrorKind::kRuntime, span,
         "the window of view '" + name + "' has " + std::to_string(offsets.size()) + " offsets and " +
             std::to_string(extents.size()) + " extents for " + parent.describe(),
         "this is a code generation bug; please report it");
  positive_extents(extents, "the window of view", name, span);
  for (size_t d = 0; d < rank; ++d) {
    // A valid_shape= narrower than the window: only the valid part must lie inside the parent.
    const int64_t reach = d < valid.size() ? std::clamp<int64_t>(valid[d], 0, extents[d]) : extents[d];
    if (offsets[d] < 0 || (!clamp && offsets[d] > parent.shape[d] - reach))  // (no overflow for huge offsets)
      fail(ErrorKind::kValue, span,
           "the window at offsets " + list_text(offsets) + " with extents " + list_text(extents) +
               (reach != extents[d] ? " (valid " + list_text(valid) + ")" : std::string()) + " of " +
               parent.describe() + " lies off it: dimension " + std::to_string(d) + " spans " +
               std::to_string(offsets[d]) + ":" + std::to_string(offsets[d] + reach) + " of 0:" +
               std::to_string(parent.shape[d]),
           "keep every offset in 0.." + std::to_string(parent.shape[d] - reach) + " for dimension " +
               std::to_string(d) + " (e.g. pl.min(pos, " + std::to_string(parent.shape[d] - reach) +
               ")), pass clamp=True to cut the valid region at the edge, or make the parent larger");
  }
  std::vector<bool> dropped(rank, false);
  for (int64_t d : drop_dims) {
    const int64_t a = d < 0 ? d + static_cast<int64_t>(rank) : d;
    if (a < 0 || a >= static_cast<int64_t>(rank) || extents[a] != 1)
      fail(ErrorKind::kRuntime, span, "view '" + name + "' drops axis " + std::to_string(d) + " of extent " +
                                          (a >= 0 && a < static_cast<int64_t>(rank) ? std::to_string(extents[a]) : "?"),
           "this is a code generation bug; please report it");
    dropped[a] = true;
  }
  TensorView v;
  v.dtype = parent.dtype;
  v.name = name;
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d) offset += offsets[d] * parent.strides[d];
  v.data = static_cast<uint8_t*>(parent.data) + offset * dtype_bytes(parent.dtype);
  auto parent_origin = own_origin(parent);
  auto o = std::make_shared<ViewOrigin>();
  o->base = parent_origin->base;
  o->strides = parent_origin->strides;
  o->offset = parent_origin->offset;
  for (size_t d = 0; d < rank; ++d) {
    o->offset[parent_origin->dims[d]] += offsets[d];
    if (dropped[d]) continue;
    v.shape.push_back(extents[d]);
    v.strides.push_back(parent.strides[d]);
    o->dims.push_back(parent_origin->dims[d]);
  }
  v.origin = std::move(o);
  return v;
}

TensorView transpose_view(const TensorView& parent, int64_t a1, int64_t a2, const std::string& name, const Span& span) {
  const int64_t rank = static_cast<int64_t>(parent.shape.size());
  if (a1 < 0 || a1 >= rank || a2 < 0 || a2 >= rank)
    fail(ErrorKind::kRuntime, span, "transpose of axes " + std::to_string(a1) + " and " + std::to_string(a2) + " of " + parent.describe(),
         "this is a code generation bug; please report it");
  TensorView v = parent;
  v.name = name;
  std::swap(v.shape[a1], v.shape[a2]);
  std::swap(v.strides[a1], v.strides[a2]);
  auto o = std::make_shared<ViewOrigin>(*own_origin(parent));
  std::swap(o->dims[a1], o->dims[a2]);
  v.origin = std::move(o);
  return v;
}

TensorView reshape_view(const TensorView& parent, const std::vector<int64_t>& extents, const std::string& name,
                        const Span& span) {
  positive_extents(extents, "the reshaped view", name, span);
  if (product(extents) != parent.numel())
    fail(ErrorKind::kValue, span,
         "view '" + name + "' reshapes " + parent.describe() + " (" + std::to_string(parent.numel()) + " elements) to " +
             list_text(extents) + " (" + std::to_string(product(extents)) + " elements)",
         "keep the element count: the product of the new extents must be " + std::to_string(parent.numel()));
  if (!contiguous(parent))
    fail(ErrorKind::kValue, span,
         "view '" + name + "' reshapes " + parent.describe() + ", which is not contiguous (strides " +
             list_text(parent.strides) + ", a window or transpose of another tensor)",
         "reshape the whole tensor before slicing it, or copy the window into a pl.create_tensor in a kernel first");
  TensorView v = rooted(parent, name);
  v.shape = extents;
  v.strides = row_major_strides(extents);
  return v;
}

TensorView reinterpret_view(const TensorView& parent, DataType dtype, const std::vector<int64_t>& extents,
                            const std::string& name, const Span& span) {
  positive_extents(extents, "the reinterpreted view", name, span);
  const int64_t ea = dtype_bytes(parent.dtype), eb = dtype_bytes(dtype);
  const size_t rank = parent.shape.size();
  if (reinterpret_cast<uintptr_t>(parent.data) % static_cast<uintptr_t>(eb))
    fail(ErrorKind::kValue, span,
         "view '" + name + "' reads " + parent.describe() + " as " + dtype_name(dtype) + ", but its data is not aligned to " +
             std::to_string(eb) + " bytes",
         "start the reinterpreted window at an offset that is a multiple of " + std::to_string(eb) + " bytes");
  if (const int64_t bytes = parent.numel() * ea; bytes % eb || product(extents) != bytes / eb)
    fail(ErrorKind::kValue, span,
         "view '" + name + "' reads " + parent.describe() + " (" + std::to_string(parent.numel() * ea) + " bytes) as " +
             list_text(extents) + " " + dtype_name(dtype) + " (" + std::to_string(product(extents)) + " elements of " +
             std::to_string(eb) + " bytes)",
         "keep the byte count");
  TensorView v = rooted(parent, name);
  v.dtype = dtype;
  v.shape = extents;
  // The last axis scales and the others keep their extents: a strided parent works when its
  // last axis is contiguous and its other strides are whole numbers of the new element.
  bool scaled = rank == extents.size() && rank > 0 && parent.strides[rank - 1] == 1 &&
                extents[rank - 1] * eb == parent.shape[rank - 1] * ea;
  for (size_t d = 0; scaled && d + 1 < rank; ++d)
    scaled = extents[d] == parent.shape[d] && (parent.strides[d] * ea) % eb == 0;
  if (scaled) {
    v.strides = parent.strides;
    for (size_t d = 0; d + 1 < rank; ++d) v.strides[d] = parent.strides[d] * ea / eb;
    return v;
  }
  if (!contiguous(parent))
    fail(ErrorKind::kValue, span,
         "view '" + name + "' reinterprets " + parent.describe() + ", whose last axis is not contiguous (strides " +
             list_text(parent.strides) + ")",
         "reinterpret the whole tensor, or a window that keeps the last axis whole with stride 1");
  v.strides = row_major_strides(extents);
  return v;
}

void copy_tensor(const TensorView& dst, const TensorView& src, const Span& span) {
  if (dst.shape != src.shape || dst.dtype != src.dtype)
    fail(ErrorKind::kValue, span, "writing " + src.describe() + " into the window " + dst.describe() + ": the shapes differ",
         "make the window as large as the value");
  const int64_t n = src.numel(), elem = dtype_bytes(src.dtype);
  if (n == 0) return;
  // Read everything first: the window may overlap the value (y[0:8] = y[4:12]).
  std::vector<uint8_t> tmp(static_cast<size_t>(n * elem));
  std::vector<int64_t> index(src.shape.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(tmp.data() + k * elem, src.element(index), static_cast<size_t>(elem));
    for (size_t d = index.size(); d-- > 0;)
      if (++index[d] < src.shape[d]) break;
      else index[d] = 0;
  }
  std::fill(index.begin(), index.end(), 0);
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst.element(index), tmp.data() + k * elem, static_cast<size_t>(elem));
    for (size_t d = index.size(); d-- > 0;)
      if (++index[d] < dst.shape[d]) break;
      else index[d] = 0;
  }
}

}  // namespace pypto::engines
