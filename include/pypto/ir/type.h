// Types of IR values: scalars, global tensors, on-chip tiles and tuples.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "pypto/base/dtype.h"

namespace pypto::ir {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
struct Type;
using TypePtr = std::shared_ptr<const Type>;

enum class TypeKind : uint8_t { Scalar, Tensor, Tile, Tuple, None, Array };

struct Type {
  TypeKind kind;
  explicit Type(TypeKind k) : kind(k) {}
  virtual ~Type() = default;
  template <typename T>
  const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
};

struct ScalarType : Type {
  static constexpr TypeKind kKind = TypeKind::Scalar;
  DataType dtype;
  explicit ScalarType(DataType d) : Type(kKind), dtype(d) {}
  static TypePtr make(DataType d) { return std::make_shared<ScalarType>(d); }
};

// A global-memory array. Shape entries are scalar expressions (constants for static dims).
// `stride` is a declared layout (pl.TensorView(stride=, layout=) on a kernel parameter): the
// element step of each dim, which the tensor bound at launch must have; empty = not declared
// (any strides are taken). `dn` records that it was declared as layout=pl.TensorLayout.DN.
struct TensorType : Type {
  static constexpr TypeKind kKind = TypeKind::Tensor;
  std::vector<ExprPtr> shape;
  DataType dtype;
  std::vector<int64_t> stride;
  bool dn = false;
  TensorType(std::vector<ExprPtr> s, DataType d, std::vector<int64_t> st = {}, bool n = false)
      : Type(kKind), shape(std::move(s)), dtype(d), stride(std::move(st)), dn(n) {}
  static TypePtr make(std::vector<ExprPtr> s, DataType d) { return std::make_shared<TensorType>(std::move(s), d); }
};

// An on-chip buffer. `valid_shape` is empty when the whole tile is valid; `addr` is the byte
// offset chosen by memory planning inside the buffer of `memory` (-1 before planning).
struct TileType : Type {
  static constexpr TypeKind kKind = TypeKind::Tile;
  std::vector<ExprPtr> shape;
  DataType dtype;
  MemorySpace memory;
  std::vector<ExprPtr> valid_shape;
  PadValue pad = PadValue::null;
  int64_t addr = -1;
  TileType(std::vector<ExprPtr> s, DataType d, MemorySpace m, std::vector<ExprPtr> v = {},
           PadValue p = PadValue::null, int64_t a = -1)
      : Type(kKind), shape(std::move(s)), dtype(d), memory(m), valid_shape(std::move(v)), pad(p), addr(a) {}
  static TypePtr make(std::vector<ExprPtr> s, DataType d, MemorySpace m, std::vector<ExprPtr> v = {},
                      PadValue p = PadValue::null, int64_t a = -1) {
    return std::make_shared<TileType>(std::move(s), d, m, std::move(v), p, a);
  }
};

struct TupleType : Type {
  static constexpr TypeKind kKind = TypeKind::Tuple;
  std::vector<TypePtr> elems;
  explicit TupleType(std::vector<TypePtr> e) : Type(kKind), elems(std::move(e)) {}
  static TypePtr make(std::vector<TypePtr> e) { return std::make_shared<TupleType>(std::move(e)); }
};

// A small array of scalars in the orchestration (pl.array.create(n, dtype)): host memory
// that only the orchestration reads and writes; TASK_ID arrays hold task handles.
struct ArrayType : Type {
  static constexpr TypeKind kKind = TypeKind::Array;
  int64_t size;
  DataType dtype;
  ArrayType(int64_t n, DataType d) : Type(kKind), size(n), dtype(d) {}
  static TypePtr make(int64_t n, DataType d) { return std::make_shared<ArrayType>(n, d); }
};

// The type of a statement-like call with no value (e.g. a bare kernel call with no return).
struct NoneType : Type {
  static constexpr TypeKind kKind = TypeKind::None;
  NoneType() : Type(kKind) {}
  static TypePtr make() { return std::make_shared<NoneType>(); }
};

// The element dtype of a scalar, tensor or tile type; nullopt for tuples and none.
std::optional<DataType> element_dtype(const TypePtr& t);
// The static extents of a shape, or nullopt when any dimension is not a constant.
std::optional<std::vector<int64_t>> static_shape(const std::vector<ExprPtr>& shape);

}  // namespace pypto::ir
