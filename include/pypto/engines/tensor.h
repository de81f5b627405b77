// Global memory as the runtime sees it: strided views of caller-owned tensors, scalar
// values, and the arguments a kernel or an orchestration is called with.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pypto/base/dtype.h"
#include "pypto/base/error.h"
#include "pypto/base/scalar.h"
#include "pypto/isa/global_tensor.h"

namespace pypto::engines {

// Scalars and their float -> int rule live in base (pypto/base/scalar.h).
using pypto::float_to_int;
using pypto::ScalarValue;

// Global tensor views are the ISA's (pypto/isa/global_tensor.h).
using isa::TensorView;
using isa::ViewOrigin;

// Why two elements of a view with this shape and these strides (in elements) would share
// memory, e.g. "dimension 0 has stride 0" or "elements [0, 1] and [1, 0] are at the same
// address"; empty when every element has its own memory. Outputs must not overlap
// themselves: tasks write them in place, element by element.
std::string self_overlap(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);

// Contiguous row-major strides of `shape`.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& shape);

// Orchestration views of `parent` (run-time kTensorView; src/engines/views.cpp). Each checks
// its window or shape against the parent and fails at `span` (the user's line) otherwise.
// A window at `offsets` of `extents` (one per parent dimension); `drop_dims` unit axes removed.
// clamp (pl.slice(..., clamp=True)): the window may run past the parent's end (offsets >= 0);
// `valid` (pl.slice(..., valid_shape=), per dimension): only that part must lie inside the
// parent. The kernels that get the view touch only its valid part (PassValidRegions).
TensorView slice_view(const TensorView& parent, const std::vector<int64_t>& offsets, const std::vector<int64_t>& extents,
                      const std::vector<int64_t>& drop_dims, const std::string& name, const Span& span,
                      bool clamp = false, const std::vector<int64_t>& valid = {});
// Axes a1 and a2 swapped (shape and strides).
TensorView transpose_view(const TensorView& parent, int64_t a1, int64_t a2, const std::string& name, const Span& span);
// Another shape of the same element count; the parent must be contiguous (row-major).
TensorView reshape_view(const TensorView& parent, const std::vector<int64_t>& extents, const std::string& name,
                        const Span& span);
// The parent's bytes as `dtype` with `extents`: the last axis scaled (its stride must be 1),
// or any shape of the same byte count of a contiguous parent.
TensorView reinterpret_view(const TensorView& parent, DataType dtype, const std::vector<int64_t>& extents,
                            const std::string& name, const Span& span);
// dst = src element by element (same shape and dtype; orchestration `y[a:b, :] = t`).
void copy_tensor(const TensorView& dst, const TensorView& src, const Span& span);

// One argument of a kernel or orchestration call: a tensor or a scalar.
struct HostArg {
  enum Kind : uint8_t { kTensor, kInt, kFloat } kind = kInt;
  TensorView tensor;
  int64_t i = 0;
  double f = 0.0;
  static HostArg of_tensor(TensorView t) { HostArg a; a.kind = kTensor; a.tensor = std::move(t); return a; }
  static HostArg of_int(int64_t v) { HostArg a; a.set_int(v); return a; }
  static HostArg of_float(double v) { HostArg a; a.set_float(v); return a; }
  ScalarValue scalar() const { return kind == kFloat ? ScalarValue::of_float(f) : ScalarValue::of_int(i); }
  // The same, overwriting this argument in place: the view's lists keep their buffers (a host
  // loop refilling one argument list allocates nothing per call).
  void set_tensor(const TensorView& t) { kind = kTensor; tensor = t; i = 0; f = 0.0; }
  void set_int(int64_t v) { kind = kInt; clear_tensor(); i = v; f = static_cast<double>(v); }
  void set_float(double v) { kind = kFloat; clear_tensor(); f = v; i = float_to_int(v); }

 private:
  void clear_tensor() {
    tensor.data = nullptr;
    tensor.dtype = DataType::FP32;
    tensor.shape.clear();
    tensor.strides.clear();
    tensor.name.clear();
    tensor.origin.reset();
  }
};

// The element of `tensor` at `index` as a scalar (integers widen to int64, floats to double);
// an index outside the shape is a runtime error at `span`.
ScalarValue read_tensor_element(const TensorView& tensor, const std::vector<int64_t>& index, const Span& span);
// tensor[index] = value, converted to the tensor's dtype (integers wrap, floats round to nearest).
void write_tensor_element(const TensorView& tensor, const std::vector<int64_t>& index, const ScalarValue& value,
                          const Span& span);

}  // namespace pypto::engines
