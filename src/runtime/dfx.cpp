// DFX outputs of a run: the args dump, the task dependency graph and per-pipe busy cycles.
#include "pypto/runtime/dfx.h"
#include "pypto/runtime/swimlane.h"

#include <algorithm>
#include <cctype>
#include <tuple>
#include <cstring>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>

namespace pypto::runtime {

using namespace engines;  // the runtime drives the engines: their types unqualified

namespace {

std::string safe_name(const std::string& s) {
  std::string out;
  for (char c : s) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-') ? c : '_';
  return out.empty() ? "t" : out;
}

void make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail(ErrorKind::kValue, {}, "cannot create the DFX output directory '" + dir + "': " + ec.message(),
               "give RunConfig(output_dir=...) a writable directory");
}

std::ofstream open_out(const std::string& path, std::ios::openmode mode = std::ios::out) {
  std::ofstream f(path, mode);
  if (!f) fail(ErrorKind::kValue, {}, "cannot write DFX output '" + path + "'", "give RunConfig(output_dir=...) a writable directory");
  return f;
}

// The view's elements in row-major order, contiguous.
std::vector<uint8_t> gather(const TensorView& t) {
  const int64_t elem = dtype_bytes(t.dtype);
  const int64_t n = t.numel();
  std::vector<uint8_t> out(static_cast<size_t>(std::max<int64_t>(n, 0) * elem));
  if (n <= 0) return out;
  const size_t nd = t.shape.size();
  std::vector<int64_t> idx(nd, 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t off = 0;
    for (size_t d = 0; d < nd; ++d) off += idx[d] * (d < t.strides.size() ? t.strides[d] : 0);
    std::memcpy(out.data() + k * elem, static_cast<const uint8_t*>(t.data) + off * elem, static_cast<size_t>(elem));
    for (size_t d = nd; d-- > 0;) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

}  // namespace

ArgsDumper::ArgsDumper(std::string dfx_dir) : dir_(std::move(dfx_dir) + "/args_dump") { make_dirs(dir_); }

DumpHook ArgsDumper::hook() {
  return [this](size_t id, const isa::Kernel& kernel, const std::vector<HostArg>& args, const std::vector<int>& which,
                bool after) { dump(id, kernel, args, which, after); };
}

void ArgsDumper::dump(size_t id, const isa::Kernel& kernel, const std::vector<HostArg>& args, const std::vector<int>& which,
                      bool after) {
  for (int i : which) {
    if (i < 0 || static_cast<size_t>(i) >= args.size() || args[i].kind != HostArg::kTensor) continue;
    const TensorView& t = args[i].tensor;
    const std::string param = static_cast<size_t>(i) < kernel.params.size() ? kernel.params[i].name : "arg" + std::to_string(i);
    const std::string file = "task" + std::to_string(id) + "_" + std::to_string(i) + "_" + safe_name(param) +
                             (after ? "_after" : "_before") + ".bin";
    const std::vector<uint8_t> bytes = gather(t);
    {
      std::ofstream f = open_out(dir_ + "/" + file, std::ios::out | std::ios::binary);
      f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    }
    std::ostringstream o;
    o << "{\"task\":" << id << ",\"kernel\":" << json_string(kernel.name) << ",\"arg\":" << i
      << ",\"param\":" << json_string(param) << ",\"tensor\":" << json_string(t.name)
      << ",\"phase\":" << (after ? "\"after\"" : "\"before\"") << ",\"dtype\":" << json_string(dtype_name(t.dtype))
      << ",\"shape\":[";
    for (size_t d = 0; d < t.shape.size(); ++d) o << (d ? "," : "") << t.shape[d];
    o << "],\"bytes\":" << bytes.size() << ",\"file\":" << json_string(file) << "}";
    std::lock_guard<std::mutex> lk(mu_);
    entries_.push_back({id, i, after, o.str()});
  }
}

void ArgsDumper::finish() {
  std::lock_guard<std::mutex> lk(mu_);
  std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.task, a.after, a.arg) < std::tie(b.task, b.after, b.arg);
  });
  std::ofstream f = open_out(dir_ + "/args_dump.json");
  f << "{\"entries\":[";
  for (size_t i = 0; i < entries_.size(); ++i) f << (i ? ",\n" : "\n") << entries_[i].json;
  f << "\n]}\n";
}

void write_deps_json(const std::string& path, const std::vector<TaskRecord>& records) {
  make_dirs(std::filesystem::path(path).parent_path().string());
  std::ofstream f = open_out(path);
  f << "{\"tasks\":[";
  for (size_t i = 0; i < records.size(); ++i) {
    const TaskRecord& r = records[i];
    f << (i ? ",\n" : "\n") << "{\"id\":" << i << ",\"kernel\":" << json_string(r.kernel) << ",\"block_idx\":" << r.block_idx
      << ",\"block_num\":" << r.block_num << ",\"deps\":[";
    std::vector<size_t> deps = r.deps;
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (size_t d = 0; d < deps.size(); ++d) f << (d ? "," : "") << deps[d];
    f << "]}";
  }
  f << "\n],\"edges\":[";
  bool first = true;
  for (size_t i = 0; i < records.size(); ++i) {
    std::vector<size_t> deps = records[i].deps;
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (size_t d : deps) {
      f << (first ? "" : ",") << "[" << d << "," << i << "]";
      first = false;
    }
  }
  f << "]}\n";
}

void write_scope_stats(const std::string& path, const std::vector<TaskRecord>& records) {
  make_dirs(std::filesystem::path(path).parent_path().string());
  std::vector<std::string> order;
  struct Acc {
    size_t tasks = 0;
    double us = 0, cycles = 0;
    bool modelled = true;
  };
  std::map<std::string, Acc> by;
  for (const TaskRecord& r : records) {
    if (!by.count(r.kernel)) order.push_back(r.kernel);
    Acc& a = by[r.kernel];
    ++a.tasks;
    a.us += r.end_us - r.start_us;
    if (r.cycles < 0) a.modelled = false;
    else a.cycles += r.cycles;
  }
  std::ofstream f = open_out(path);
  for (const std::string& k : order) {
    const Acc& a = by[k];
    f << "{\"scope\":" << json_string(k) << ",\"tasks\":" << a.tasks << ",\"host_us\":" << a.us
      << ",\"modelled_cycles\":" << (a.modelled ? a.cycles : -1) << "}\n";
  }
}

void write_pmu_csv(const std::string& path, const std::vector<TaskRecord>& records) {
  make_dirs(std::filesystem::path(path).parent_path().string());
  std::ofstream f = open_out(path);
  f << "task,kernel,core,cycles";
  for (int p = 0; p < 7; ++p) f << "," << isa::pipe_name(static_cast<isa::Pipe>(p));
  f << "\n";
  for (size_t i = 0; i < records.size(); ++i) {
    const TaskRecord& r = records[i];
    const bool modelled = r.cycles >= 0;
    f << i << "," << r.kernel << "," << core_kind_name(r.kind) << ",";
    if (modelled) f << r.cycles;
    for (int p = 0; p < 7; ++p) {
      f << ",";
      if (modelled) f << r.busy[p];
    }
    f << "\n";
  }
}

}  // namespace pypto::runtime
