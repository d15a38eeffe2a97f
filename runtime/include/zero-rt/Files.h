//===- Files.h - writing the runtime's and compiler's text files -*- C++ -*-===//
#ifndef ZERO_RT_FILES_H
#define ZERO_RT_FILES_H

#include "llvm/Support/JSON.h"

#include <string>
#include <string_view>

namespace zero::rt {

/// Writes `text` to `path`, replacing what was there. False with a one-line
/// `error` naming the path when it cannot be opened or written (a full disk
/// included), instead of the stream's fatal error.
bool writeTextFile(const std::string &path, std::string_view text,
                   std::string &error);

/// Reads a JSON file whose top level is an object with "format": `format`.
/// False with a one-line `error` naming the path (and `hint` after a
/// missing file's reason).
bool readJsonFile(const std::string &path, const std::string &format,
                  const std::string &hint, llvm::json::Value &value,
                  std::string &error);

} // namespace zero::rt

#endif
