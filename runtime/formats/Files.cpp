//===- Files.cpp - writing text files with one-line errors ----------------===//
#include "zero-rt/Files.h"

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
