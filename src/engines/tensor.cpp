// Strided tensor views over caller-owned global memory and scalar reads from them.
#include "pypto/engines/tensor.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

#include "pypto/engines/reference.h"

namespace pypto::engines {

namespace {
std::string index_text(std::vector<int64_t> index) {
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}
}  // namespace

std::string self_overlap(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  struct Dim {
    int64_t size, stride;
  };
  std::vector<Dim> dims;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return "";  // no elements
    if (shape[d] == 1) continue;   // its stride is never used
    const int64_t stride = d < strides.size() ? strides[d] : 0;
    if (stride == 0)
      return "dimension " + std::to_string(d) + " has stride 0, so its " + std::to_string(shape[d]) +
             " elements are one memory location (a broadcast or expanded view)";
    dims.push_back({shape[d], stride == INT64_MIN ? INT64_MAX : std::llabs(stride)});
  }
  // Every dimension steps past all the elements the smaller-stride dimensions reach: no
  // overlap (contiguous, transposed and sliced views all pass this test).
  std::sort(dims.begin(), dims.end(), [](const Dim& a, const Dim& b) { return a.stride < b.stride; });
  bool proven = true;
  int64_t reach = 0;  // largest offset reached by the dimensions so far
  for (const Dim& dim : dims) {
    int64_t span = 0;
    if (dim.stride <= reach || __builtin_mul_overflow(dim.size - 1, dim.stride, &span) ||
        __builtin_add_overflow(reach, span, &reach)) {
      proven = false;
      break;
    }
  }
  if (proven) return "";
  // Interleaved strides: compare the offsets of all elements.
  int64_t numel = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > (int64_t{1} << 24))
      return "its strides interleave dimensions in a way pypto does not check for views of more than 2^24 elements";
  std::vector<std::pair<int64_t, int64_t>> offsets;  // (offset, linear index)
  offsets.reserve(static_cast<size_t>(numel));
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t linear = 0; linear < numel; ++linear) {
    int64_t offset = 0;
    for (size_t d = 0; d < shape.size(); ++d) offset += index[d] * strides[d];
    offsets.emplace_back(offset, linear);
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0 && ++index[d] == shape[d]; --d) index[d] = 0;
  }
  std::sort(offsets.begin(), offsets.end());
  auto unravel = [&](int64_t linear) {
    std::vector<int64_t> idx(shape.size());
    for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
      idx[d] = linear % shape[d];
      linear /= shape[d];
    }
    return idx;
  };
  for (size_t i = 1; i < offsets.size(); ++i)
    if (offsets[i].first == offsets[i - 1].first)
      return "elements " + index_text(unravel(offsets[i - 1].second)) + " and " + index_text(unravel(offsets[i].second)) +
             " are at the same address";
  return "";
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

// The element of `tensor` at `index`, or a run-time error naming the access and the shape.
static uint8_t* checked_element(const TensorView& tensor, const std::vector<int64_t>& index, const Span& span,
                                const char* what) {
  bool inside = index.size() == tensor.shape.size();
  for (size_t d = 0; inside && d < index.size(); ++d) inside = index[d] >= 0 && index[d] < tensor.shape[d];
  if (!inside) {
    std::string idx;
    for (size_t d = 0; d < index.size(); ++d) idx += (d ? ", " : "") + std::to_string(index[d]);
    fail(ErrorKind::kRuntime, span, std::string(what) + " of " + tensor.describe() + " at index [" + idx + "] is out of bounds",
         "keep the index inside the tensor's shape");
  }
  return tensor.element(index);
}

ScalarValue read_tensor_element(const TensorView& tensor, const std::vector<int64_t>& index, const Span& span) {
  const uint8_t* p = checked_element(tensor, index, span, "scalar read");
  if (dtype_is_float(tensor.dtype)) return ScalarValue::of_float(read_float(p, tensor.dtype));
  return ScalarValue::of_int(read_int(p, tensor.dtype));
}

void write_tensor_element(const TensorView& tensor, const std::vector<int64_t>& index, const ScalarValue& value,
                          const Span& span) {
  uint8_t* p = checked_element(tensor, index, span, "scalar write");
  if (dtype_is_float(tensor.dtype)) write_double(p, tensor.dtype, value.as_double());
  else write_int(p, tensor.dtype, value.as_int());
}

static uint8_t* checked_tile_element(const TileRef& t, const std::vector<int64_t>& index, const Span& span,
                                     const char* what) {
  if (index.size() != 2 || index[0] < 0 || index[0] >= t.rows || index[1] < 0 || index[1] >= t.cols) {
    std::string idx;
    for (size_t d = 0; d < index.size(); ++d) idx += (d ? ", " : "") + std::to_string(index[d]);
    fail(ErrorKind::kRuntime, span,
         std::string(what) + " of tile '" + t.name + "' (" + std::to_string(t.rows) + "x" + std::to_string(t.cols) +
             ") at index [" + idx + "] is out of bounds",
         "keep the index inside the tile's shape");
  }
  return t.at(index[0], index[1]);
}

ScalarValue read_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const Span& span) {
  const uint8_t* p = checked_tile_element(tile, index, span, "scalar read");
  if (dtype_is_float(tile.dtype)) return ScalarValue::of_float(read_float(p, tile.dtype));
  return ScalarValue::of_int(read_int(p, tile.dtype));
}

void write_tile_element(const TileRef& tile, const std::vector<int64_t>& index, const ScalarValue& value, const Span& span) {
  uint8_t* p = checked_tile_element(tile, index, span, "scalar write");
  if (dtype_is_float(tile.dtype)) write_double(p, tile.dtype, value.as_double());
  else write_int(p, tile.dtype, value.as_int());
}

}  // namespace pypto::engines
