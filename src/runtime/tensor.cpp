// Strided tensor views over caller-owned global memory and scalar reads from them.
#include "pypto/runtime/tensor.h"

#include <algorithm>

#include "pypto/runtime/reference.h"

namespace pypto::runtime {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

uint8_t* TensorView::element(const std::vector<int64_t>& index) const {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d) offset += index[d] * strides[d];
  return static_cast<uint8_t*>(data) + offset * dtype_bytes(dtype);
}

std::pair<const uint8_t*, const uint8_t*> TensorView::byte_range() const {
  const uint8_t* base = static_cast<const uint8_t*>(data);
  if (numel() == 0) return {base, base};
  int64_t lo = 0, hi = 0;  // element offsets of the extreme elements
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t span = (shape[d] - 1) * strides[d];
    (span < 0 ? lo : hi) += span;
  }
  const int64_t bytes = dtype_bytes(dtype);
  return {base + lo * bytes, base + (hi + 1) * bytes};
}

std::string TensorView::describe() const {
  std::string s = (name.empty() ? std::string("tensor") : "'" + name + "'") + "[";
  for (size_t d = 0; d < shape.size(); ++d) s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "] " + dtype_name(dtype);
}

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

ScalarValue read_tensor_element(const TensorView& tensor, const std::vector<int64_t>& index, const Span& span) {
  bool inside = index.size() == tensor.shape.size();
  for (size_t d = 0; inside && d < index.size(); ++d) inside = index[d] >= 0 && index[d] < tensor.shape[d];
  if (!inside) {
    std::string idx;
    for (size_t d = 0; d < index.size(); ++d) idx += (d ? ", " : "") + std::to_string(index[d]);
    fail(ErrorKind::kRuntime, span, "scalar read of " + tensor.describe() + " at index [" + idx + "] is out of bounds",
         "keep the index inside the tensor's shape");
  }
  const uint8_t* p = tensor.element(index);
  if (dtype_is_float(tensor.dtype)) return ScalarValue::of_float(read_float(p, tensor.dtype));
  return ScalarValue::of_int(read_int(p, tensor.dtype));
}

}  // namespace pypto::runtime
