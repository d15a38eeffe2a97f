//===- Files.cpp - writing text files with one-line errors ----------------===//
#include "zero-rt/Files.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

bool zero::rt::writeTextFile(const std::string &path, std::string_view text,
                             std::string &error) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    error = "cannot write " + path + ": " + ec.message();
    return false;
  }
  os << text;
  os.close();
  if (os.has_error()) {
    error = "cannot write " + path + ": " + os.error().message();
    os.clear_error();
    return false;
  }
  return true;
}

bool zero::rt::readJsonFile(const std::string &path, const std::string &format,
                            const std::string &hint, llvm::json::Value &value,
                            std::string &error) {
  auto buf = llvm::MemoryBuffer::getFile(path);
  if (!buf) {
    error = path + ": " + buf.getError().message() + " " + hint;
    return false;
  }
  auto parsed = llvm::json::parse((*buf)->getBuffer());
  if (!parsed) {
    error = path + ": " + llvm::toString(parsed.takeError());
    return false;
  }
  const llvm::json::Object *o = parsed->getAsObject();
  if (!o || o->getString("format") != format) {
    error = path + ": not a " + format + " file";
    return false;
  }
  value = std::move(*parsed);
  return true;
}
