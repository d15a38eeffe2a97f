//===- CudaHostEmulator.cpp - the CUDA APIs on the host, for tests -*- C++
//-*-===//
//
// LD_PRELOADed under zero-run, this library answers the calls that the
// CUDA runtime library (libZeroRuntimeCUDA) and a --target=cuda step make
// to the CUDA runtime, the driver, cuBLAS and NCCL, on a machine without a
// GPU. Device memory is host memory; every stream runs its work when it is
// queued; NCCL collectives move the bytes over MPI; kernels and GEMMs are
// checked and, when the step holds host copies of its kernels (zero-opt
// --host-kernels: `zero_host_kernel_<name>` next to the embedded cubin),
// run: each launch runs the copy's threads in turn (a thread copy's side
// by side, each a fiber, meeting at barriers, shuffles and warp matrix
// products), each GEMM is computed in the compute type. What it checks is
// what a GPU would reject or silently get wrong:
//   - every pointer given to a copy, fill, GEMM or collective lies, with
//     the bytes it covers, inside one live allocation (host pointers only
//     where a copy allows them);
//   - a module is a cubin or fat binary with a cubin for the emulated
//     device's architecture, and every function looked up is a kernel of it;
//   - launches stay within CUDA's grid and block limits;
//   - a thread copy's threads meet where they must: every thread of a
//     block at a barrier, every lane of a warp at a shuffle or product;
//   - GEMM leading dimensions and operations are ones cuBLAS accepts;
//   - a stream waits only on an event recorded before;
//   - no two streams touch the same device bytes, one of them writing,
//     without an event wait or host synchronization between them (with
//     host copies, a kernel's buffers are known from its argument spec);
//   - device memory use: cudaMemGetInfo answers from the live allocations.
// A violation is the error code the real API would return, or
// cudaErrorInvalidValue / CUDA_ERROR_INVALID_VALUE / ncclInvalidArgument,
// with the reason on stderr, so the runtime's own error path reports it.
//
// Environment: ZERO_CUDA_EMU_DEVICES (visible devices, default 8),
// ZERO_CUDA_EMU_SM (architecture, default 90), ZERO_CUDA_EMU_MEMORY (bytes
// per device, default 80 GiB), ZERO_CUDA_EMU_REPORT (a path: each process
// writes PATH.<rank>.json with what it saw at exit), ZERO_CUDA_EMU_FAIL
// (`call:n`: the n-th call of that API fails, to test error paths),
// ZERO_CUDA_EMU_HANG (`call:n`: the n-th call never returns, a stuck
// rank); ZERO_CUDA_EMU_FAIL_RANK limits either to one rank;
// ZERO_CUDA_EMU_POISON=1 fills fresh device memory with 0xff bytes (NaN)
// instead of zeros, so that a result computed from unwritten memory shows.
//
//===----------------------------------------------------------------------===//
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "zero-rt/Float16.h"

#include <mpi.h>

#include <dlfcn.h>
#include <elf.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <tuple>
#include <ucontext.h>
#include <vector>

namespace {

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

/// A kernel's host copy (HostKernels.cpp): the launch's parameter array,
/// grid and block.
using HostKernel = void (*)(void **, int64_t, int64_t, int64_t, int64_t,
                            int64_t, int64_t);
/// The copy of a kernel whose threads meet, which runs one thread: the
/// parameter array, the thread's context, the grid and block sizes, the
/// block id and the thread id.
using ThreadKernel = void (*)(void **, void *, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, int64_t, int64_t,
                              int64_t, int64_t, int64_t, int64_t);

/// One argument of a kernel's host copy, from its spec: a memref of `rank`
/// (read: effects & 1, written: & 2), or a scalar (rank -1).
struct KernelArg {
  int rank = -1, elementBytes = 0;
  unsigned effects = 0;
};
struct HostCopy {
  HostKernel run = nullptr;
  ThreadKernel thread = nullptr;
  int64_t shared = 0; ///< the thread copy's workgroup bytes
  std::vector<KernelArg> args;
};
struct Module {
  std::set<std::string> kernels;
  /// The host copies of the kernels, when the object that holds the image
  /// has them.
  std::map<std::string, HostCopy> hosts;
};
struct Function {
  Module *module;
  std::string name;
  const HostCopy *host = nullptr;
};
/// Per stream, the number of its last piece of work known done before
/// (vector clocks).
using Clock = std::map<const void *, int64_t>;

struct Event {
  bool recorded = false;
  double ms = 0;
  Clock clock; ///< the recording stream's, when recorded
};
/// Device bytes one piece of work read or wrote.
struct Access {
  uintptr_t lo, hi;
  bool write;
  const void *stream;
  int64_t seq;
  std::string what;
};
struct Comm {
  MPI_Comm mpi = MPI_COMM_NULL;
  int rank = 0, size = 1;
};

struct Emulator {
  std::recursive_mutex m;
  int devices = 8, sm = 90, device = 0;
  int64_t memory = int64_t(80) << 30;
  /// Fresh device memory filled with this byte (0xff: NaN in every float
  /// type), so that a read of what nothing wrote shows up in the results.
  int fill = 0;
  std::map<uintptr_t, int64_t> allocations; ///< base -> bytes
  int64_t used = 0, peak = 0;
  std::set<void *> streams, blasHandles;
  std::map<const void *, Clock> clocks; ///< per stream
  Clock host;                           ///< what the host waited for
  std::vector<Access> accesses;         ///< not yet known done everywhere
  std::map<void *, const void *> blasStreams;
  int64_t races = 0;
  std::set<Event *> events;
  std::set<Module *> modules;
  std::set<Function *> functions;
  std::set<Comm *> comms;
  std::map<std::string, int64_t> calls, launchesByKernel;
  int64_t launches = 0, gemms = 0, collectives = 0, collectiveBytes = 0;
  /// Kernels and GEMMs computed (a module with host copies was loaded).
  bool computes = false;
  int64_t kernelsRun = 0;
  std::vector<std::string> violations;
  cudaError_t lastError = cudaSuccess;
  std::string failCall, hangCall;
  int64_t failAt = 0, hangAt = 0;

  Emulator() {
    if (const char *v = std::getenv("ZERO_CUDA_EMU_DEVICES"))
      devices = std::atoi(v);
    if (const char *v = std::getenv("ZERO_CUDA_EMU_SM"))
      sm = std::atoi(v);
    if (const char *v = std::getenv("ZERO_CUDA_EMU_MEMORY"))
      memory = std::atoll(v);
    if (const char *v = std::getenv("ZERO_CUDA_EMU_POISON"))
      fill = std::atoi(v) ? 0xff : 0;
    for (auto [name, call, at] :
         {std::tuple{"ZERO_CUDA_EMU_FAIL", &failCall, &failAt},
          std::tuple{"ZERO_CUDA_EMU_HANG", &hangCall, &hangAt}}) {
      const char *v = std::getenv(name);
      if (!v)
        continue;
      std::string s = v;
      size_t colon = s.find(':');
      *call = s.substr(0, colon);
      *at = colon == std::string::npos ? 1 : std::atoll(s.c_str() + colon + 1);
    }
  }
};

Emulator &emu() {
  // Never destroyed: the runtime's module destructors call in at exit.
  static Emulator *e = new Emulator;
  return *e;
}

double nowMs() {
  using namespace std::chrono;
  return duration<double, std::milli>(steady_clock::now().time_since_epoch())
      .count();
}

/// Whether ZERO_CUDA_EMU_FAIL_RANK allows this process to fail or hang.
bool chosenRank() {
  const char *only = std::getenv("ZERO_CUDA_EMU_FAIL_RANK");
  if (!only)
    return true;
  const char *rank = std::getenv("OMPI_COMM_WORLD_RANK");
  return rank && std::atoi(rank) == std::atoi(only);
}

/// Counts a call; true when ZERO_CUDA_EMU_FAIL asks it to fail. Never
/// returns when ZERO_CUDA_EMU_HANG names it (the emulator's lock held: the
/// whole process is stuck, as a rank in a hung kernel).
bool enter(const char *call) {
  Emulator &e = emu();
  int64_t n = ++e.calls[call];
  if (e.hangAt > 0 && e.hangCall == call && n == e.hangAt && chosenRank()) {
    std::fprintf(stderr, "cuda-emulator: %s hangs as ZERO_CUDA_EMU_HANG asks\n",
                 call);
    while (true)
      std::this_thread::sleep_for(std::chrono::hours(1));
  }
  if (e.failAt <= 0 || e.failCall != call || n != e.failAt || !chosenRank())
    return false;
  std::fprintf(stderr, "cuda-emulator: %s fails as ZERO_CUDA_EMU_FAIL asks\n",
               call);
  return true;
}

/// Records and prints a violation; returns false for `return` chains.
bool violation(const std::string &what) {
  Emulator &e = emu();
  e.violations.push_back(what);
  std::fprintf(stderr, "cuda-emulator: %s\n", what.c_str());
  return false;
}

/// The live allocation whose bytes include `addr`, or end().
std::map<uintptr_t, int64_t>::const_iterator allocationOf(uintptr_t addr) {
  const auto &all = emu().allocations;
  auto it = all.upper_bound(addr);
  if (it == all.begin() ||
      addr >= std::prev(it)->first + uint64_t(std::prev(it)->second))
    return all.end();
  return std::prev(it);
}

bool isDevice(const void *p) {
  return allocationOf(reinterpret_cast<uintptr_t>(p)) !=
         emu().allocations.end();
}

/// Whether one live allocation holds [p, p + bytes); false with a reason.
bool inDevice(const void *p, int64_t bytes, const std::string &what) {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = allocationOf(addr);
  if (it == emu().allocations.end())
    return violation(what + ": " + std::to_string(bytes) +
                     " bytes at an address that is no live device allocation");
  if (addr + uint64_t(std::max<int64_t>(bytes, 0)) <=
      it->first + uint64_t(it->second))
    return true;
  return violation(what + ": " + std::to_string(bytes) + " bytes at " +
                   std::to_string(addr - it->first) +
                   " run past the end of a device allocation of " +
                   std::to_string(it->second) + " bytes");
}

cudaError_t fail(cudaError_t rc) {
  emu().lastError = rc;
  return rc;
}

/// A new handle of type `Handle` for a fresh `Object` that `live` tracks.
template <typename Object, typename Handle, typename Set>
void newHandle(Set &live, Handle *out) {
  auto *o = new Object();
  live.insert(o);
  *out = reinterpret_cast<Handle>(o);
}

bool validStream(cudaStream_t s) {
  return !s || emu().streams.count(reinterpret_cast<void *>(s));
}

//===----------------------------------------------------------------------===//
// Ordering between streams
//===----------------------------------------------------------------------===//
//
// Work runs when it is queued, so values are those of program order; a GPU
// runs streams concurrently, ordered only by event waits and host
// synchronization. Each stream numbers its work, each stream's clock says
// what of every stream's work is known done before its next piece, and an
// access to bytes that another stream's unordered work wrote (or reads,
// when this one writes) is a race.

void join(Clock &into, const Clock &from) {
  for (auto &[stream, n] : from)
    into[stream] = std::max(into[stream], n);
}

/// Forgets the accesses that all later work is known to come after.
void prune() {
  Emulator &e = emu();
  auto done = [&](const Access &a) {
    auto h = e.host.find(a.stream);
    if (h != e.host.end() && h->second >= a.seq)
      return true;
    for (auto &[stream, clock] : e.clocks) {
      auto known = clock.find(a.stream);
      if (stream != a.stream && (known == clock.end() || known->second < a.seq))
        return false;
    }
    return true;
  };
  e.accesses.erase(std::remove_if(e.accesses.begin(), e.accesses.end(), done),
                   e.accesses.end());
}

/// Every stream's work so far done before the host's and every stream's
/// next (the legacy default stream, cudaDeviceSynchronize).
void deviceBarrier() {
  Emulator &e = emu();
  for (auto &[stream, clock] : e.clocks)
    join(e.host, clock);
  for (auto &[stream, clock] : e.clocks)
    join(clock, e.host);
  prune();
}

/// A new piece of work on `stream`: the stream and its number there; none
/// on the legacy default stream, which is ordered with everything.
struct Work {
  const void *stream = nullptr;
  int64_t seq = 0;
};
Work queue(const void *stream) {
  Emulator &e = emu();
  if (!stream) {
    deviceBarrier();
    return {};
  }
  Clock &clock = e.clocks[stream];
  join(clock, e.host);
  return {stream, ++clock[stream]};
}

/// Records that `work` reads or writes [p, p + bytes); a violation when
/// another stream touched those bytes, one of the two writing, and this
/// stream does not know that work done.
void touch(Work work, const void *p, int64_t bytes, bool write,
           const std::string &what) {
  Emulator &e = emu();
  if (!work.stream || bytes <= 0)
    return;
  uintptr_t lo = reinterpret_cast<uintptr_t>(p), hi = lo + uint64_t(bytes);
  const Clock &clock = e.clocks[work.stream];
  for (const Access &a : e.accesses) {
    if (a.stream == work.stream || !(a.write || write) || a.hi <= lo ||
        hi <= a.lo)
      continue;
    auto known = clock.find(a.stream);
    if (known != clock.end() && known->second >= a.seq)
      continue;
    // The first few name the calls and bytes; the report counts them all.
    if (++e.races <= 8) {
      auto base = allocationOf(std::max(lo, a.lo));
      auto at = [&](uintptr_t x, uintptr_t y) {
        uintptr_t b = base == e.allocations.end() ? 0 : base->first;
        return "[" + std::to_string(x - b) + ", " + std::to_string(y - b) + ")";
      };
      violation("race: " + what + (write ? " writes" : " reads") + " bytes " +
                at(lo, hi) + " of an allocation, " + a.what +
                (a.write ? " writes" : " reads") + " " + at(a.lo, a.hi) +
                " on another stream, with no event wait or synchronization "
                "between them");
    }
    break;
  }
  e.accesses.push_back({lo, hi, write, work.stream, work.seq, what});
}

void *allocate(int64_t bytes) {
  Emulator &e = emu();
  if (bytes <= 0 || e.used + bytes > e.memory)
    return nullptr;
  // cudaMalloc's alignment; zeroed (or poisoned) so that runs are
  // reproducible.
  size_t rounded = (size_t(bytes) + 255) / 256 * 256;
  void *p = std::aligned_alloc(256, rounded);
  if (!p)
    return nullptr;
  std::memset(p, e.fill, rounded);
  e.allocations[reinterpret_cast<uintptr_t>(p)] = bytes;
  e.used += bytes;
  e.peak = std::max(e.peak, e.used);
  return p;
}

bool release(void *p) {
  Emulator &e = emu();
  auto it = e.allocations.find(reinterpret_cast<uintptr_t>(p));
  if (it == e.allocations.end())
    return false;
  e.used -= it->second;
  e.allocations.erase(it);
  std::free(p);
  return true;
}

//===----------------------------------------------------------------------===//
// Cubins and fat binaries: the kernels an image holds
//===----------------------------------------------------------------------===//

/// The architecture of a CUDA ELF (sm_XY as XY) from its flags: the low
/// byte before CUDA 12.8's ABI version 8, bits 8-15 since.
int elfArch(const Elf64_Ehdr *h) {
  if (h->e_ident[EI_ABIVERSION] >= 8)
    return int((h->e_flags >> 8) & 0xff);
  return int(h->e_flags & 0xff);
}

/// Whether a cubin for sm_`arch` runs on the emulated GPU: same major
/// version, at most its minor.
bool runsHere(int arch) {
  int sm = emu().sm;
  return arch / 10 == sm / 10 && arch <= sm;
}

/// Kernels (global functions) of the CUDA ELF at `p` of `size` bytes.
bool elfKernels(const char *p, size_t size, std::set<std::string> &kernels,
                int &arch) {
  if (size < sizeof(Elf64_Ehdr) || std::memcmp(p, ELFMAG, SELFMAG) != 0)
    return false;
  auto *h = reinterpret_cast<const Elf64_Ehdr *>(p);
  if (h->e_ident[EI_CLASS] != ELFCLASS64 || h->e_machine != EM_CUDA ||
      h->e_shoff + uint64_t(h->e_shnum) * sizeof(Elf64_Shdr) > size)
    return false;
  arch = elfArch(h);
  auto *sections = reinterpret_cast<const Elf64_Shdr *>(p + h->e_shoff);
  for (unsigned i = 0; i < h->e_shnum; ++i) {
    const Elf64_Shdr &s = sections[i];
    if (s.sh_type != SHT_SYMTAB || s.sh_link >= h->e_shnum ||
        s.sh_offset + s.sh_size > size)
      continue;
    const Elf64_Shdr &strs = sections[s.sh_link];
    auto *syms = reinterpret_cast<const Elf64_Sym *>(p + s.sh_offset);
    for (size_t j = 0; j < s.sh_size / sizeof(Elf64_Sym); ++j)
      if (ELF64_ST_TYPE(syms[j].st_info) == STT_FUNC &&
          ELF64_ST_BIND(syms[j].st_info) == STB_GLOBAL &&
          syms[j].st_name < strs.sh_size)
        kernels.insert(p + strs.sh_offset + syms[j].st_name);
  }
  return true;
}

/// The kernels of `image` for the emulated architecture: a cubin, or the
/// cubin of that architecture inside a fat binary (found by its ELF
/// header, so compressed entries are not read). PTX text: its `.entry`s.
CUresult imageKernels(const void *image, Module &module) {
  Emulator &e = emu();
  const char *p = static_cast<const char *>(image);
  int arch = 0;
  if (std::memcmp(p, ELFMAG, SELFMAG) == 0) {
    if (!elfKernels(p, SIZE_MAX / 2, module.kernels, arch)) {
      violation("cuModuleLoadData: an ELF image that is no 64-bit CUDA cubin");
      return CUDA_ERROR_INVALID_IMAGE;
    }
    if (!runsHere(arch)) {
      violation("cuModuleLoadData: a cubin for sm_" + std::to_string(arch) +
                " cannot run on the emulated sm_" + std::to_string(e.sm));
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    return CUDA_SUCCESS;
  }
  uint32_t magic;
  std::memcpy(&magic, p, 4);
  if (magic == 0xBA55ED50u) {
    uint64_t size;
    std::memcpy(&size, p + 8, 8);
    size += 16;
    std::vector<int> archs;
    for (uint64_t off = 16; off + sizeof(Elf64_Ehdr) <= size; off += 8) {
      std::set<std::string> found;
      if (!elfKernels(p + off, size - off, found, arch))
        continue;
      archs.push_back(arch);
      if (runsHere(arch) && module.kernels.empty())
        module.kernels = found;
    }
    if (module.kernels.empty()) {
      std::string have;
      for (int a : archs)
        have += " sm_" + std::to_string(a);
      violation("cuModuleLoadData: the fat binary has no cubin for the "
                "emulated sm_" +
                std::to_string(e.sm) +
                " (cubins:" + (have.empty() ? " none readable" : have) + ")");
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    }
    return CUDA_SUCCESS;
  }
  std::string text(p);
  if (text.find(".version") != std::string::npos) {
    for (size_t at = text.find(".entry"); at != std::string::npos;
         at = text.find(".entry", at + 6)) {
      size_t b = text.find_first_not_of(" \t", at + 6);
      size_t end = text.find_first_of(" \t(\n", b);
      module.kernels.insert(text.substr(b, end - b));
    }
    return CUDA_SUCCESS;
  }
  violation("cuModuleLoadData: the image is no cubin, fat binary or PTX");
  return CUDA_ERROR_INVALID_IMAGE;
}

constexpr const char *kHostPrefix = "zero_host_kernel_";
constexpr const char *kThreadPrefix = "zero_host_thread_";

/// The arguments a kernel spec lists (HostKernels.cpp: `m<rank>:<element
/// bytes>:<r|w|rw|->` or `s` each, space-separated); false when malformed.
bool parseSpec(const char *spec, std::vector<KernelArg> &args) {
  for (const char *p = spec; *p;) {
    if (*p == ' ') {
      ++p;
    } else if (*p == 's') {
      args.push_back({});
      ++p;
    } else {
      KernelArg a;
      int used = 0;
      char effects[3] = {0, 0, 0};
      if (std::sscanf(p, "m%d:%d:%2[rw-]%n", &a.rank, &a.elementBytes, effects,
                      &used) != 3 ||
          a.rank < 0 || a.elementBytes <= 0)
        return false;
      a.effects = (std::strchr(effects, 'r') ? 1u : 0u) |
                  (std::strchr(effects, 'w') ? 2u : 0u);
      args.push_back(a);
      p += used;
    }
  }
  return true;
}

/// Finds the host copies of `module`'s kernels in the loaded object that
/// holds `image` (a step compiled with --host-kernels): all or none.
CUresult hostCopies(const void *image, Module &module) {
  Dl_info info;
  if (!dladdr(image, &info) || !info.dli_fname)
    return CUDA_SUCCESS; // not in a loaded object (a copied image)
  // Kept open: the copies are called as long as the module lives. The
  // main program has no name to open: its handle searches it first.
  void *library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!library)
    library = dlopen(nullptr, RTLD_LAZY);
  std::vector<std::string> missing;
  auto find = [&](const std::string &symbol) -> void * {
    void *p = dlsym(library, symbol.c_str());
    Dl_info at;
    return p && dladdr(p, &at) && at.dli_fbase == info.dli_fbase ? p : nullptr;
  };
  for (const std::string &k : module.kernels) {
    std::string name = kHostPrefix + k;
    void *copy = find(name), *thread = nullptr, *shared = nullptr;
    if (!copy) {
      name = kThreadPrefix + k;
      thread = find(name);
      shared = find(name + "_shared");
    }
    void *spec = find(name + "_args");
    if ((!copy && (!thread || !shared)) || !spec) {
      missing.push_back(k);
      continue;
    }
    HostCopy &host = module.hosts[k];
    host.run = reinterpret_cast<HostKernel>(copy);
    host.thread = reinterpret_cast<ThreadKernel>(thread);
    if (shared)
      host.shared = *static_cast<const int64_t *>(shared);
    if (!parseSpec(static_cast<const char *>(spec), host.args)) {
      violation("cuModuleLoadData: kernel " + k +
                " has a malformed argument "
                "spec '" +
                static_cast<const char *>(spec) + "'");
      return CUDA_ERROR_INVALID_IMAGE;
    }
  }
  if (module.hosts.empty())
    return CUDA_SUCCESS;
  if (!missing.empty()) {
    violation("cuModuleLoadData: " + std::string(info.dli_fname) +
              " holds host copies of some kernels but not of " + missing[0]);
    return CUDA_ERROR_INVALID_IMAGE;
  }
  emu().computes = true;
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Driver API (through cudaGetDriverEntryPointByVersion)
//===----------------------------------------------------------------------===//

#define LOCK std::lock_guard<std::recursive_mutex> lock(emu().m)

CUresult drvGetErrorName(CUresult rc, const char **s) {
  *s = rc == CUDA_SUCCESS                   ? "CUDA_SUCCESS"
       : rc == CUDA_ERROR_INVALID_VALUE     ? "CUDA_ERROR_INVALID_VALUE"
       : rc == CUDA_ERROR_NOT_FOUND         ? "CUDA_ERROR_NOT_FOUND"
       : rc == CUDA_ERROR_INVALID_IMAGE     ? "CUDA_ERROR_INVALID_IMAGE"
       : rc == CUDA_ERROR_INVALID_HANDLE    ? "CUDA_ERROR_INVALID_HANDLE"
       : rc == CUDA_ERROR_NO_BINARY_FOR_GPU ? "CUDA_ERROR_NO_BINARY_FOR_GPU"
       : rc == CUDA_ERROR_LAUNCH_FAILED     ? "CUDA_ERROR_LAUNCH_FAILED"
                                            : "CUDA_ERROR_UNKNOWN";
  return CUDA_SUCCESS;
}
CUresult drvGetErrorString(CUresult rc, const char **s) {
  *s = rc == CUDA_SUCCESS ? "no error" : "rejected by the CUDA host emulator";
  return CUDA_SUCCESS;
}
CUresult drvModuleLoadData(CUmodule *module, const void *image) {
  LOCK;
  if (enter("cuModuleLoadData"))
    return CUDA_ERROR_INVALID_IMAGE;
  if (!image)
    return CUDA_ERROR_INVALID_VALUE;
  auto *m = new Module;
  CUresult rc = imageKernels(image, *m);
  if (rc != CUDA_SUCCESS) {
    delete m;
    return rc;
  }
  if (hostCopies(image, *m) != CUDA_SUCCESS) {
    delete m;
    return CUDA_ERROR_INVALID_IMAGE;
  }
  emu().modules.insert(m);
  *module = reinterpret_cast<CUmodule>(m);
  return CUDA_SUCCESS;
}
CUresult drvModuleLoadDataEx(CUmodule *module, const void *image, unsigned,
                             CUjit_option *, void **) {
  return drvModuleLoadData(module, image);
}
CUresult drvModuleUnload(CUmodule module) {
  LOCK;
  auto *m = reinterpret_cast<Module *>(module);
  if (!emu().modules.erase(m))
    return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}
CUresult drvModuleGetFunction(CUfunction *f, CUmodule module,
                              const char *name) {
  LOCK;
  auto *m = reinterpret_cast<Module *>(module);
  if (!emu().modules.count(m))
    return CUDA_ERROR_INVALID_HANDLE;
  if (!m->kernels.count(name)) {
    violation(std::string("cuModuleGetFunction: the module has no kernel ") +
              name);
    return CUDA_ERROR_NOT_FOUND;
  }
  auto host = m->hosts.find(name);
  auto *fn =
      new Function{m, name, host == m->hosts.end() ? nullptr : &host->second};
  emu().functions.insert(fn);
  *f = reinterpret_cast<CUfunction>(fn);
  return CUDA_SUCCESS;
}
CUresult drvFuncSetAttribute(CUfunction f, CUfunction_attribute, int) {
  LOCK;
  return emu().functions.count(reinterpret_cast<Function *>(f))
             ? CUDA_SUCCESS
             : CUDA_ERROR_INVALID_HANDLE;
}
CUresult drvFuncGetName(const char **name, CUfunction f) {
  LOCK;
  auto *fn = reinterpret_cast<Function *>(f);
  if (!emu().functions.count(fn))
    return CUDA_ERROR_INVALID_HANDLE;
  *name = fn->name.c_str();
  return CUDA_SUCCESS;
}

/// A kernel's memref argument: the device bytes its descriptor covers and
/// what the kernel does with them (1 read, 2 write).
struct KernelBuffer {
  const char *p;
  int64_t bytes;
  unsigned effects;
};

/// The memref arguments of a launch of `host`: the device bytes the
/// descriptor fields in `params` cover.
std::vector<KernelBuffer> kernelBuffers(const HostCopy &host, void **params) {
  std::vector<KernelBuffer> out;
  size_t slot = 0;
  for (const KernelArg &arg : host.args) {
    if (arg.rank < 0) {
      ++slot;
      continue;
    }
    int rank = arg.rank;
    int64_t bytes = arg.elementBytes;
    const char *aligned = *static_cast<char **>(params[slot + 1]);
    int64_t offset = *static_cast<int64_t *>(params[slot + 2]);
    // Elements [lo, hi) from the offset that the sizes and strides reach.
    int64_t lo = 0, hi = 1;
    for (int d = 0; d < rank; ++d) {
      int64_t size = *static_cast<int64_t *>(params[slot + 3 + d]);
      int64_t stride = *static_cast<int64_t *>(params[slot + 3 + rank + d]);
      if (size <= 0) {
        hi = lo;
        break;
      }
      (stride >= 0 ? hi : lo) += (size - 1) * stride;
    }
    out.push_back(
        {aligned + (offset + lo) * bytes, (hi - lo) * bytes, arg.effects});
    slot += 3 + 2 * size_t(rank);
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Blocks whose threads meet
//===----------------------------------------------------------------------===//

/// What a thread of a thread copy calls where threads meet. The copy reads
/// these slots in this order (HostKernels.cpp's ContextSlot) and passes
/// the context back; it is the first member of the thread's fiber.
struct ThreadContext {
  void (*barrier)(ThreadContext *);
  int64_t (*shuffle)(ThreadContext *, int32_t value, int32_t offset,
                     int32_t width, int32_t mode);
  void (*mma)(ThreadContext *, const void *a, const void *b, const void *c,
              void *d, int32_t kind);
  char *shared;
};

/// Where a thread stands: running, waiting at a barrier, a shuffle or a
/// matrix product, or done.
enum class Wait { None, Barrier, Shuffle, Mma, Done };
const char *waitName(Wait w) {
  return w == Wait::Barrier   ? "a barrier"
         : w == Wait::Shuffle ? "a shuffle"
         : w == Wait::Mma     ? "a matrix product"
         : w == Wait::Done    ? "its end"
                              : "work";
}

struct Fiber {
  ThreadContext context; // first: the copy's context pointer is the fiber
  ucontext_t uc;
  Wait wait = Wait::None;
  int32_t value = 0, offset = 0, width = 0, mode = 0, kind = 0;
  int64_t result = 0;
  const void *a = nullptr, *b = nullptr, *c = nullptr;
  void *d = nullptr;
};

/// The block being run (one at a time, under the emulator's lock).
struct BlockRun {
  ucontext_t scheduler;
  std::vector<Fiber> fibers;
  ThreadKernel kernel;
  void **params;
  int64_t sizes[6], id[3];
};
BlockRun *running = nullptr;

void yield(ThreadContext *c, Wait w) {
  auto *f = reinterpret_cast<Fiber *>(c);
  f->wait = w;
  swapcontext(&f->uc, &running->scheduler);
}
void threadBarrier(ThreadContext *c) { yield(c, Wait::Barrier); }
int64_t threadShuffle(ThreadContext *c, int32_t value, int32_t offset,
                      int32_t width, int32_t mode) {
  auto *f = reinterpret_cast<Fiber *>(c);
  f->value = value;
  f->offset = offset;
  f->width = width;
  f->mode = mode;
  yield(c, Wait::Shuffle);
  return f->result;
}
void threadMma(ThreadContext *c, const void *a, const void *b, const void *cc,
               void *d, int32_t kind) {
  auto *f = reinterpret_cast<Fiber *>(c);
  f->a = a;
  f->b = b;
  f->c = cc;
  f->d = d;
  f->kind = kind;
  yield(c, Wait::Mma);
}
void threadStart(int index) {
  BlockRun &r = *running;
  Fiber &f = r.fibers[size_t(index)];
  int64_t bx = r.sizes[3], by = r.sizes[4];
  r.kernel(r.params, &f.context, r.sizes[0], r.sizes[1], r.sizes[2], r.sizes[3],
           r.sizes[4], r.sizes[5], r.id[0], r.id[1], r.id[2], index % bx,
           index / bx % by, index / (bx * by));
  f.wait = Wait::Done;
}

/// A shuffle's result for each of `lanes` (one warp's fibers) as PTX's
/// shfl.sync computes it with the clamp that gpu.shuffle's lowering
/// passes (32 - width for up, width - 1 otherwise): the value, valid in
/// bit 32. Empty, with why, when the lanes do not meet alike.
std::string shuffle(Fiber *lanes, int present) {
  int32_t width = lanes[0].width, mode = lanes[0].mode;
  if (width < 1 || width > 32 || (width & (width - 1)))
    return "a shuffle of width " + std::to_string(width);
  // The lowering's member mask holds lanes [0, width).
  if (width > present)
    return "a shuffle of width " + std::to_string(width) + " in a warp of " +
           std::to_string(present) + " threads";
  for (int l = 0; l < present; ++l) {
    Fiber &f = lanes[l];
    bool in = l < width;
    if (in != (f.wait == Wait::Shuffle) ||
        (in && (f.width != width || f.mode != mode)))
      return "lane " + std::to_string(l) + " at " + waitName(f.wait) +
             (f.wait == Wait::Shuffle ? " of another width or mode" : "") +
             " while lane 0 is at a shuffle of width " + std::to_string(width);
  }
  int32_t clamp = mode == 1 ? 32 - width : width - 1;
  std::vector<int64_t> out(static_cast<size_t>(width));
  for (int l = 0; l < width; ++l) {
    int32_t b = lanes[l].offset, j = l;
    bool valid = false;
    switch (mode) {
    case 0:
      j = l ^ b, valid = j <= clamp;
      break;
    case 1:
      j = l - b, valid = j >= clamp;
      break;
    case 2:
      j = l + b, valid = j <= clamp;
      break;
    case 3:
      j = b & 31, valid = j <= clamp;
      break;
    default:
      return "a shuffle of mode " + std::to_string(mode);
    }
    if (!valid)
      j = l;
    if (j < 0 || j >= width)
      return "lane " + std::to_string(l) + " reads lane " + std::to_string(j) +
             ", which is not in the shuffle";
    out[size_t(l)] =
        int64_t(uint32_t(lanes[j].value)) | (valid ? int64_t(1) << 32 : 0);
  }
  for (int l = 0; l < width; ++l)
    lanes[l].result = out[size_t(l)];
  return "";
}

float load16(const void *p, int i, int32_t kind) {
  uint16_t bits;
  std::memcpy(&bits, static_cast<const char *>(p) + 2 * i, 2);
  return kind == 0 ? zero::rt::bf16ToFloat(bits) : zero::rt::f16ToFloat(bits);
}

/// mma.sync m16n8k16 with bf16 (kind 0) or f16 (1) inputs and f32
/// accumulators over a whole warp, in PTX's fragment layout: lane l is
/// thread t = l % 4 of group g = l / 4; A's register r, half h holds
/// row g + 8 (r % 2), column 2t + h + 8 (r / 2); B's register r, half h
/// row 2t + h + 8r, column g; C's and D's element e row g + 8 (e / 2),
/// column 2t + e % 2.
std::string mma(Fiber *lanes, int present) {
  int32_t kind = lanes[0].kind;
  if (present != 32)
    return "a matrix product in a warp of " + std::to_string(present) +
           " threads";
  for (int l = 0; l < 32; ++l)
    if (lanes[l].wait != Wait::Mma || lanes[l].kind != kind)
      return "lane " + std::to_string(l) + " at " + waitName(lanes[l].wait) +
             " while lane 0 is at a matrix product";
  if (kind != 0 && kind != 1)
    return "a matrix product of kind " + std::to_string(kind);
  float A[16][16], B[16][8], C[16][8];
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, t = l % 4;
    for (int r = 0; r < 4; ++r)
      for (int h = 0; h < 2; ++h)
        A[g + 8 * (r % 2)][2 * t + h + 8 * (r / 2)] =
            load16(lanes[l].a, 2 * r + h, kind);
    for (int r = 0; r < 2; ++r)
      for (int h = 0; h < 2; ++h)
        B[2 * t + h + 8 * r][g] = load16(lanes[l].b, 2 * r + h, kind);
    for (int e = 0; e < 4; ++e)
      std::memcpy(&C[g + 8 * (e / 2)][2 * t + e % 2],
                  static_cast<const char *>(lanes[l].c) + 4 * e, 4);
  }
  for (int l = 0; l < 32; ++l) {
    int g = l / 4, t = l % 4;
    for (int e = 0; e < 4; ++e) {
      int m = g + 8 * (e / 2), n = 2 * t + e % 2;
      float acc = C[m][n];
      for (int k = 0; k < 16; ++k)
        acc += A[m][k] * B[k][n];
      std::memcpy(static_cast<char *>(lanes[l].d) + 4 * e, &acc, 4);
    }
  }
  return "";
}

/// Runs block `id` of a thread copy: each thread until it waits where
/// threads meet or ends, then what they meet for, until every thread
/// ended. False, with the violation said, where a GPU would hang or
/// compute what nothing defines (lanes of a warp apart at a shuffle or
/// matrix product, a barrier some threads never reach).
bool runBlock(const HostCopy &host, void **params, const int64_t sizes[6],
              const int64_t id[3], char *shared, const std::string &what) {
  static std::vector<std::vector<char>> stacks;
  constexpr size_t kStack = 256 << 10;
  int n = int(sizes[3] * sizes[4] * sizes[5]);
  BlockRun r;
  r.kernel = host.thread;
  r.params = params;
  std::copy(sizes, sizes + 6, r.sizes);
  std::copy(id, id + 3, r.id);
  r.fibers.resize(size_t(n));
  if (stacks.size() < size_t(n))
    stacks.resize(size_t(n));
  running = &r;
  for (int i = 0; i < n; ++i) {
    Fiber &f = r.fibers[size_t(i)];
    f.context = {&threadBarrier, &threadShuffle, &threadMma, shared};
    stacks[size_t(i)].resize(kStack);
    getcontext(&f.uc);
    f.uc.uc_stack.ss_sp = stacks[size_t(i)].data();
    f.uc.uc_stack.ss_size = kStack;
    f.uc.uc_link = &r.scheduler;
    makecontext(&f.uc, reinterpret_cast<void (*)()>(&threadStart), 1, i);
  }
  // Said only where a violation needs it; the block leaves `running` unset
  // however it ends.
  auto block = [&] {
    return what + ", block (" + std::to_string(id[0]) + ", " +
           std::to_string(id[1]) + ", " + std::to_string(id[2]) + ")";
  };
  struct Unset {
    ~Unset() { running = nullptr; }
  } unset;
  for (;;) {
    for (Fiber &f : r.fibers)
      if (f.wait == Wait::None)
        swapcontext(&r.scheduler, &f.uc);
    bool met = false;
    for (int w = 0; w * 32 < n; ++w) {
      Fiber *lanes = &r.fibers[size_t(w) * 32];
      int present = std::min(32, n - w * 32);
      Wait at = Wait::None;
      for (int l = 0; l < present && at == Wait::None; ++l)
        if (lanes[l].wait == Wait::Shuffle || lanes[l].wait == Wait::Mma)
          at = lanes[l].wait;
      if (at == Wait::None)
        continue;
      std::string why =
          at == Wait::Shuffle ? shuffle(lanes, present) : mma(lanes, present);
      if (!why.empty())
        return violation(block() + ", warp " + std::to_string(w) + ": " + why);
      for (int l = 0; l < present; ++l)
        if (lanes[l].wait == at)
          lanes[l].wait = Wait::None;
      met = true;
    }
    if (met)
      continue;
    int done = 0;
    for (Fiber &f : r.fibers)
      done += f.wait == Wait::Done;
    if (done == n)
      break;
    if (done)
      return violation(block() + ": " + std::to_string(done) + " of " +
                       std::to_string(n) +
                       " threads ended while the others wait at a barrier");
    for (Fiber &f : r.fibers)
      f.wait = Wait::None;
  }
  return true;
}

CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                unsigned bx, unsigned by, unsigned bz, unsigned shared,
                CUstream stream, void **params, void **extra) {
  LOCK;
  Emulator &e = emu();
  if (enter("cuLaunchKernel"))
    return CUDA_ERROR_LAUNCH_FAILED;
  auto *fn = reinterpret_cast<Function *>(f);
  if (!e.functions.count(fn) || !e.modules.count(fn->module)) {
    violation("cuLaunchKernel: no function of a loaded module");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  std::string what = "cuLaunchKernel " + fn->name;
  if (!validStream(reinterpret_cast<cudaStream_t>(stream))) {
    violation(what + ": unknown stream");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  uint64_t threads = uint64_t(bx) * by * bz;
  if (!gx || !gy || !gz || !bx || !by || !bz || threads > 1024 || bx > 1024 ||
      by > 1024 || bz > 64 || gy > 65535 || gz > 65535 || gx > 2147483647u ||
      shared > 48 * 1024) {
    violation(what + ": grid " + std::to_string(gx) + "x" + std::to_string(gy) +
              "x" + std::to_string(gz) + ", block " + std::to_string(bx) + "x" +
              std::to_string(by) + "x" + std::to_string(bz) + ", " +
              std::to_string(shared) + " B shared: past CUDA's limits");
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!params && !extra) {
    violation(what + ": no parameters");
    return CUDA_ERROR_INVALID_VALUE;
  }
  ++e.launches;
  ++e.launchesByKernel[fn->name];
  if (fn->host) {
    if (!params) {
      violation(what + ": parameters through `extra`, which the host copy "
                       "does not read");
      return CUDA_ERROR_INVALID_VALUE;
    }
    std::vector<KernelBuffer> buffers = kernelBuffers(*fn->host, params);
    Work work = queue(stream);
    for (size_t i = 0; i < buffers.size(); ++i) {
      const KernelBuffer &b = buffers[i];
      std::string arg = what + " buffer " + std::to_string(i);
      if (b.bytes > 0 && !inDevice(b.p, b.bytes, arg))
        return CUDA_ERROR_INVALID_VALUE;
      // A write races with what a read races with, and more.
      if (b.effects)
        touch(work, b.p, b.bytes, b.effects & 2, arg);
    }
    if (fn->host->run) {
      fn->host->run(params, gx, gy, gz, bx, by, bz);
    } else {
      if (int64_t(shared) + fn->host->shared > 48 * 1024) {
        violation(what + ": " + std::to_string(fn->host->shared) +
                  " B of static and " + std::to_string(shared) +
                  " B of dynamic shared memory: past 48 KiB");
        return CUDA_ERROR_INVALID_VALUE;
      }
      // Shared memory starts as whatever was there: poisoned like fresh
      // device memory.
      std::vector<char> bytes(size_t(fn->host->shared + shared) + 1);
      int64_t sizes[6] = {gx, gy, gz, bx, by, bz};
      for (int64_t z = 0; z < gz; ++z)
        for (int64_t y = 0; y < gy; ++y)
          for (int64_t x = 0; x < gx; ++x) {
            int64_t id[3] = {x, y, z};
            std::fill(bytes.begin(), bytes.end(), char(e.fill));
            if (!runBlock(*fn->host, params, sizes, id, bytes.data(), what))
              return CUDA_ERROR_LAUNCH_FAILED;
          }
    }
    ++e.kernelsRun;
  }
  return CUDA_SUCCESS;
}
CUresult drvLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned shared,
                         CUstream stream, void **params, void **extra) {
  return launch(f, gx, gy, gz, bx, by, bz, shared, stream, params, extra);
}
CUresult drvLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
                           void **extra) {
  return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
                c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream,
                params, extra);
}
template <typename T>
CUresult memset(const char *call, CUdeviceptr dst, T value, size_t n,
                CUstream stream) {
  LOCK;
  if (enter(call))
    return CUDA_ERROR_INVALID_VALUE;
  if (!validStream(reinterpret_cast<cudaStream_t>(stream)))
    return CUDA_ERROR_INVALID_HANDLE;
  auto *p = reinterpret_cast<T *>(dst);
  if (!inDevice(p, int64_t(n * sizeof(T)), call))
    return CUDA_ERROR_INVALID_VALUE;
  touch(queue(stream), p, int64_t(n * sizeof(T)), true, call);
  std::fill(p, p + n, value);
  return CUDA_SUCCESS;
}
CUresult drvMemsetD32Async(CUdeviceptr dst, unsigned value, size_t n,
                           CUstream s) {
  return memset<uint32_t>("cuMemsetD32Async", dst, value, n, s);
}
CUresult drvMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t n,
                           CUstream s) {
  return memset<uint16_t>("cuMemsetD16Async", dst, value, n, s);
}

const std::map<std::string, void *> &driverTable() {
  static const std::map<std::string, void *> table = {
      {"cuGetErrorName", reinterpret_cast<void *>(&drvGetErrorName)},
      {"cuGetErrorString", reinterpret_cast<void *>(&drvGetErrorString)},
      {"cuModuleLoadData", reinterpret_cast<void *>(&drvModuleLoadData)},
      {"cuModuleLoadDataEx", reinterpret_cast<void *>(&drvModuleLoadDataEx)},
      {"cuModuleUnload", reinterpret_cast<void *>(&drvModuleUnload)},
      {"cuModuleGetFunction", reinterpret_cast<void *>(&drvModuleGetFunction)},
      {"cuFuncSetAttribute", reinterpret_cast<void *>(&drvFuncSetAttribute)},
      {"cuFuncGetName", reinterpret_cast<void *>(&drvFuncGetName)},
      {"cuLaunchKernel", reinterpret_cast<void *>(&drvLaunchKernel)},
      {"cuLaunchKernelEx", reinterpret_cast<void *>(&drvLaunchKernelEx)},
      {"cuMemsetD32Async", reinterpret_cast<void *>(&drvMemsetD32Async)},
      {"cuMemsetD16Async", reinterpret_cast<void *>(&drvMemsetD16Async)},
  };
  return table;
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

std::string jsonString(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20)
      continue;
    out += c;
  }
  return out + "\"";
}

void writeReport() {
  const char *path = std::getenv("ZERO_CUDA_EMU_REPORT");
  if (!path)
    return;
  Emulator &e = emu();
  std::lock_guard<std::recursive_mutex> lock(e.m);
  int rank = 0, up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (up && !down)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  else if (const char *r = std::getenv("OMPI_COMM_WORLD_RANK"))
    rank = std::atoi(r);
  std::string file = std::string(path) + "." + std::to_string(rank) + ".json";
  FILE *f = std::fopen(file.c_str(), "w");
  if (!f)
    return;
  std::fprintf(f,
               "{\"device\": %d, \"sm\": %d, \"launches\": %lld, \"gemms\": "
               "%lld, \"collectives\": %lld, \"collective_bytes\": %lld, "
               "\"peak_bytes\": %lld, \"live_bytes\": %lld, "
               "\"live_allocations\": %zu, \"computes\": %s, "
               "\"kernels_run\": %lld, \"races\": %lld,\n "
               "\"launches_by_kernel\": {",
               e.device, e.sm, (long long)e.launches, (long long)e.gemms,
               (long long)e.collectives, (long long)e.collectiveBytes,
               (long long)e.peak, (long long)e.used, e.allocations.size(),
               e.computes ? "true" : "false", (long long)e.kernelsRun,
               (long long)e.races);
  auto counts = [&](const std::map<std::string, int64_t> &m) {
    const char *sep = "";
    for (auto &[name, n] : m) {
      std::fprintf(f, "%s%s: %lld", sep, jsonString(name).c_str(),
                   (long long)n);
      sep = ", ";
    }
  };
  counts(e.launchesByKernel);
  std::fprintf(f, "},\n \"calls\": {");
  counts(e.calls);
  std::fprintf(f, "},\n \"violations\": [");
  const char *sep = "";
  for (const std::string &v : e.violations) {
    std::fprintf(f, "%s%s", sep, jsonString(v).c_str());
    sep = ", ";
  }
  std::fprintf(f, "]}\n");
  std::fclose(f);
}

struct ReportAtExit {
  ReportAtExit() { std::atexit(writeReport); }
} reportAtExit;

//===----------------------------------------------------------------------===//
// NCCL over MPI
//===----------------------------------------------------------------------===//

size_t ncclBytes(ncclDataType_t t) {
  switch (t) {
  case ncclInt8:
  case ncclUint8:
    return 1;
  case ncclFloat16:
  case ncclBfloat16:
    return 2;
  case ncclInt32:
  case ncclUint32:
  case ncclFloat32:
    return 4;
  case ncclInt64:
  case ncclUint64:
  case ncclFloat64:
    return 8;
  default:
    return 0;
  }
}

double loadElement(const char *p, ncclDataType_t t) {
  uint16_t h;
  float f;
  double d;
  switch (t) {
  case ncclFloat32:
    std::memcpy(&f, p, 4);
    return f;
  case ncclFloat64:
    std::memcpy(&d, p, 8);
    return d;
  case ncclFloat16:
  case ncclBfloat16:
    std::memcpy(&h, p, 2);
    return t == ncclFloat16 ? zero::rt::f16ToFloat(h)
                            : zero::rt::bf16ToFloat(h);
  default:
    return 0;
  }
}

void storeElement(char *p, ncclDataType_t t, double v) {
  uint16_t h;
  float f = float(v);
  switch (t) {
  case ncclFloat32:
    std::memcpy(p, &f, 4);
    break;
  case ncclFloat64:
    std::memcpy(p, &v, 8);
    break;
  case ncclFloat16:
  case ncclBfloat16:
    h = t == ncclFloat16 ? zero::rt::floatToF16(f) : zero::rt::floatToBF16(f);
    std::memcpy(p, &h, 2);
    break;
  default:
    break;
  }
}

/// Every rank's `bytes` from `send`, rank order.
std::vector<char> gatherAll(Comm *c, const void *send, size_t bytes) {
  std::vector<char> mine(static_cast<const char *>(send),
                         static_cast<const char *>(send) + bytes);
  if (c->mpi == MPI_COMM_NULL)
    return mine;
  std::vector<char> all(bytes * size_t(c->size));
  MPI_Allgather(mine.data(), int(bytes), MPI_BYTE, all.data(), int(bytes),
                MPI_BYTE, c->mpi);
  return all;
}

/// Sums `count` elements of every rank's slice at `offset` of `all` (each
/// rank's block is `block` bytes) in rank order, as the element type
/// rounds after each addition.
void sumInto(const std::vector<char> &all, size_t block, size_t offset,
             size_t count, ncclDataType_t t, char *out, int size) {
  size_t eb = ncclBytes(t);
  for (size_t i = 0; i < count; ++i) {
    double acc = loadElement(all.data() + offset + i * eb, t);
    for (int r = 1; r < size; ++r) {
      char tmp[8];
      storeElement(
          tmp, t,
          acc + loadElement(all.data() + r * block + offset + i * eb, t));
      acc = loadElement(tmp, t);
    }
    storeElement(out + i * eb, t, acc);
  }
}

ncclResult_t collectiveCheck(const char *call, ncclComm_t comm,
                             ncclDataType_t t, cudaStream_t stream,
                             const void *send, size_t sendBytes, void *recv,
                             size_t recvBytes) {
  Emulator &e = emu();
  if (enter(call))
    return ncclSystemError;
  auto *c = reinterpret_cast<Comm *>(comm);
  if (!e.comms.count(c)) {
    violation(std::string(call) + ": unknown communicator");
    return ncclInvalidArgument;
  }
  if (!ncclBytes(t) || !validStream(stream)) {
    violation(std::string(call) + ": bad element type or stream");
    return ncclInvalidArgument;
  }
  if (!inDevice(send, int64_t(sendBytes), std::string(call) + " send") ||
      !inDevice(recv, int64_t(recvBytes), std::string(call) + " receive"))
    return ncclInvalidArgument;
  Work work = queue(stream);
  touch(work, send, int64_t(sendBytes), false, call);
  touch(work, recv, int64_t(recvBytes), true, call);
  ++e.collectives;
  return ncclSuccess;
}

} // namespace

//===----------------------------------------------------------------------===//
// CUDA runtime API
//===----------------------------------------------------------------------===//

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  LOCK;
  enter("cudaGetDeviceCount");
  *count = emu().devices;
  return emu().devices > 0 ? cudaSuccess : fail(cudaErrorNoDevice);
}

cudaError_t cudaSetDevice(int device) {
  LOCK;
  Emulator &e = emu();
  enter("cudaSetDevice");
  if (device < 0 || device >= e.devices)
    return fail(cudaErrorInvalidDevice);
  e.device = device;
  return cudaSuccess;
}

// One bus per device ordinal: processes given the same ordinal share it.
cudaError_t cudaDeviceGetPCIBusId(char *id, int len, int device) {
  LOCK;
  enter("cudaDeviceGetPCIBusId");
  if (device < 0 || device >= emu().devices || !id || len < 13)
    return fail(cudaErrorInvalidValue);
  std::snprintf(id, size_t(len), "0000:%02x:00.0", device + 1);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int *value, cudaDeviceAttr attr,
                                   int device) {
  LOCK;
  Emulator &e = emu();
  if (device < 0 || device >= e.devices)
    return fail(cudaErrorInvalidDevice);
  if (attr == cudaDevAttrComputeCapabilityMajor)
    *value = e.sm / 10;
  else if (attr == cudaDevAttrComputeCapabilityMinor)
    *value = e.sm % 10;
  else
    return fail(cudaErrorInvalidValue);
  return cudaSuccess;
}

cudaError_t
cudaGetDriverEntryPointByVersion(const char *symbol, void **fn, unsigned int,
                                 unsigned long long,
                                 cudaDriverEntryPointQueryResult *status) {
  LOCK;
  auto it = driverTable().find(symbol);
  *fn = it == driverTable().end() ? nullptr : it->second;
  if (status)
    *status =
        *fn ? cudaDriverEntryPointSuccess : cudaDriverEntryPointSymbolNotFound;
  return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t rc) {
  return rc == cudaSuccess ? "no error" : "rejected by the CUDA host emulator";
}

const char *cudaGetErrorName(cudaError_t rc) {
  switch (rc) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorInvalidDevice:
    return "cudaErrorInvalidDevice";
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  default:
    return "cudaErrorUnknown";
  }
}

cudaError_t cudaGetLastError(void) {
  LOCK;
  cudaError_t rc = emu().lastError;
  emu().lastError = cudaSuccess;
  return rc;
}

cudaError_t cudaMalloc(void **ptr, size_t bytes) {
  LOCK;
  if (enter("cudaMalloc")) {
    *ptr = nullptr;
    return fail(cudaErrorMemoryAllocation);
  }
  if (bytes == 0) {
    *ptr = nullptr;
    return cudaSuccess;
  }
  *ptr = allocate(int64_t(bytes));
  return *ptr ? cudaSuccess : fail(cudaErrorMemoryAllocation);
}

cudaError_t cudaMallocManaged(void **ptr, size_t bytes, unsigned int) {
  return cudaMalloc(ptr, bytes);
}

cudaError_t cudaMallocAsync(void **ptr, size_t bytes, cudaStream_t stream) {
  LOCK;
  if (!validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  return cudaMalloc(ptr, bytes);
}

cudaError_t cudaFree(void *ptr) {
  LOCK;
  enter("cudaFree");
  if (!ptr)
    return cudaSuccess;
  if (!release(ptr)) {
    violation("cudaFree: the address is no live device allocation");
    return fail(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaFreeAsync(void *ptr, cudaStream_t stream) {
  LOCK;
  if (!validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  return cudaFree(ptr);
}

cudaError_t cudaMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  LOCK;
  Emulator &e = emu();
  enter("cudaMemGetInfo");
  *totalBytes = size_t(e.memory);
  *freeBytes = size_t(e.memory - e.used);
  return cudaSuccess;
}

cudaError_t cudaHostRegister(void *, size_t, unsigned int) {
  LOCK;
  return enter("cudaHostRegister") ? fail(cudaErrorHostMemoryAlreadyRegistered)
                                   : cudaSuccess;
}
cudaError_t cudaHostUnregister(void *) { return cudaSuccess; }

cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream) {
  LOCK;
  if (enter("cudaMemcpyAsync"))
    return fail(cudaErrorInvalidValue);
  if (!validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  if (bytes == 0)
    return cudaSuccess;
  // Either side may be host memory (cudaMemcpyDefault); a device side
  // must hold all the bytes.
  bool dDev = isDevice(dst), sDev = isDevice(src);
  if ((kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice) &&
      !dDev)
    return violation("cudaMemcpyAsync: the destination is no device memory"),
           fail(cudaErrorInvalidValue);
  if ((kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice) &&
      !sDev)
    return violation("cudaMemcpyAsync: the source is no device memory"),
           fail(cudaErrorInvalidValue);
  if ((dDev && !inDevice(dst, int64_t(bytes), "cudaMemcpyAsync destination")) ||
      (sDev && !inDevice(src, int64_t(bytes), "cudaMemcpyAsync source")))
    return fail(cudaErrorInvalidValue);
  Work work = queue(stream);
  if (sDev)
    touch(work, src, int64_t(bytes), false, "cudaMemcpyAsync");
  if (dDev)
    touch(work, dst, int64_t(bytes), true, "cudaMemcpyAsync");
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes,
                       cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int) {
  LOCK;
  enter("cudaStreamCreate");
  newHandle<char>(emu().streams, stream);
  emu().clocks[*stream] = emu().host;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, 0);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  LOCK;
  if (!stream || !emu().streams.erase(reinterpret_cast<void *>(stream)))
    return fail(cudaErrorInvalidResourceHandle);
  join(emu().host, emu().clocks[stream]); // its work completes first
  emu().clocks.erase(stream);
  prune();
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  LOCK;
  enter("cudaStreamSynchronize");
  if (!validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  if (!stream)
    deviceBarrier();
  else
    join(emu().host, emu().clocks[stream]);
  prune();
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  LOCK;
  deviceBarrier();
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int) {
  LOCK;
  newHandle<Event>(emu().events, event);
  return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  LOCK;
  auto *e = reinterpret_cast<Event *>(event);
  if (!emu().events.erase(e))
    return fail(cudaErrorInvalidResourceHandle);
  delete e;
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  LOCK;
  enter("cudaEventRecord");
  auto *e = reinterpret_cast<Event *>(event);
  if (!emu().events.count(e) || !validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  e->recorded = true;
  e->ms = nowMs();
  if (!stream)
    deviceBarrier();
  e->clock = stream ? emu().clocks[stream] : emu().host;
  return cudaSuccess;
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
                                unsigned int) {
  LOCK;
  enter("cudaStreamWaitEvent");
  auto *e = reinterpret_cast<Event *>(event);
  if (!emu().events.count(e) || !validStream(stream))
    return fail(cudaErrorInvalidResourceHandle);
  // A GPU takes a wait on an event never recorded as done: the work it
  // was to order after would race.
  if (!e->recorded) {
    violation("cudaStreamWaitEvent: the event was never recorded");
    return fail(cudaErrorInvalidValue);
  }
  if (stream) {
    join(emu().clocks[stream], e->clock);
    prune();
  }
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  LOCK;
  auto *e = reinterpret_cast<Event *>(event);
  if (!emu().events.count(e))
    return fail(cudaErrorInvalidResourceHandle);
  join(emu().host, e->clock);
  prune();
  return cudaSuccess;
}

// Done, as all work is: the host saw it complete, so all work queued
// after comes after it (the runtime's watchdog then skips the stream wait).
cudaError_t cudaEventQuery(cudaEvent_t event) {
  return cudaEventSynchronize(event);
}

cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start,
                                 cudaEvent_t end) {
  LOCK;
  auto *a = reinterpret_cast<Event *>(start);
  auto *b = reinterpret_cast<Event *>(end);
  if (!emu().events.count(a) || !emu().events.count(b))
    return fail(cudaErrorInvalidResourceHandle);
  if (!a->recorded || !b->recorded)
    return fail(cudaErrorInvalidResourceHandle);
  *ms = float(b->ms - a->ms);
  return cudaSuccess;
}

/// For zero-cuda-host-emulator-test: the races seen so far.
int64_t zero_cuda_emu_races() {
  LOCK;
  return emu().races;
}

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  LOCK;
  newHandle<char>(emu().blasHandles, handle);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  LOCK;
  return emu().blasHandles.erase(reinterpret_cast<void *>(handle))
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  LOCK;
  if (!emu().blasHandles.count(reinterpret_cast<void *>(handle)) ||
      !validStream(stream))
    return CUBLAS_STATUS_INVALID_VALUE;
  emu().blasStreams[reinterpret_cast<void *>(handle)] = stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
                                     size_t bytes) {
  LOCK;
  if (!emu().blasHandles.count(reinterpret_cast<void *>(handle)))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  return bytes == 0 || inDevice(workspace, int64_t(bytes), "cublasSetWorkspace")
             ? CUBLAS_STATUS_SUCCESS
             : CUBLAS_STATUS_INVALID_VALUE;
}

const char *cublasGetStatusName(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS         ? "CUBLAS_STATUS_SUCCESS"
         : s == CUBLAS_STATUS_INVALID_VALUE ? "CUBLAS_STATUS_INVALID_VALUE"
         : s == CUBLAS_STATUS_NOT_SUPPORTED ? "CUBLAS_STATUS_NOT_SUPPORTED"
         : s == CUBLAS_STATUS_NOT_INITIALIZED
             ? "CUBLAS_STATUS_NOT_INITIALIZED"
             : "CUBLAS_STATUS_EXECUTION_FAILED";
}

const char *cublasGetStatusString(cublasStatus_t s) {
  return s == CUBLAS_STATUS_SUCCESS ? "success"
                                    : "rejected by the CUDA host emulator";
}

} // extern "C"

namespace {
ncclDataType_t ncclTypeOf(cudaDataType t) {
  return t == CUDA_R_32F   ? ncclFloat32
         : t == CUDA_R_64F ? ncclFloat64
         : t == CUDA_R_16F ? ncclFloat16
                           : ncclBfloat16;
}

/// One column-major product C = alpha op(A) op(B) + beta C, summed in the
/// compute type (f32, or f64 for CUBLAS_COMPUTE_64F) and rounded to C's
/// type, as cuBLAS defines it; C is not read when beta is 0.
struct Gemm {
  bool ta, tb;
  int64_t m, n, k;
  bool f64;
  cudaDataType abType, cType;
  int64_t lda, ldb, ldc;

  void run(const void *alpha, const char *A, const char *B, const void *beta,
           char *C) const {
    double al = f64 ? *static_cast<const double *>(alpha)
                    : *static_cast<const float *>(alpha);
    double be = f64 ? *static_cast<const double *>(beta)
                    : *static_cast<const float *>(beta);
    ncclDataType_t at = ncclTypeOf(abType), ct = ncclTypeOf(cType);
    size_t ab = ncclBytes(at), cb = ncclBytes(ct);
    // op(A) by rows and op(B) by columns, k contiguous.
    std::vector<double> a(size_t(m * k)), b(size_t(n * k));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p)
        a[i * k + p] =
            loadElement(A + (ta ? p + i * lda : i + p * lda) * ab, at);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t p = 0; p < k; ++p)
        b[j * k + p] =
            loadElement(B + (tb ? j + p * ldb : p + j * ldb) * ab, at);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < m; ++i) {
        const double *x = &a[i * k], *y = &b[j * k];
        double sum;
        if (f64) {
          sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum += x[p] * y[p];
        } else {
          float s = 0;
          for (int64_t p = 0; p < k; ++p)
            s += float(x[p]) * float(y[p]);
          sum = s;
        }
        char *c = C + (i + j * ldc) * cb;
        double v = al * sum;
        if (be != 0)
          v += be * loadElement(c, ct);
        storeElement(c, ct, f64 ? v : double(float(v)));
      }
  }
};
} // namespace

extern "C" {

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
    int64_t m, int64_t n, int64_t k, const void *alpha, const void *A,
    cudaDataType Atype, int64_t lda, long long strideA, const void *B,
    cudaDataType Btype, int64_t ldb, long long strideB, const void *beta,
    void *C, cudaDataType Ctype, int64_t ldc, long long strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  LOCK;
  Emulator &e = emu();
  if (enter("cublasGemmStridedBatchedEx"))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  if (!e.blasHandles.count(reinterpret_cast<void *>(handle)))
    return CUBLAS_STATUS_NOT_INITIALIZED;
  auto bad = [&](const std::string &why) {
    violation("cublasGemmStridedBatchedEx: " + why);
    return CUBLAS_STATUS_INVALID_VALUE;
  };
  auto bytesOf = [](cudaDataType t) -> int64_t {
    return t == CUDA_R_32F                       ? 4
           : t == CUDA_R_16F || t == CUDA_R_16BF ? 2
           : t == CUDA_R_64F                     ? 8
                                                 : 0;
  };
  if (m < 0 || n < 0 || k < 0 || batchCount < 0 || !alpha || !beta)
    return bad("negative size or no alpha / beta");
  if (Atype != Btype || !bytesOf(Atype) || !bytesOf(Ctype))
    return bad("unsupported operand types");
  // cuBLAS's supported Ex combinations for these types.
  bool okTypes =
      (computeType == CUBLAS_COMPUTE_32F ||
       computeType == CUBLAS_COMPUTE_32F_FAST_TF32)
          ? (Atype == CUDA_R_32F || Atype == CUDA_R_16F ||
             Atype == CUDA_R_16BF) &&
                (Ctype == CUDA_R_32F || Ctype == Atype) &&
                (computeType == CUBLAS_COMPUTE_32F || Atype == CUDA_R_32F)
          : computeType == CUBLAS_COMPUTE_64F && Atype == CUDA_R_64F &&
                Ctype == CUDA_R_64F;
  if (!okTypes)
    return bad("type combination cuBLAS does not support");
  if (m == 0 || n == 0 || batchCount == 0)
    return CUBLAS_STATUS_SUCCESS;
  // Stored shapes (column-major) of A and B.
  int64_t aRows = transa == CUBLAS_OP_N ? m : k,
          aCols = transa == CUBLAS_OP_N ? k : m;
  int64_t bRows = transb == CUBLAS_OP_N ? k : n,
          bCols = transb == CUBLAS_OP_N ? n : k;
  if ((transa != CUBLAS_OP_N && transa != CUBLAS_OP_T) ||
      (transb != CUBLAS_OP_N && transb != CUBLAS_OP_T))
    return bad("an operation other than N or T");
  if (lda < std::max<int64_t>(1, aRows) || ldb < std::max<int64_t>(1, bRows) ||
      ldc < std::max<int64_t>(1, m))
    return bad("leading dimension below the stored rows (lda " +
               std::to_string(lda) + ", ldb " + std::to_string(ldb) + ", ldc " +
               std::to_string(ldc) + " for m " + std::to_string(m) + ", n " +
               std::to_string(n) + ", k " + std::to_string(k) + ")");
  auto extent = [](int64_t rows, int64_t cols, int64_t ld, long long stride,
                   int64_t count) {
    return (cols - 1) * ld + rows + (count - 1) * int64_t(stride);
  };
  if (std::min({strideA, strideB, strideC}) < 0)
    return bad("negative batch stride");
  // The bytes each operand covers, k = 0 reading neither A nor B.
  int64_t aBytes = k > 0 ? extent(aRows, aCols, lda, strideA, batchCount) *
                               bytesOf(Atype)
                         : 0,
          bBytes = k > 0 ? extent(bRows, bCols, ldb, strideB, batchCount) *
                               bytesOf(Btype)
                         : 0,
          cBytes = extent(m, n, ldc, strideC, batchCount) * bytesOf(Ctype);
  if ((k > 0 && (!inDevice(A, aBytes, "cublasGemmStridedBatchedEx A") ||
                 !inDevice(B, bBytes, "cublasGemmStridedBatchedEx B"))) ||
      !inDevice(C, cBytes, "cublasGemmStridedBatchedEx C"))
    return CUBLAS_STATUS_INVALID_VALUE;
  Work work = queue(e.blasStreams[reinterpret_cast<void *>(handle)]);
  touch(work, A, aBytes, false, "cublasGemmStridedBatchedEx A");
  touch(work, B, bBytes, false, "cublasGemmStridedBatchedEx B");
  touch(work, C, cBytes, true, "cublasGemmStridedBatchedEx C");
  if (e.computes) {
    Gemm g{transa == CUBLAS_OP_T,
           transb == CUBLAS_OP_T,
           m,
           n,
           k,
           computeType == CUBLAS_COMPUTE_64F,
           Atype,
           Ctype,
           lda,
           ldb,
           ldc};
    for (int64_t t = 0; t < batchCount; ++t)
      g.run(alpha, static_cast<const char *>(A) + t * strideA * bytesOf(Atype),
            static_cast<const char *>(B) + t * strideB * bytesOf(Btype), beta,
            static_cast<char *>(C) + t * strideC * bytesOf(Ctype));
  }
  ++e.gemms;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t
cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                       cublasOperation_t transb, int64_t m, int64_t n,
                       int64_t k, const void *alpha, const void *const Aarray[],
                       cudaDataType Atype, int64_t lda,
                       const void *const Barray[], cudaDataType Btype,
                       int64_t ldb, const void *beta, void *const Carray[],
                       cudaDataType Ctype, int64_t ldc, int64_t batchCount,
                       cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  LOCK;
  Emulator &e = emu();
  if (enter("cublasGemmBatchedEx"))
    return CUBLAS_STATUS_EXECUTION_FAILED;
  // The pointer arrays are device memory, each product's operands too.
  int64_t bytes = std::max<int64_t>(batchCount, 0) * int64_t(sizeof(void *));
  if (batchCount > 0 &&
      (!inDevice(Aarray, bytes, "cublasGemmBatchedEx A pointers") ||
       !inDevice(Barray, bytes, "cublasGemmBatchedEx B pointers") ||
       !inDevice(Carray, bytes, "cublasGemmBatchedEx C pointers")))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (batchCount > 0) {
    Work work = queue(e.blasStreams[reinterpret_cast<void *>(handle)]);
    touch(work, Aarray, bytes, false, "cublasGemmBatchedEx A pointers");
    touch(work, Barray, bytes, false, "cublasGemmBatchedEx B pointers");
    touch(work, Carray, bytes, false, "cublasGemmBatchedEx C pointers");
  }
  std::set<const void *> cs(Carray, Carray + std::max<int64_t>(batchCount, 0));
  if (int64_t(cs.size()) != std::max<int64_t>(batchCount, 0)) {
    violation("cublasGemmBatchedEx: two products write one C");
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  int64_t before = e.gemms;
  for (int64_t t = 0; t < batchCount; ++t) {
    cublasStatus_t rc = cublasGemmStridedBatchedEx_64(
        handle, transa, transb, m, n, k, alpha, Aarray[t], Atype, lda, 0,
        Barray[t], Btype, ldb, 0, beta, Carray[t], Ctype, ldc, 0, 1,
        computeType, algo);
    if (rc != CUBLAS_STATUS_SUCCESS)
      return rc;
  }
  e.calls["cublasGemmStridedBatchedEx"] -= batchCount;
  e.gemms = before + 1;
  return CUBLAS_STATUS_SUCCESS;
}

//===----------------------------------------------------------------------===//
// NCCL
//===----------------------------------------------------------------------===//

const char *ncclGetErrorString(ncclResult_t rc) {
  return rc == ncclSuccess ? "no error" : "rejected by the CUDA host emulator";
}

const char *ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  LOCK;
  if (enter("ncclGetUniqueId"))
    return ncclSystemError;
  std::memset(id, 0, sizeof(*id));
  std::snprintf(id->internal, sizeof(id->internal), "zero-cuda-emulator");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id,
                              int rank) {
  LOCK;
  if (enter("ncclCommInitRank"))
    return ncclSystemError;
  int up = 0, worldRank = 0, worldSize = 1;
  MPI_Initialized(&up);
  if (up) {
    MPI_Comm_rank(MPI_COMM_WORLD, &worldRank);
    MPI_Comm_size(MPI_COMM_WORLD, &worldSize);
  }
  if (std::strcmp(id.internal, "zero-cuda-emulator") != 0 ||
      nranks != worldSize || rank != worldRank) {
    violation("ncclCommInitRank: rank " + std::to_string(rank) + " of " +
              std::to_string(nranks) + " with " +
              (std::strcmp(id.internal, "zero-cuda-emulator") ? "an id no "
                                                                "rank made"
                                                              : "an id") +
              " (MPI: rank " + std::to_string(worldRank) + " of " +
              std::to_string(worldSize) + ")");
    return ncclInvalidArgument;
  }
  auto *c = new Comm;
  c->rank = rank;
  c->size = nranks;
  if (up)
    MPI_Comm_dup(MPI_COMM_WORLD, &c->mpi);
  emu().comms.insert(c);
  *comm = reinterpret_cast<ncclComm_t>(c);
  return ncclSuccess;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key,
                           ncclComm_t *newcomm, ncclConfig_t *) {
  LOCK;
  auto *parent = reinterpret_cast<Comm *>(comm);
  if (!emu().comms.count(parent))
    return ncclInvalidArgument;
  auto *c = new Comm;
  if (parent->mpi != MPI_COMM_NULL) {
    MPI_Comm_split(parent->mpi, color, key, &c->mpi);
    MPI_Comm_rank(c->mpi, &c->rank);
    MPI_Comm_size(c->mpi, &c->size);
  }
  emu().comms.insert(c);
  *newcomm = reinterpret_cast<ncclComm_t>(c);
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async) {
  LOCK;
  *async = ncclSuccess;
  return emu().comms.count(reinterpret_cast<Comm *>(comm))
             ? ncclSuccess
             : ncclInvalidArgument;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  LOCK;
  return emu().comms.count(reinterpret_cast<Comm *>(comm))
             ? ncclSuccess
             : ncclInvalidArgument;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  LOCK;
  auto *c = reinterpret_cast<Comm *>(comm);
  if (!emu().comms.erase(c))
    return ncclInvalidArgument;
  // Not MPI_Comm_free: it may run after MPI_Finalize.
  delete c;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) { return ncclCommDestroy(comm); }

ncclResult_t ncclAllGather(const void *send, void *recv, size_t count,
                           ncclDataType_t t, ncclComm_t comm,
                           cudaStream_t stream) {
  LOCK;
  auto *c = reinterpret_cast<Comm *>(comm);
  size_t bytes = count * ncclBytes(t);
  size_t size = emu().comms.count(c) ? size_t(c->size) : 1;
  if (ncclResult_t rc = collectiveCheck("ncclAllGather", comm, t, stream, send,
                                        bytes, recv, bytes * size))
    return rc;
  std::vector<char> all = gatherAll(c, send, bytes);
  std::memcpy(recv, all.data(), all.size());
  emu().collectiveBytes += int64_t(bytes * (size - 1));
  return ncclSuccess;
}

} // extern "C"

namespace {
/// A sum over the ranks: every rank's whole buffer (N parts when
/// scattering), rank r keeping part r or all of it.
ncclResult_t reduce(const char *call, const void *send, void *recv,
                    size_t count, ncclDataType_t t, ncclRedOp_t op,
                    ncclComm_t comm, cudaStream_t stream, bool scatter) {
  LOCK;
  auto *c = reinterpret_cast<Comm *>(comm);
  size_t bytes = count * ncclBytes(t);
  size_t size = emu().comms.count(c) ? size_t(c->size) : 1;
  size_t sent = scatter ? bytes * size : bytes;
  if (op != ncclSum)
    return violation(std::string(call) + ": only sums are emulated"),
           ncclInvalidArgument;
  if (ncclResult_t rc =
          collectiveCheck(call, comm, t, stream, send, sent, recv, bytes))
    return rc;
  std::vector<char> all = gatherAll(c, send, sent);
  std::vector<char> out(bytes);
  sumInto(all, sent, scatter ? bytes * size_t(c->rank) : 0, count, t,
          out.data(), c->size);
  std::memcpy(recv, out.data(), bytes);
  // The ring: a reduce-scatter sends (n - 1) / n of its input, an
  // all-reduce twice that, in whole elements (as zero-run counts).
  emu().collectiveBytes +=
      int64_t(scatter ? bytes * (size - 1)
                      : 2 * count * (size - 1) / size * ncclBytes(t));
  return ncclSuccess;
}
} // namespace

extern "C" {

ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count,
                               ncclDataType_t t, ncclRedOp_t op,
                               ncclComm_t comm, cudaStream_t stream) {
  return reduce("ncclReduceScatter", send, recv, count, t, op, comm, stream,
                /*scatter=*/true);
}

ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t t, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return reduce("ncclAllReduce", send, recv, count, t, op, comm, stream,
                /*scatter=*/false);
}

} // extern "C"
