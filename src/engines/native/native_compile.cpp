// Compiling generated kernels: the host C++ compiler with -O2 -march=native, a disk cache
// keyed by a hash of the code, the library headers, the compiler and the flags
// (~/.cache/pypto, PYPTO_CACHE_DIR; PYPTO_CACHE=0 disables it), atomic publication
// (temp file + rename) so concurrent processes can compile the same kernel, and dlopen.
// Each library records that hash (pto_kernel_key), checked when it is loaded: a cached file
// that does not load or records another hash is rebuilt once, then reported.
// One translation unit per kernel, compiled in parallel with progress on a terminal.
#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <exception>
#include <mutex>
#include <sstream>
#include <thread>

#include "compile_progress.h"
#include "pypto/base/env.h"
#include "pypto/engines/native_engine.h"

#ifndef PYPTO_SOURCE_INCLUDE_DIR
#define PYPTO_SOURCE_INCLUDE_DIR ""
#endif

namespace pypto::engines {

namespace {

std::mutex g_mu;
std::string g_include_dir;

uint64_t fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

void make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i)
    if (i == dir.size() || dir[i] == '/') ::mkdir(dir.substr(0, i).c_str(), 0755);
}

// Where the kernel cache directory comes from (native_cache_dir's order), for messages.
std::string cache_dir_origin() {
  if (const char* d = std::getenv("PYPTO_CACHE_DIR"); d && *d) return "$PYPTO_CACHE_DIR";
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return "$XDG_CACHE_HOME/pypto";
  return "~/.cache/pypto";
}

// The cache directory must be a directory once make_dirs ran: a file in its place (or in
// its path) is an error naming it and where it was configured.
void check_cache_dir(const std::string& dir, bool cached) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return;
  const std::string why = ::stat(dir.c_str(), &st) == 0 ? "is not a directory" : std::string("cannot be created (") + std::strerror(errno) + ")";
  fail(ErrorKind::kRuntime, {}, "the kernel cache directory '" + dir + "' " + why + (cached ? " (from " + cache_dir_origin() + ")" : ""),
       "point PYPTO_CACHE_DIR at a writable directory, or set PYPTO_CACHE=0 to compile without a cache");
}

std::string compiler() {
  const char* cxx = std::getenv("CXX");
  return cxx && *cxx ? cxx : "c++";
}

// The compile flags: the target is -march=native unless PYPTO_NATIVE_ISA forces a lower one
// (pypto/base/env.h); the target's features pick the fast paths (docs/isa.md). -O2: the tile
// library is vectorised and unrolled by hand, and -O3 doubled the compile (a hello-world kernel
// 0.51 -> 0.24 s of g++ 12) for no measured gain (docs/performance.md).
std::string compile_flags() { return "-O2 " + native_isa_flag() + " -std=c++17 -shared -fPIC -fno-plt -w"; }
// The link: a kernel needs libm (the double exp / log of the half-precision paths), libc's
// memcpy and libgcc's helpers, so the default link (crt files, libstdc++: ~80 ms of ld for a
// hello world) is cut to those three. libm and libc are named so that their symbols bind to
// versions (an unversioned `log` binds to glibc's oldest one, whose log(-1) is +NaN, not
// -NaN). Where this link fails (no libc.so.6: not glibc) or leaves a symbol the process
// cannot resolve (the trial dlopen fails), the kernel is linked again the default way.
const char* kFastLinkHead = "-nostdlib";
const char* kFastLinkTail = "-lm -l:libc.so.6 -lgcc";

// The identity of the compiler binary (path, size, mtime), found on PATH; cheap to get.
std::string compiler_identity() {
  std::string c = compiler();
  std::string path = c;
  if (c.find('/') == std::string::npos) {
    const char* env = std::getenv("PATH");
    std::stringstream ss(env ? env : "");
    std::string d;
    while (std::getline(ss, d, ':'))
      if (exists(d + "/" + c)) {
        path = d + "/" + c;
        break;
      }
  }
  char real[4096];
  if (::realpath(path.c_str(), real)) path = real;
  struct stat st {};
  ::stat(path.c_str(), &st);
  return path + ":" + std::to_string(st.st_size) + ":" + std::to_string(st.st_mtime);
}

// Hash of everything that determines the compiled code besides the source: the compiler,
// the flags, the library headers and the registered environment variables (pypto/base/env.h).
uint64_t toolchain_hash() {
  static std::mutex mu;
  static std::map<std::string, uint64_t> by_env;  // the headers are read once per setting
  const std::string env = cache_key_env();
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = by_env.find(env); it != by_env.end()) return it->second;
  std::string all = compiler_identity() + "\n" + compile_flags() + " " + kFastLinkHead + " " + kFastLinkTail + "\n" + env + "\n";
  for (const char* h : {"abi.h", "vec.h", "half.h", "tile_ops.h", "matmul.h", "data_movement.h", "../../base/fp16.h",
                        "../../base/scalar_cast.h", "../../base/scalar_ops.h"})
    all += read_file(native_include_dir() + "/pypto/isa/optimized/" + h);
  return by_env[env] = fnv1a(all);
}

std::string hex(uint64_t v) {
  char b[17];
  std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
  return b;
}

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `cmd`, returning its exit status and combined output.
int run_command(const std::string& cmd, std::string& output) {
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output.append(buf, n);
  return ::pclose(p);
}

std::string unique_suffix() {
  static std::atomic<int> counter{0};
  return "." + std::to_string(::getpid()) + "." + std::to_string(counter++) + ".tmp";
}

}  // namespace

void set_native_include_dir(const std::string& dir) {
  std::lock_guard<std::mutex> lk(g_mu);
  g_include_dir = dir;
}

std::string native_include_dir() {
  if (const char* e = std::getenv("PYPTO_INCLUDE_DIR"); e && *e) return e;
  {
    std::lock_guard<std::mutex> lk(g_mu);
    if (!g_include_dir.empty()) return g_include_dir;
  }
  return PYPTO_SOURCE_INCLUDE_DIR;
}

std::string native_cache_dir() {
  if (const char* c = std::getenv("PYPTO_CACHE"); c && std::string(c) == "0") return "";
  if (const char* d = std::getenv("PYPTO_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/pypto";
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.cache/pypto";
}

namespace {

// Why the shared object at `path` is not a whole 64-bit ELF file ("" when it is): every
// segment and the section header table must lie inside the file (a truncated library
// would make dlopen fault with SIGBUS when it maps the missing pages).
std::string elf_incomplete(const std::string& path) {
  std::ifstream f(path, std::ios::binary | std::ios::ate);
  if (!f) return "it cannot be read";
  const uint64_t size = static_cast<uint64_t>(f.tellg());
  Elf64_Ehdr eh{};
  f.seekg(0);
  if (size < sizeof eh || !f.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return "it is not a 64-bit ELF file (" + std::to_string(size) + " bytes)";
  const uint64_t sh_end = eh.e_shoff + static_cast<uint64_t>(eh.e_shnum) * eh.e_shentsize;
  const uint64_t ph_end = eh.e_phoff + static_cast<uint64_t>(eh.e_phnum) * sizeof(Elf64_Phdr);
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || ph_end > size || sh_end > size)
    return "it is truncated (" + std::to_string(size) + " bytes, its headers need " + std::to_string(std::max(sh_end, ph_end)) + ")";
  f.seekg(static_cast<std::streamoff>(eh.e_phoff));
  for (int i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof ph)) return "it is truncated";
    if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > size)
      return "it is truncated (" + std::to_string(size) + " bytes, a segment ends at " + std::to_string(ph.p_offset + ph.p_filesz) + ")";
  }
  return "";
}

// Loads `so` into `mod` and checks that it is the library of `key`: the hash of its source,
// the headers, the compiler and the flags, which every library records (pto_kernel_key).
// Returns "" on success, else why it cannot be used (the library is unloaded again).
std::string try_load(const std::string& so, const std::string& key, const std::vector<bool>& natives, NativeModule& mod) {
  if (std::string why = elf_incomplete(so); !why.empty()) return why;  // dlopen would fault on a short file
  void* handle = ::dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return e ? e : "dlopen failed";
  }
  const char* recorded = static_cast<const char*>(::dlsym(handle, "pto_kernel_key"));
  std::string why;
  if (!recorded) why = "it records no source hash (not a library of this pypto)";
  else if (key != recorded)
    why = "it was built from other code (it records hash " + std::string(recorded, strnlen(recorded, 32)) + ", this kernel's is " +
          key + ")";
  std::vector<pto_kernel_fn> entries(natives.size(), nullptr);
  for (size_t i = 0; why.empty() && i < natives.size(); ++i) {
    if (!natives[i]) continue;
    entries[i] = reinterpret_cast<pto_kernel_fn>(::dlsym(handle, ("pto_kernel_" + std::to_string(i)).c_str()));
    if (!entries[i]) why = "it lacks pto_kernel_" + std::to_string(i);
  }
  if (!why.empty()) {
    ::dlclose(handle);
    return why;
  }
  mod.handle = handle;
  mod.entries = std::move(entries);
  mod.library_path = so;
  return "";
}

}  // namespace

std::shared_ptr<NativeModule> load_native_module(const std::string& source, const std::vector<bool>& natives) {
  const std::string key = hex(fnv1a(source, toolchain_hash()));
  std::string dir = native_cache_dir();
  const bool cached = !dir.empty();
  if (!cached) {
    char tmpl[] = "/tmp/pypto-native-XXXXXX";
    if (!::mkdtemp(tmpl)) fail(ErrorKind::kRuntime, {}, "cannot create a temporary directory for native kernels", "check /tmp");
    dir = tmpl;
  }
  make_dirs(dir);
  check_cache_dir(dir, cached);
  const std::string so = dir + "/" + key + ".so", cpp = dir + "/" + key + ".cpp";
  // Compiles the source (with its key recorded in the library) and publishes the .so.
  auto build = [&] {
    const std::string suffix = unique_suffix();
    const std::string tmp_cpp = cpp + suffix, tmp_so = so + suffix;
    {
      std::ofstream f(tmp_cpp, std::ios::binary);
      f << source << "\nextern \"C\" const char pto_kernel_key[] = \"" << key << "\";\n";
      if (!f)
        fail(ErrorKind::kRuntime, {}, "cannot write generated kernel source " + tmp_cpp + " (" + std::strerror(errno) + ")",
             "make the cache directory writable, point PYPTO_CACHE_DIR at a writable directory, or set PYPTO_CACHE=0");
    }
    std::rename(tmp_cpp.c_str(), cpp.c_str());
    std::string output;
    auto command = [&](bool fast) {
      return compiler() + " " + compile_flags() + (fast ? std::string(" ") + kFastLinkHead : std::string()) + " -I" +
             shell_quote(native_include_dir()) + " " + shell_quote(cpp) + " -o " + shell_quote(tmp_so) +
             (fast ? std::string(" ") + kFastLinkTail : std::string());
    };
    std::string cmd = command(true);
    bool built = run_command(cmd, output) == 0 && exists(tmp_so);
    if (built) {
      void* trial = ::dlopen(tmp_so.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (trial) {
        ::dlclose(trial);
      } else {
        std::remove(tmp_so.c_str());
        output.clear();
        cmd = command(false);
        built = run_command(cmd, output) == 0 && exists(tmp_so);
      }
    } else {
      output.clear();  // the error comes from the default command, as before
      cmd = command(false);
      built = run_command(cmd, output) == 0 && exists(tmp_so);
    }
    if (!built) {
      std::remove(tmp_so.c_str());
      if (output.size() > 4000) output = output.substr(0, 4000) + "\n...";
      fail(ErrorKind::kRuntime, {},
           "the native engine could not compile the generated kernel " + cpp + "\ncommand: " + cmd +
               "\ncompiler output:\n" + output,
           "check that a C++17 compiler is installed (set CXX), or run with RunConfig(engine=\"sim\")");
    }
    std::rename(tmp_so.c_str(), so.c_str());  // atomic: concurrent compilers publish whole files
  };
  bool built = false;
  if (!cached || !exists(so)) {
    build();
    built = true;
  }
  auto mod = std::make_shared<NativeModule>();
  std::string why = try_load(so, key, natives, *mod);
  if (!why.empty() && !built) {
    // A cached library that does not load (truncated, say) or was built from other code
    // (swapped in): rebuild it once, then report.
    std::fprintf(stderr, "pypto: the cached native kernel %s cannot be used (%s); rebuilding it\n", so.c_str(),
                 why.c_str());
    build();
    // Loaded under a fresh name: the rejected library may stay mapped under `so` (C++ libraries
    // with unique symbols cannot be unloaded), and dlopen would hand that one back.
    const std::string fresh = so + unique_suffix();
    if (::link(so.c_str(), fresh.c_str()) == 0) {
      why = try_load(fresh, key, natives, *mod);
      ::unlink(fresh.c_str());
      mod->library_path = so;
    } else {
      why = try_load(so, key, natives, *mod);
    }
  }
  if (!why.empty())
    fail(ErrorKind::kRuntime, {}, "cannot load native kernel library " + so + ": " + why,
         "delete the cache directory (" + dir + ") and retry, or run with RunConfig(engine=\"sim\")");
  if (!cached) {
    std::remove(so.c_str());
    std::remove(cpp.c_str());
    ::rmdir(dir.c_str());
  }
  return mod;
}

// The per-level builds of data_movement.h (CMakeLists.txt names them; a package built by
// another compiler than GCC has none: the tile library is written for GCC, the kernels' compiler).
extern "C" {
#if defined(PYPTO_SUPPORT_x86_64_v1)
const pto_support* pto_support_x86_64_v1();
const pto_support* pto_support_x86_64_v3();
const pto_support* pto_support_x86_64_v4();
#elif defined(PYPTO_SUPPORT_default)
const pto_support* pto_support_default();
#endif
}

#if !defined(PYPTO_SUPPORT_x86_64_v1) && !defined(PYPTO_SUPPORT_default)
namespace {
// Without a build of the package: data_movement.h compiled like a kernel, by the kernels'
// compiler with their flags (disk cache), once per kernel-compile environment.
const pto_support* compiled_support() {
  static std::mutex mu;
  static std::map<std::string, std::pair<std::shared_ptr<NativeModule>, const pto_support*>> by_env;
  const std::string env = cache_key_env();
  std::lock_guard<std::mutex> lk(mu);
  if (auto it = by_env.find(env); it != by_env.end()) return it->second.second;
  const std::string source =
      "// pypto: the tile library's data movement for this compile target (kernels call it through pto_frame::support)\n"
      "#include \"pypto/isa/optimized/data_movement.h\"\n"
      "extern \"C\" const pto_support* pto_support_entry() {\n"
      "  static const pto_support table{&pto_opt::copy_region, &pto_opt::tload, &pto_opt::tstore, PTO_OPT_STREAM_PATH};\n"
      "  return &table;\n"
      "}\n";
  auto mod = load_native_module(source, {});
  auto entry = reinterpret_cast<const pto_support* (*)()>(::dlsym(mod->handle, "pto_support_entry"));
  if (!entry)
    fail(ErrorKind::kRuntime, {}, "the compiled data movement library " + mod->library_path + " has no pto_support_entry",
         "delete the kernel cache directory (" + native_cache_dir() + ") and retry");
  const pto_support* table = entry();
  by_env[env] = {mod, table};
  return table;
}
}  // namespace
#endif

const pto_support* native_support() {
#if defined(PYPTO_SUPPORT_x86_64_v1)
  const std::string isa = native_isa();
  if (isa == "scalar") return pto_support_x86_64_v1();
  if (isa == "avx2") return pto_support_x86_64_v3();
  if (isa != "native") return pto_support_x86_64_v4();  // avx512, avx512_bf16
  static const pto_support* const highest = [] {
    __builtin_cpu_init();
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
    if (__builtin_cpu_supports("x86-64-v4")) return pto_support_x86_64_v4();
    if (__builtin_cpu_supports("x86-64-v3")) return pto_support_x86_64_v3();
#else
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd") && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi2"))
      return pto_support_x86_64_v4();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("bmi") &&
        __builtin_cpu_supports("bmi2"))
      return pto_support_x86_64_v3();
#endif
    return pto_support_x86_64_v1();
  }();
  return highest;
#elif defined(PYPTO_SUPPORT_default)
  return pto_support_default();
#else
  return compiled_support();
#endif
}

std::string native_library_paths() {
  static std::mutex mu;
  static std::string paths;
  std::lock_guard<std::mutex> lk(mu);
  if (paths.empty()) {
    const std::string probe =
        "// pypto: which paths of the optimised library this compiler builds\n"
        "#include \"pypto/isa/optimized/tile_ops.h\"\n"
        "extern \"C\" const char* pto_opt_paths() { return \"vector=\" PTO_OPT_VECTOR_PATH \" f16=\" PTO_OPT_F16_PATH; }\n";
    auto mod = load_native_module(probe, {});
    auto fn = reinterpret_cast<const char* (*)()>(::dlsym(mod->handle, "pto_opt_paths"));
    paths = std::string(fn ? fn() : "unknown") + " store=" + native_support()->stream_path;
  }
  return paths;
}

// Each kernel is its own translation unit (entry point pto_kernel_0), so kernels compile in
// parallel, are cached one by one and report progress by name (compile_progress.h).
std::shared_ptr<NativeModule> native_module_for(const std::vector<const isa::Kernel*>& kernels, const isa::ChipSpec& chip) {
  struct Part {
    std::string source, key;
    std::vector<bool> natives;
  };
  std::vector<Part> parts(kernels.size());
  for (size_t i = 0; i < kernels.size(); ++i) {
    parts[i].source = generate_native_source({kernels[i]}, chip, parts[i].natives);
    parts[i].key = parts[i].source + (parts[i].natives[0] ? '1' : '0') + cache_key_env();
  }
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<NativeModule>> loaded;  // modules stay loaded
  const std::string dir = native_cache_dir();
  const bool use_cache = !dir.empty();
  std::lock_guard<std::mutex> lk(mu);

  auto mod = std::make_shared<NativeModule>();
  mod->support = native_support();
  mod->entries.assign(kernels.size(), nullptr);
  mod->parts.assign(kernels.size(), nullptr);
  std::vector<size_t> todo;
  int to_compile = 0;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!parts[i].natives[0]) continue;  // runs on the reference library: nothing to compile
    if (use_cache)
      if (auto it = loaded.find(parts[i].key); it != loaded.end()) {
        mod->parts[i] = it->second;
        continue;
      }
    todo.push_back(i);
    if (!use_cache || !exists(dir + "/" + hex(fnv1a(parts[i].source, toolchain_hash())) + ".so")) ++to_compile;
  }

  CompileProgress progress(to_compile);
  std::vector<std::exception_ptr> errors(kernels.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t n; (n = next++) < todo.size();) {
      const size_t i = todo[n];
      const std::string& name = kernels[i]->name;
      progress.started(name);
      try {
        mod->parts[i] = load_native_module(parts[i].source, parts[i].natives);
      } catch (...) {
        errors[i] = std::current_exception();
      }
      progress.finished(name);
    }
  };
  const size_t workers = std::min<size_t>(todo.size(), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (size_t w = 1; w < workers; ++w) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);

  for (size_t i = 0; i < kernels.size(); ++i) {
    if (!mod->parts[i]) continue;
    if (use_cache) loaded[parts[i].key] = mod->parts[i];
    mod->entries[i] = mod->parts[i]->entries[0];
    if (mod->library_path.empty()) mod->library_path = mod->parts[i]->library_path;
  }
  return mod;
}

std::map<std::string, std::string> native_matmul_paths() {
  static std::mutex mu;
  static std::map<std::string, std::map<std::string, std::string>> by_env;
  const std::string env = cache_key_env();
  {
    std::lock_guard<std::mutex> lk(mu);
    if (auto it = by_env.find(env); it != by_env.end()) return it->second;
  }
  // A probe compiled like a kernel: matmul.h's own names of the paths it compiled in (BF16: the
  // one it runs in this process, AMX only where a probe product ran on the tiles).
  const std::string src =
      "#include \"pypto/isa/optimized/matmul.h\"\n"
      "extern \"C\" const char* pto_matmul_path(int d) {\n"
      "  return d == 0 ? pto_opt::kMatmulPathFp32 : d == 1 ? pto_opt::kMatmulPathFp16 : pto_opt::matmul_path_bf16_run();\n}\n";
  auto mod = load_native_module(src, {});
  auto fn = reinterpret_cast<const char* (*)(int)>(::dlsym(mod->handle, "pto_matmul_path"));
  if (!fn) fail(ErrorKind::kRuntime, {}, "the matmul path probe " + mod->library_path + " lacks pto_matmul_path",
                "delete the cache directory (" + native_cache_dir() + ") and retry");
  std::map<std::string, std::string> out = {{"isa", native_isa()}, {"FP32", fn(0)}, {"FP16", fn(1)}, {"BF16", fn(2)}};
  std::lock_guard<std::mutex> lk(mu);
  by_env[env] = out;
  return out;
}

}  // namespace pypto::engines
