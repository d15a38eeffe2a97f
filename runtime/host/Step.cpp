//===- Step.cpp - loading and calling a compiled step ----------*- C++ -*-===//
#include "zero-rt/Step.h"
#include "zero-rt/Runtime.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <algorithm>
#include <dlfcn.h>

using namespace zero::rt;

int64_t BufferSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Step::~Step() {
  if (handle)
    dlclose(handle);
}

static bool parseBuffers(const llvm::json::Array *list, const char *what,
                         std::vector<BufferSpec> &out, std::string &error) {
  if (!list) {
    error = std::string("plan.json: missing '") + what + "'";
    return false;
  }
  for (const llvm::json::Value &v : *list) {
    const llvm::json::Object *o = v.getAsObject();
    BufferSpec spec;
    auto name = o ? o->getString("name") : std::nullopt;
    auto role = o ? o->getString("role") : std::nullopt;
    auto dtype = o ? o->getString("dtype") : std::nullopt;
    const llvm::json::Array *shape = o ? o->getArray("shape") : nullptr;
    if (!name || !role || !dtype || !shape) {
      error = std::string("plan.json: malformed entry in '") + what + "'";
      return false;
    }
    spec.name = name->str();
    spec.role = role->str();
    bool known = false;
    for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16, DType::I8,
                    DType::I16, DType::I32, DType::I64, DType::U8, DType::U16,
                    DType::U32, DType::U64, DType::Bool})
      if (*dtype == dtypeName(t)) {
        spec.dtype = t;
        known = true;
      }
    if (!known) {
      error = "plan.json: unknown dtype '" + dtype->str() + "'";
      return false;
    }
    for (const llvm::json::Value &d : *shape) {
      auto i = d.getAsInteger();
      if (!i || *i < 0) {
        error = "plan.json: bad shape of '" + spec.name + "'";
        return false;
      }
      spec.shape.push_back(*i);
    }
    out.push_back(std::move(spec));
  }
  return true;
}

bool Step::load(const std::string &dir, std::string &error) {
  dir_ = dir;
  std::string planPath = dir + "/plan.json";
  auto buf = llvm::MemoryBuffer::getFile(planPath);
  if (!buf) {
    error = planPath + ": " + buf.getError().message() +
            " (is this a folder written by zero-opt -o?)";
    return false;
  }
  auto json = llvm::json::parse((*buf)->getBuffer());
  if (!json) {
    error = planPath + ": " + llvm::toString(json.takeError());
    return false;
  }
  const llvm::json::Object *plan = json->getAsObject();
  if (!plan || plan->getString("format") != "zero-opt-plan") {
    error = planPath + ": not a zero-opt plan";
    return false;
  }
  if (!parseBuffers(plan->getArray("arguments"), "arguments", args, error) ||
      !parseBuffers(plan->getArray("results"), "results", results_, error))
    return false;
  int64_t abi = plan->getInteger("runtime_abi").value_or(-1);
  if (abi != zero_rt_abi_version()) {
    error = planPath + ": compiled for runtime interface " +
            std::to_string(abi) + ", this zero-run has " +
            std::to_string(zero_rt_abi_version()) + "; recompile the model";
    return false;
  }
  worldSize_ = plan->getInteger("world_size").value_or(1);
  paramsFile = plan->getString("parameters").value_or("").str();
  std::string lib =
      dir + "/" + plan->getString("library").value_or("step.so").str();
  std::string entryName = plan->getString("entry").value_or("").str();
  handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    error = "cannot load " + lib + ": " + dlerror();
    return false;
  }
  entry = reinterpret_cast<void (*)(void **)>(dlsym(handle, entryName.c_str()));
  if (!entry) {
    error = lib + ": no entry '" + entryName + "'";
    return false;
  }
  return true;
}

bool Step::loadParameters(std::vector<Array> &params,
                          std::string &error) const {
  params.clear();
  std::vector<Array> stored;
  if (!paramsFile.empty() && !readNpz(dir_ + "/" + paramsFile, stored, error))
    return false;
  for (const BufferSpec &spec : args) {
    if (spec.role != "parameter")
      continue;
    auto it = std::find_if(stored.begin(), stored.end(),
                           [&](const Array &a) { return a.name == spec.name; });
    if (it == stored.end() || it->dtype != spec.dtype ||
        it->shape != spec.shape) {
      error = dir_ + "/" + paramsFile + ": parameter '" + spec.name +
              "' is missing or has the wrong type or shape";
      return false;
    }
    params.push_back(std::move(*it));
  }
  return true;
}

Array zero::rt::makeArray(const BufferSpec &spec) {
  Array a;
  a.name = spec.name;
  a.dtype = spec.dtype;
  a.shape = spec.shape;
  a.data.assign(spec.bytes(), 0);
  return a;
}
