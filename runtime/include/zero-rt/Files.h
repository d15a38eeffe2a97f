//===- Files.h - writing the runtime's and compiler's text files -*- C++ -*-===//
#ifndef ZERO_RT_FILES_H
#define ZERO_RT_FILES_H

#include <string>
#include <string_view>

namespace zero::rt {

/// Writes `text` to `path`, replacing what was there. False with a one-line
/// `error` naming the path when it cannot be opened or written (a full disk
/// included), instead of the stream's fatal error.
bool writeTextFile(const std::string &path, std::string_view text,
                   std::string &error);

} // namespace zero::rt

#endif
