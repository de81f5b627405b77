// The MPI transport of the distributed runtime (include/pypto/engines/comm.h, docs/distributed.md
// "The MPI transport"): rank r's region (header, then window) is its memory of one MPI RMA window
// (MPI_Win_allocate by mpi4py, in a lock_all epoch). get / put are MPI_Get / MPI_Put and a flush;
// a signal is a flush and MPI_Accumulate (SUM or REPLACE); a wait polls MPI_Fetch_and_op (NO_OP).
// Element-wise atomic adds are MPI_Accumulate(SUM) where MPI has the type; FP16 / BF16 (no MPI
// type) take a fetch / compare-and-swap loop on the 16-bit word.
//
// The core is built without MPI headers: libmpi's functions are looked up at run time (dlsym,
// Open MPI's ABI: handles are pointers) in the libmpi that mpi4py loaded, and the handles of the
// window, datatypes and ops come from mpi4py (MPI._handleof), so a machine without MPI builds and
// runs everything else.
#include <dlfcn.h>

#include <cstring>
#include <mutex>
#include <stdexcept>

#include "pypto/engines/comm.h"

namespace pypto::engines::comm {

namespace {

using H = void*;  // MPI_Datatype, MPI_Op, MPI_Win (pointers in Open MPI)
using Aint = intptr_t;

struct Mpi {
  int (*put)(const void*, int, H, int, Aint, int, H, H);
  int (*get)(void*, int, H, int, Aint, int, H, H);
  int (*accumulate)(const void*, int, H, int, Aint, int, H, H, H);
  int (*fetch_and_op)(const void*, void*, H, int, Aint, H, H);
  int (*compare_and_swap)(const void*, const void*, void*, H, int, Aint, H);
  int (*flush)(int, H);
  int (*flush_all)(H);
  int (*sync)(H);
};

void* symbol(const char* name) {
  void* f = dlsym(RTLD_DEFAULT, name);
  for (const char* lib : {"libmpi.so.40", "libmpi.so"}) {
    if (f) break;
    if (void* h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL)) f = dlsym(h, name);
  }
  if (!f)
    throw std::runtime_error(std::string("the MPI transport needs libmpi's ") + name +
                             ", which is not loaded; fix: install Open MPI and mpi4py (apt-get install openmpi-bin "
                             "libopenmpi-dev; pip install mpi4py) and start the program with mpirun");
  return f;
}

template <typename F>
void bind(F*& f, const char* name) { f = reinterpret_cast<F*>(symbol(name)); }

// Handles from Python, in this order (python/pypto/jit/distributed_mpi.py, _HANDLES).
enum Handle { kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64, kByte, kSum, kReplace, kNoOp, kCount };

class MpiTransport : public Transport {
 public:
  MpiTransport(uintptr_t win, int rank, const std::vector<uintptr_t>& handles) : win_(reinterpret_cast<H>(win)), rank_(rank) {
    if (handles.size() != kCount) throw std::runtime_error("attach_mpi: expected " + std::to_string(kCount) + " MPI handles");
    for (size_t i = 0; i < handles.size(); ++i) h_[i] = reinterpret_cast<H>(handles[i]);
    bind(mpi_.put, "MPI_Put");
    bind(mpi_.get, "MPI_Get");
    bind(mpi_.accumulate, "MPI_Accumulate");
    bind(mpi_.fetch_and_op, "MPI_Fetch_and_op");
    bind(mpi_.compare_and_swap, "MPI_Compare_and_swap");
    bind(mpi_.flush, "MPI_Win_flush");
    bind(mpi_.flush_all, "MPI_Win_flush_all");
    bind(mpi_.sync, "MPI_Win_sync");
  }
  const char* name() const override { return "mpi"; }
  uint8_t* direct(int) override { return nullptr; }

  void get(int peer, int64_t disp, void* dst, int64_t bytes) override {
    std::lock_guard<std::mutex> lk(mu_);
    for (int64_t done = 0; done < bytes;) {
      int n = static_cast<int>(std::min<int64_t>(bytes - done, 1 << 30));
      ok(mpi_.get(static_cast<uint8_t*>(dst) + done, n, h_[kByte], peer, disp + done, n, h_[kByte], win_), "MPI_Get");
      done += n;
    }
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
  }

  void put(int peer, int64_t disp, const void* src, int64_t bytes) override {
    std::lock_guard<std::mutex> lk(mu_);
    for (int64_t done = 0; done < bytes;) {
      int n = static_cast<int>(std::min<int64_t>(bytes - done, 1 << 30));
      ok(mpi_.put(static_cast<const uint8_t*>(src) + done, n, h_[kByte], peer, disp + done, n, h_[kByte], win_), "MPI_Put");
      done += n;
    }
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
  }

  bool add(int peer, int64_t disp, const void* src, int64_t count, AddType type) override {
    static const Handle of[] = {kCount, kI8, kI16, kI32, kI64, kU8, kU16, kU32, kU64, kF32, kF64};
    static const int size[] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
    const Handle t = of[static_cast<int>(type)];
    if (t == kCount) return false;
    std::lock_guard<std::mutex> lk(mu_);
    const int es = size[static_cast<int>(type)];
    for (int64_t done = 0; done < count;) {
      int n = static_cast<int>(std::min<int64_t>(count - done, 1 << 26));
      ok(mpi_.accumulate(static_cast<const uint8_t*>(src) + done * es, n, h_[t], peer, disp + done * es, n, h_[t], h_[kSum],
                         win_), "MPI_Accumulate");
      done += n;
    }
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
    return true;
  }

  void update(int peer, int64_t disp, int size, const std::function<void(uint8_t*)>& fn) override {
    const Handle t = size == 1 ? kU8 : size == 2 ? kU16 : size == 4 ? kU32 : kU64;
    uint64_t old = 0, next = 0, seen = 0;
    std::lock_guard<std::mutex> lk(mu_);
    ok(mpi_.fetch_and_op(nullptr, &old, h_[t], peer, disp, h_[kNoOp], win_), "MPI_Fetch_and_op");
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
    for (;;) {
      next = old;
      fn(reinterpret_cast<uint8_t*>(&next));
      ok(mpi_.compare_and_swap(&next, &old, &seen, h_[t], peer, disp, win_), "MPI_Compare_and_swap");
      ok(mpi_.flush(peer, win_), "MPI_Win_flush");
      if (std::memcmp(&seen, &old, size) == 0) return;
      old = seen;
    }
  }

  int32_t load32(int peer, int64_t disp) override {
    int32_t v = 0;
    fetch(peer, disp, &v, kI32);
    return v;
  }
  int64_t load64(int peer, int64_t disp) override {
    int64_t v = 0;
    fetch(peer, disp, &v, kI64);
    return v;
  }
  void add32(int peer, int64_t disp, int32_t v) override { release_op(peer, disp, &v, kI32, kSum); }
  void add64(int peer, int64_t disp, int64_t v) override { release_op(peer, disp, &v, kI64, kSum); }
  void store32(int peer, int64_t disp, int32_t v) override { release_op(peer, disp, &v, kI32, kReplace); }
  int32_t cas32(int peer, int64_t disp, int32_t expected, int32_t desired) override {
    int32_t seen = 0;
    std::lock_guard<std::mutex> lk(mu_);
    ok(mpi_.compare_and_swap(&desired, &expected, &seen, h_[kI32], peer, disp, win_), "MPI_Compare_and_swap");
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
    return seen;
  }
  void sync() override {
    std::lock_guard<std::mutex> lk(mu_);
    ok(mpi_.sync(win_), "MPI_Win_sync");
  }

 private:
  void ok(int rc, const char* what) {
    if (rc != 0) throw std::runtime_error(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
  }
  void fetch(int peer, int64_t disp, void* out, Handle t) {
    std::lock_guard<std::mutex> lk(mu_);
    ok(mpi_.fetch_and_op(nullptr, out, h_[t], peer, disp, h_[kNoOp], win_), "MPI_Fetch_and_op");
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
    ok(mpi_.sync(win_), "MPI_Win_sync");  // acquire: later local loads see what was written before
  }
  // Release: this rank's local stores (sync) and all its RMA (flush_all) complete first.
  void release_op(int peer, int64_t disp, const void* v, Handle t, Handle op) {
    std::lock_guard<std::mutex> lk(mu_);
    ok(mpi_.sync(win_), "MPI_Win_sync");
    ok(mpi_.flush_all(win_), "MPI_Win_flush_all");
    ok(mpi_.accumulate(v, 1, h_[t], peer, disp, 1, h_[t], h_[op], win_), "MPI_Accumulate");
    ok(mpi_.flush(peer, win_), "MPI_Win_flush");
  }

  H win_;
  int rank_;
  H h_[kCount];
  Mpi mpi_{};
  std::mutex mu_;  // one MPI call at a time from this process's worker threads
};

}  // namespace

std::unique_ptr<Transport> make_mpi_transport(uintptr_t win, int rank, const std::vector<uintptr_t>& handles) {
  return std::make_unique<MpiTransport>(win, rank, handles);
}

}  // namespace pypto::engines::comm
