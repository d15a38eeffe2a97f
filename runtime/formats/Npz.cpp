//===- Npz.cpp - NumPy .npy/.npz reading and writing ----------------------===//
//
// Format reference: numpy/lib/format.py. A .npy file is the magic
// "\x93NUMPY", a version (major, minor), a little-endian header length (2
// bytes in 1.0, 4 bytes in 2.0/3.0), a Python dict literal with the keys
// 'descr', 'fortran_order' and 'shape', then the raw array data.
//
//===----------------------------------------------------------------------===//

#include "zero-rt/Npz.h"

#include <zip.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <set>

// Array data is copied between files and memory without byte swapping.
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "zero-rt's .npy support assumes a little-endian host"
#endif

namespace zero::rt {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
// NumPy itself refuses headers over 10000 bytes by default; anything this
// large is corrupt, and the cap bounds the allocation made for it.
constexpr uint32_t kMaxHeaderLen = 1u << 20;
// NumPy pads headers so the data is 64-byte aligned in the file.
constexpr size_t kDataAlign = 64;
// Deflate cannot expand its input by more than about 1032:1; a larger
// declared ratio means a corrupt directory, and trusting it would make us
// allocate memory the data can never fill.
constexpr uint64_t kMaxDeflateRatio = 1040;

struct DTypeInfo {
  DType dtype;
  size_t size;
  const char *name;
  const char *descr;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::F32, 4, "float32", "<f4"}, {DType::F64, 8, "float64", "<f8"},
    {DType::F16, 2, "float16", "<f2"}, {DType::BF16, 2, "bfloat16", nullptr},
    {DType::I8, 1, "int8", "|i1"},     {DType::I16, 2, "int16", "<i2"},
    {DType::I32, 4, "int32", "<i4"},   {DType::I64, 8, "int64", "<i8"},
    {DType::U8, 1, "uint8", "|u1"},    {DType::U16, 2, "uint16", "<u2"},
    {DType::U32, 4, "uint32", "<u4"},  {DType::U64, 8, "uint64", "<u8"},
    {DType::Bool, 1, "bool", "|b1"},
};

const DTypeInfo *lookup(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return &info;
  return nullptr;
}

std::string str(uint64_t value) { return std::to_string(value); }

/// Renders untrusted text (member names, descrs) on one printable line.
std::string printable(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    out += buf;
  }
  return out;
}

/// Python's repr of a shape tuple: (), (3,), (2, 3).
std::string shapeRepr(const std::vector<int64_t> &shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    out += ",";
  return out + ")";
}

/// Byte size of an array, checked the way NumPy does: dimensions must be
/// non-negative and the product of the non-zero ones (times the item size)
/// must fit in a signed size, even when another dimension is zero.
bool checkedByteSize(const std::vector<int64_t> &shape, size_t itemSize,
                     uint64_t &bytes) {
  uint64_t total = itemSize;
  bool empty = false;
  for (int64_t dim : shape) {
    if (dim < 0)
      return false;
    if (dim == 0) {
      empty = true;
      continue;
    }
    if (__builtin_mul_overflow(total, static_cast<uint64_t>(dim), &total))
      return false;
  }
  if (total > static_cast<uint64_t>(std::numeric_limits<ptrdiff_t>::max()))
    return false;
  bytes = empty ? 0 : total;
  return true;
}

std::string zipErrorString(int code) {
  zip_error_t err;
  zip_error_init_with_code(&err, code);
  std::string msg = zip_error_strerror(&err);
  zip_error_fini(&err);
  return msg;
}

//===----------------------------------------------------------------------===//
// Header parsing
//===----------------------------------------------------------------------===//

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// Parses the subset of Python literal syntax NumPy writes in .npy headers.
/// Only the three known keys are accepted, so no general value parser (and no
/// recursion on untrusted input) is needed.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(NpyHeader &header, std::string &error) {
    bool seenDescr = false, seenFortran = false, seenShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("expected '{'", error);
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key, error))
        return false;
      skipSpace();
      if (!consume(':'))
        return fail("expected ':' after key '" + printable(key) + "'", error);
      skipSpace();
      bool *seen = key == "descr"           ? &seenDescr
                   : key == "fortran_order" ? &seenFortran
                   : key == "shape"         ? &seenShape
                                            : nullptr;
      if (!seen)
        return fail("unexpected key '" + printable(key) + "'", error);
      if (*seen)
        return fail("duplicate key '" + key + "'", error);
      *seen = true;
      bool ok = seen == &seenDescr     ? parseDescr(header.descr, error)
                : seen == &seenFortran ? parseBool(header.fortranOrder, error)
                                       : parseShape(header.shape, error);
      if (!ok)
        return false;
      skipSpace();
      if (consume(','))
        continue;
      if (consume('}'))
        break;
      return fail("expected ',' or '}'", error);
    }
    skipSpace();
    if (pos != text.size())
      return fail("unexpected text after the header dict", error);
    if (!seenDescr)
      return fail("missing key 'descr'", error);
    if (!seenFortran)
      return fail("missing key 'fortran_order'", error);
    if (!seenShape)
      return fail("missing key 'shape'", error);
    return true;
  }

private:
  std::string_view text;
  size_t pos = 0;

  char peek() const { return pos < text.size() ? text[pos] : '\0'; }

  bool consume(char c) {
    if (pos >= text.size() || text[pos] != c)
      return false;
    ++pos;
    return true;
  }

  void skipSpace() {
    while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' ||
                                 text[pos] == '\n' || text[pos] == '\r'))
      ++pos;
  }

  bool fail(const std::string &what, std::string &error) {
    error = "malformed .npy header: " + what + " at offset " + str(pos);
    return false;
  }

  bool parseDescr(std::string &out, std::string &error) {
    // Structured dtypes are written as a list of fields.
    if (peek() == '[' || peek() == '{') {
      error = "structured dtypes are not supported";
      return false;
    }
    return parseString(out, error);
  }

  bool parseString(std::string &out, std::string &error) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return fail("expected a string", error);
    ++pos;
    out.clear();
    while (pos < text.size() && text[pos] != quote) {
      // Escapes never occur in the keys or descrs we accept; keeping the
      // escaped character is enough to find the end of the string.
      if (text[pos] == '\\' && pos + 1 < text.size())
        ++pos;
      out += text[pos++];
    }
    if (!consume(quote))
      return fail("unterminated string", error);
    return true;
  }

  bool parseBool(bool &out, std::string &error) {
    if (text.substr(pos, 4) == "True") {
      out = true;
      pos += 4;
      return true;
    }
    if (text.substr(pos, 5) == "False") {
      out = false;
      pos += 5;
      return true;
    }
    return fail("expected True or False", error);
  }

  bool parseDim(int64_t &out, std::string &error) {
    if (peek() == '-')
      return fail("negative dimension", error);
    if (peek() < '0' || peek() > '9')
      return fail("expected an integer", error);
    uint64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (__builtin_mul_overflow(value, 10u, &value) ||
          __builtin_add_overflow(value, static_cast<unsigned>(peek() - '0'),
                                 &value) ||
          value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        return fail("dimension too large", error);
      ++pos;
    }
    // Python 2 wrote longs with an 'L' suffix.
    if (peek() == 'L' || peek() == 'l')
      ++pos;
    out = static_cast<int64_t>(value);
    return true;
  }

  bool parseShape(std::vector<int64_t> &shape, std::string &error) {
    shape.clear();
    if (!consume('('))
      return fail("expected '(' for shape", error);
    skipSpace();
    if (consume(')'))
      return true;
    while (true) {
      int64_t dim;
      if (!parseDim(dim, error))
        return false;
      shape.push_back(dim);
      skipSpace();
      if (consume(')'))
        return true;
      if (!consume(','))
        return fail("expected ',' or ')' in shape", error);
      skipSpace();
      if (consume(')'))
        return true;
    }
  }
};

/// Explains why a descr is not supported, for the error message.
std::string unsupportedDescr(const std::string &descr) {
  std::string shown = "'" + printable(descr) + "'";
  if (!descr.empty() && descr[0] == '>' && descr.size() >= 3 &&
      descr.substr(2) != "1")
    return "big-endian dtype " + shown + " is not supported";
  if (descr.size() >= 2 && descr[1] == 'O')
    return "object arrays (dtype " + shown + ") are not supported";
  if (descr.size() >= 2 && descr[1] == 'V')
    return "structured/void dtype " + shown + " is not supported";
  return "unsupported dtype " + shown;
}

/// Reorders column-major (Fortran) data into row-major order.
void fortranToC(std::vector<uint8_t> &data, const std::vector<int64_t> &shape,
                size_t itemSize) {
  size_t rank = shape.size();
  if (rank < 2 || data.empty())
    return;
  std::vector<uint8_t> out(data.size());
  std::vector<uint64_t> fStride(rank);
  uint64_t stride = 1;
  for (size_t k = 0; k < rank; ++k) {
    fStride[k] = stride;
    stride *= static_cast<uint64_t>(shape[k]);
  }
  std::vector<int64_t> index(rank, 0);
  uint64_t src = 0;
  size_t count = data.size() / itemSize;
  for (size_t dst = 0; dst < count; ++dst) {
    std::memcpy(out.data() + dst * itemSize, data.data() + src * itemSize,
                itemSize);
    // Advance the row-major index, last dimension fastest.
    for (size_t k = rank; k-- > 0;) {
      if (++index[k] < shape[k]) {
        src += fStride[k];
        break;
      }
      src -= fStride[k] * static_cast<uint64_t>(shape[k] - 1);
      index[k] = 0;
    }
  }
  data.swap(out);
}

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// A sequential byte stream: a memory buffer, a file or a zip member.
class ByteReader {
public:
  virtual ~ByteReader() = default;
  /// Reads up to `size` bytes; fewer only at the end of the input. Returns -1
  /// and sets `error` on an I/O error.
  virtual int64_t read(void *dst, uint64_t size, std::string &error) = 0;
};

class MemoryReader : public ByteReader {
public:
  MemoryReader(const void *data, size_t size)
      : data(static_cast<const uint8_t *>(data)), size(size) {}
  int64_t read(void *dst, uint64_t want, std::string &) override {
    uint64_t n = std::min<uint64_t>(want, size - pos);
    if (n)
      std::memcpy(dst, data + pos, n);
    pos += n;
    return static_cast<int64_t>(n);
  }

private:
  const uint8_t *data;
  size_t size;
  size_t pos = 0;
};

class FileReader : public ByteReader {
public:
  explicit FileReader(std::FILE *file) : file(file) {}
  int64_t read(void *dst, uint64_t want, std::string &error) override {
    size_t n = std::fread(dst, 1, want, file);
    if (n < want && std::ferror(file)) {
      error = std::strerror(errno);
      return -1;
    }
    return static_cast<int64_t>(n);
  }

private:
  std::FILE *file;
};

class ZipReader : public ByteReader {
public:
  explicit ZipReader(zip_file_t *file) : file(file) {}
  int64_t read(void *dst, uint64_t want, std::string &error) override {
    uint64_t done = 0;
    while (done < want) {
      zip_int64_t n =
          zip_fread(file, static_cast<uint8_t *>(dst) + done, want - done);
      if (n < 0) {
        error = zip_file_strerror(file);
        return -1;
      }
      if (n == 0)
        break;
      done += static_cast<uint64_t>(n);
    }
    return static_cast<int64_t>(done);
  }

private:
  zip_file_t *file;
};

/// A parsed .npy header: the data's type, shape, offset in the image and
/// size.
struct NpyLayout {
  DType dtype = DType::F32;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
  uint64_t dataOffset = 0, bytes = 0;
};

/// Reads the header of a .npy image of `total` bytes, leaving `reader` at
/// its data, and checks the data's size against `total`.
bool readNpyHeaderFrom(ByteReader &reader, uint64_t total,
                       const std::string &context, NpyLayout &layout,
                       std::string &error) {
  auto fail = [&](const std::string &what) {
    error = context + ": " + what;
    return false;
  };
  auto readExactly = [&](void *dst, uint64_t size, uint64_t &got) {
    std::string ioError;
    int64_t n = reader.read(dst, size, ioError);
    if (n < 0) {
      error = context + ": read error: " + ioError;
      return false;
    }
    got = static_cast<uint64_t>(n);
    return true;
  };

  // Magic and version.
  uint8_t preamble[12];
  uint64_t got;
  if (!readExactly(preamble, std::min<uint64_t>(total, 8), got))
    return false;
  if (std::memcmp(preamble, kMagic, std::min<uint64_t>(got, kMagicLen)) != 0)
    return fail("not a .npy file (bad magic)");
  if (got < 8)
    return fail("truncated .npy header (file is only " + str(got) + " bytes)");
  unsigned major = preamble[6], minor = preamble[7];
  if (major < 1 || major > 3 || minor != 0)
    return fail("unsupported .npy format version " + str(major) + "." +
                str(minor));

  // Header length: 2 bytes in version 1.0, 4 bytes later.
  size_t lenBytes = major == 1 ? 2 : 4;
  uint64_t prefixLen = 8 + lenBytes;
  if (total < prefixLen)
    return fail("truncated .npy header (file is only " + str(total) +
                " bytes)");
  if (!readExactly(preamble + 8, lenBytes, got))
    return false;
  if (got < lenBytes)
    return fail("truncated .npy header");
  uint32_t headerLen = 0;
  for (size_t i = 0; i < lenBytes; ++i)
    headerLen |= static_cast<uint32_t>(preamble[8 + i]) << (8 * i);
  if (headerLen > kMaxHeaderLen)
    return fail("header too large (" + str(headerLen) + " bytes)");
  if (total - prefixLen < headerLen)
    return fail("truncated header (expected " + str(headerLen) +
                " bytes, found " + str(total - prefixLen) + ")");

  std::string headerText(headerLen, '\0');
  if (!readExactly(headerText.data(), headerLen, got))
    return false;
  if (got < headerLen)
    return fail("truncated header (expected " + str(headerLen) +
                " bytes, found " + str(got) + ")");

  NpyHeader header;
  std::string parseError;
  if (!HeaderParser(headerText).parse(header, parseError))
    return fail(parseError);
  std::optional<DType> dtype = dtypeFromNumpyDescr(header.descr);
  if (!dtype)
    return fail(unsupportedDescr(header.descr));
  size_t item = itemSize(*dtype);
  uint64_t bytes;
  if (!checkedByteSize(header.shape, item, bytes))
    return fail("shape " + shapeRepr(header.shape) + " of " +
                dtypeName(*dtype) + " is too large");

  // Compare with the known input size before allocating, so a corrupt shape
  // cannot make us allocate more than the input holds.
  uint64_t available = total - prefixLen - headerLen;
  if (available < bytes)
    return fail("truncated data (expected " + str(bytes) + " bytes, found " +
                str(available) + ")");
  if (available > bytes)
    return fail("data size does not match shape " + shapeRepr(header.shape) +
                " (expected " + str(bytes) + " bytes, found " + str(available) +
                ")");

  layout.dtype = *dtype;
  layout.fortranOrder = header.fortranOrder;
  layout.shape = std::move(header.shape);
  layout.dataOffset = prefixLen + headerLen;
  layout.bytes = bytes;
  return true;
}

/// Reads one .npy image of `total` bytes. `context` prefixes error messages.
bool readNpyFrom(ByteReader &reader, uint64_t total, const std::string &context,
                 Array &array, std::string &error) {
  NpyLayout layout;
  if (!readNpyHeaderFrom(reader, total, context, layout, error))
    return false;
  auto fail = [&](const std::string &what) {
    error = context + ": " + what;
    return false;
  };
  uint64_t bytes = layout.bytes, got = 0;
  std::vector<uint8_t> data(bytes);
  std::string ioError;
  int64_t n = reader.read(data.data(), bytes, ioError);
  if (n < 0)
    return fail("read error: " + ioError);
  got = static_cast<uint64_t>(n);
  if (got < bytes)
    return fail("truncated data (expected " + str(bytes) + " bytes, found " +
                str(got) + ")");
  if (layout.fortranOrder)
    fortranToC(data, layout.shape, itemSize(layout.dtype));

  array.dtype = layout.dtype;
  array.shape = std::move(layout.shape);
  array.data = std::move(data);
  return true;
}

struct FileCloser {
  void operator()(std::FILE *file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

struct ZipDiscarder {
  void operator()(zip_t *archive) const { zip_discard(archive); }
};
using ZipPtr = std::unique_ptr<zip_t, ZipDiscarder>;

struct ZipFileCloser {
  void operator()(zip_file_t *file) const { zip_fclose(file); }
};
using ZipFilePtr = std::unique_ptr<zip_file_t, ZipFileCloser>;

/// Opens the archive at `path` for reading; `size` is the file's, which
/// bounds what its directory may claim.
bool openArchive(const std::string &path, ZipPtr &archive, uint64_t &size,
                 std::string &error) {
  // stat first: it gives a precise reason for a missing file.
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  int code = 0;
  archive.reset(zip_open(path.c_str(), ZIP_RDONLY, &code));
  if (!archive) {
    error = path + ": cannot open archive: " + zipErrorString(code);
    return false;
  }
  size = static_cast<uint64_t>(st.st_size);
  return true;
}

/// Checks member `i`'s directory entry against an archive of
/// `archiveSize` bytes; sets its stat and its name in error messages.
bool statMember(zip_t *archive, zip_int64_t i, uint64_t archiveSize,
                const std::string &context, zip_stat_t &st, std::string &member,
                std::string &memberContext, std::string &error) {
  zip_stat_init(&st);
  if (zip_stat_index(archive, i, 0, &st) != 0) {
    error = context + ": cannot read entry " + str(i) + ": " +
            zip_strerror(archive);
    return false;
  }
  member = (st.valid & ZIP_STAT_NAME) && st.name ? st.name : "entry " + str(i);
  memberContext = context + ": member '" + printable(member) + "'";
  auto fail = [&](const std::string &what) {
    error = memberContext + ": " + what;
    return false;
  };
  const zip_uint64_t needed =
      ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
  if ((st.valid & needed) != needed)
    return fail("sizes missing from the archive directory");
  if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) &&
      st.encryption_method != ZIP_EM_NONE)
    return fail("encrypted members are not supported");
  if (st.comp_size > archiveSize)
    return fail("compressed size " + str(st.comp_size) +
                " exceeds the archive size " + str(archiveSize));
  if (st.comp_method == ZIP_CM_STORE) {
    if (st.size != st.comp_size)
      return fail("stored member has inconsistent sizes (" + str(st.size) +
                  " vs " + str(st.comp_size) + ")");
  } else if (st.comp_method == ZIP_CM_DEFLATE) {
    if (st.size / kMaxDeflateRatio > st.comp_size)
      return fail("implausible uncompressed size " + str(st.size) + " for " +
                  str(st.comp_size) + " compressed bytes");
  } else {
    return fail("unsupported compression method " + str(st.comp_method));
  }
  return true;
}

/// A member name without its ".npy".
std::string arrayName(std::string member) {
  constexpr std::string_view suffix = ".npy";
  if (member.size() > suffix.size() &&
      member.compare(member.size() - suffix.size(), suffix.size(), suffix) == 0)
    member.resize(member.size() - suffix.size());
  return member;
}

/// Reads every member of an open archive. `archiveSize` bounds the sizes the
/// directory may claim.
bool readArchive(zip_t *archive, uint64_t archiveSize,
                 const std::string &context, std::vector<Array> &arrays,
                 std::string &error) {
  zip_int64_t count = zip_get_num_entries(archive, 0);
  if (count < 0) {
    error = context + ": cannot read archive directory";
    return false;
  }
  std::vector<Array> result;
  result.reserve(static_cast<size_t>(count));
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    std::string member, memberContext;
    if (!statMember(archive, i, archiveSize, context, st, member, memberContext,
                    error))
      return false;
    auto fail = [&](const std::string &what) {
      error = memberContext + ": " + what;
      return false;
    };

    ZipFilePtr file(zip_fopen_index(archive, i, 0));
    if (!file)
      return fail(std::string("cannot open: ") + zip_strerror(archive));
    ZipReader reader(file.get());
    Array array;
    if (!readNpyFrom(reader, st.size, memberContext, array, error))
      return false;
    // Reading to the end makes libzip verify the member's CRC.
    uint8_t extra;
    std::string ioError;
    int64_t n = reader.read(&extra, 1, ioError);
    if (n < 0)
      return fail("read error: " + ioError);
    if (n > 0)
      return fail("member is longer than its declared size " + str(st.size));

    array.name = arrayName(std::move(member));
    result.push_back(std::move(array));
  }
  arrays = std::move(result);
  return true;
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

ArrayView view(const Array &a) {
  return {a.name, a.dtype, a.shape, a.data.data(), a.data.size(), false, {}};
}

/// Checks that the array can be written and builds its .npy header (magic
/// through the padded dict).
bool buildNpyHeader(const ArrayView &array, const std::string &context,
                    std::string &header, std::string &error) {
  auto fail = [&](const std::string &what) {
    error = context + ": " + what;
    return false;
  };
  const DTypeInfo *info = lookup(array.dtype);
  if (!info)
    return fail("invalid dtype value " +
                std::to_string(static_cast<int>(array.dtype)));
  if (!info->descr)
    return fail(std::string("dtype ") + info->name +
                " has no NumPy equivalent and cannot be written");
  uint64_t bytes;
  if (!checkedByteSize(array.shape, info->size, bytes))
    return fail("invalid shape " + shapeRepr(array.shape));
  if (array.size != bytes)
    return fail("data size does not match shape " + shapeRepr(array.shape) +
                " of " + info->name + " (expected " + str(bytes) +
                " bytes, found " + str(array.size) + ")");

  std::string dict =
      std::string("{'descr': '") + info->descr +
      "', 'fortran_order': False, 'shape': " + shapeRepr(array.shape) + ", }";
  unsigned major = 1;
  size_t lenBytes = 2;
  auto paddedLen = [&] {
    size_t unpadded = kMagicLen + 2 + lenBytes + dict.size() + 1;
    return dict.size() + 1 + (kDataAlign - unpadded % kDataAlign) % kDataAlign;
  };
  // Version 2.0 only when the header does not fit the 1.0 length field.
  if (paddedLen() > 0xffff) {
    major = 2;
    lenBytes = 4;
  }
  size_t headerLen = paddedLen();
  if (headerLen > kMaxHeaderLen)
    return fail("too many dimensions (" + str(array.shape.size()) + ")");
  header.assign(kMagic, kMagicLen);
  header += static_cast<char>(major);
  header += '\0';
  for (size_t i = 0; i < lenBytes; ++i)
    header += static_cast<char>((headerLen >> (8 * i)) & 0xff);
  header += dict;
  header.append(headerLen - dict.size() - 1, ' ');
  header += '\n';
  return true;
}

struct Chunk {
  const void *data;
  size_t size;
};

/// Flushes a written file to disk, so the rename that publishes it cannot be
/// persisted before its contents.
bool syncFile(const std::string &path, std::string &error) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    error = std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    return false;
  }
  ::close(fd);
  return true;
}

/// Moves a complete temporary file over the destination.
bool publish(const std::string &tmp, const std::string &path,
             std::string &error) {
  std::string reason;
  if (!syncFile(tmp, reason)) {
    error = path + ": cannot sync '" + tmp + "': " + reason;
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = path + ": cannot rename '" + tmp + "': " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

/// Writes the chunks to "<path>.tmp", then renames it to <path>.
bool writeFileAtomic(const std::string &path, const std::vector<Chunk> &chunks,
                     std::string &error) {
  std::string tmp = path + ".tmp";
  FilePtr file(std::fopen(tmp.c_str(), "wb"));
  if (!file) {
    error = path + ": cannot create '" + tmp + "': " + std::strerror(errno);
    return false;
  }
  for (const Chunk &chunk : chunks) {
    if (chunk.size &&
        std::fwrite(chunk.data, 1, chunk.size, file.get()) != chunk.size) {
      error = path + ": write error: " + std::strerror(errno);
      file.reset();
      std::remove(tmp.c_str());
      return false;
    }
  }
  // fclose reports buffered write errors (e.g. a full disk).
  if (std::fclose(file.release()) != 0) {
    error = path + ": write error: " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return publish(tmp, path, error);
}

/// libzip source streaming a .npy member from its header and the caller's
/// array data, so members are not copied into a second buffer.
struct MemberSource {
  std::string header;
  const uint8_t *data;
  uint64_t dataSize;
  /// Non-zero: `data` holds one element of this many bytes, repeated.
  uint64_t splatSize = 0;
  /// Set: the data comes from this callback instead of `data`.
  std::function<bool(uint64_t, void *, size_t, std::string &)> read;
  /// Where a failed `read` leaves its message, for writeNpz's error.
  std::string *readError = nullptr;
  uint64_t pos = 0;
  zip_error_t error;
};

zip_int64_t memberSourceCallback(void *userdata, void *data, zip_uint64_t len,
                                 zip_source_cmd_t cmd) {
  auto *source = static_cast<MemberSource *>(userdata);
  uint64_t total = source->header.size() + source->dataSize;
  switch (cmd) {
  case ZIP_SOURCE_OPEN:
    source->pos = 0;
    return 0;
  case ZIP_SOURCE_READ: {
    auto *out = static_cast<uint8_t *>(data);
    uint64_t done = 0;
    while (done < len && source->pos < total) {
      uint64_t pos = source->pos;
      uint64_t n;
      if (pos < source->header.size()) {
        n = std::min<uint64_t>(len - done, source->header.size() - pos);
        std::memcpy(out + done, source->header.data() + pos, n);
      } else {
        uint64_t offset = pos - source->header.size();
        n = std::min<uint64_t>(len - done, source->dataSize - offset);
        if (source->read) {
          if (!source->read(offset, out + done, n, *source->readError)) {
            zip_error_set(&source->error, ZIP_ER_READ, EIO);
            return -1;
          }
        } else if (uint64_t k = source->splatSize) {
          // One period in this chunk's phase, then doubled.
          uint8_t *chunk = out + done;
          uint64_t filled = std::min(n, k);
          for (uint64_t i = 0; i < filled; ++i)
            chunk[i] = source->data[(offset + i) % k];
          while (filled < n) {
            uint64_t c = std::min(filled, n - filled);
            std::memcpy(chunk + filled, chunk, c);
            filled += c;
          }
        } else {
          std::memcpy(out + done, source->data + offset, n);
        }
      }
      done += n;
      source->pos += n;
    }
    return static_cast<zip_int64_t>(done);
  }
  case ZIP_SOURCE_CLOSE:
    return 0;
  case ZIP_SOURCE_STAT: {
    zip_stat_t *st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &source->error);
    if (!st)
      return -1;
    zip_stat_init(st);
    // A known size lets libzip choose zip64 records up front.
    st->valid |= ZIP_STAT_SIZE;
    st->size = total;
    return sizeof(*st);
  }
  case ZIP_SOURCE_ERROR:
    return zip_error_to_data(&source->error, data, len);
  case ZIP_SOURCE_FREE:
    zip_error_fini(&source->error);
    delete source;
    return 0;
  case ZIP_SOURCE_SUPPORTS:
    return ZIP_SOURCE_SUPPORTS_READABLE |
           ZIP_SOURCE_MAKE_COMMAND_BITMASK(ZIP_SOURCE_SUPPORTS);
  default:
    zip_error_set(&source->error, ZIP_ER_OPNOTSUPP, 0);
    return -1;
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

size_t itemSize(DType dtype) {
  const DTypeInfo *info = lookup(dtype);
  return info ? info->size : 0;
}

const char *dtypeName(DType dtype) {
  const DTypeInfo *info = lookup(dtype);
  return info ? info->name : "invalid";
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (const DTypeInfo &info : kDTypes)
    if (name == info.name)
      return info.dtype;
  return std::nullopt;
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string t = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    t += (i ? ", " : "") + std::to_string(shape[i]);
  return t + "]";
}

const char *numpyDescr(DType dtype) {
  const DTypeInfo *info = lookup(dtype);
  return info ? info->descr : nullptr;
}

std::optional<DType> dtypeFromNumpyDescr(std::string_view descr) {
  if (descr.size() != 3)
    return std::nullopt;
  char order = descr[0];
  for (const DTypeInfo &info : kDTypes) {
    if (!info.descr || descr.substr(1) != std::string_view(info.descr + 1))
      continue;
    // Byte order is irrelevant for single bytes; NumPy writes '|' there.
    if (order == '<' ||
        (info.size == 1 && (order == '|' || order == '=' || order == '>')))
      return info.dtype;
    return std::nullopt;
  }
  return std::nullopt;
}

int64_t Array::numel() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      return -1;
  return count;
}

bool parseNpy(const void *data, size_t size, Array &array, std::string &error,
              const std::string &context) {
  MemoryReader reader(data, size);
  Array result;
  if (!readNpyFrom(reader, size, context, result, error))
    return false;
  result.name = std::move(array.name);
  array = std::move(result);
  return true;
}

bool readNpy(const std::string &path, Array &array, std::string &error) {
  FilePtr file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (::fstat(::fileno(file.get()), &st) != 0) {
    error = path + ": cannot stat: " + std::strerror(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    error = path + ": not a regular file";
    return false;
  }
  FileReader reader(file.get());
  Array result;
  if (!readNpyFrom(reader, static_cast<uint64_t>(st.st_size), path, result,
                   error))
    return false;
  size_t slash = path.find_last_of('/');
  result.name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (result.name.size() > 4 &&
      result.name.compare(result.name.size() - 4, 4, ".npy") == 0)
    result.name.resize(result.name.size() - 4);
  array = std::move(result);
  return true;
}

bool serializeNpy(const Array &array, std::vector<uint8_t> &out,
                  std::string &error, const std::string &context) {
  std::string header;
  if (!buildNpyHeader(view(array), context, header, error))
    return false;
  out.assign(header.begin(), header.end());
  out.insert(out.end(), array.data.begin(), array.data.end());
  return true;
}

bool writeNpy(const std::string &path, const Array &array, std::string &error) {
  std::string header;
  if (!buildNpyHeader(view(array), path, header, error))
    return false;
  return writeFileAtomic(
      path,
      {{header.data(), header.size()}, {array.data.data(), array.data.size()}},
      error);
}

bool readNpz(const std::string &path, std::vector<Array> &arrays,
             std::string &error) {
  ZipPtr archive;
  uint64_t size = 0;
  if (!openArchive(path, archive, size, error))
    return false;
  return readArchive(archive.get(), size, path, arrays, error);
}

bool parseNpz(const void *data, size_t size, std::vector<Array> &arrays,
              std::string &error, const std::string &context) {
  // libzip treats an empty buffer as an empty archive; NumPy does not.
  if (size == 0) {
    error = context + ": cannot open archive: empty input";
    return false;
  }
  zip_error_t zipError;
  zip_error_init(&zipError);
  zip_source_t *source = zip_source_buffer_create(data, size, 0, &zipError);
  if (!source) {
    error = context + ": cannot open archive: " + zip_error_strerror(&zipError);
    zip_error_fini(&zipError);
    return false;
  }
  ZipPtr archive(zip_open_from_source(source, ZIP_RDONLY, &zipError));
  if (!archive) {
    error = context + ": cannot open archive: " + zip_error_strerror(&zipError);
    zip_error_fini(&zipError);
    zip_source_free(source);
    return false;
  }
  zip_error_fini(&zipError);
  return readArchive(archive.get(), size, context, arrays, error);
}

bool writeNpz(const std::string &path, const std::vector<Array> &arrays,
              std::string &error) {
  std::vector<ArrayView> views;
  views.reserve(arrays.size());
  for (const Array &a : arrays)
    views.push_back(view(a));
  return writeNpz(path, views, error);
}

bool writeNpz(const std::string &path, const std::vector<ArrayView> &arrays,
              std::string &error) {
  // Validate everything before touching the file system.
  std::vector<std::string> headers(arrays.size());
  std::set<std::string> names;
  for (size_t i = 0; i < arrays.size(); ++i) {
    const std::string &name = arrays[i].name;
    if (name.empty()) {
      error = path + ": array " + str(i) + " has an empty name";
      return false;
    }
    std::string memberContext = path + ": member '" + printable(name) + ".npy'";
    if (name.find('\0') != std::string::npos) {
      error = memberContext + ": name contains a NUL character";
      return false;
    }
    if (!names.insert(name).second) {
      error = memberContext + ": duplicate array name";
      return false;
    }
    if (!buildNpyHeader(arrays[i], memberContext, headers[i], error))
      return false;
  }

  // libzip does not create a file for an archive without members, but
  // np.savez() does write one: the bare end-of-central-directory record.
  if (arrays.empty()) {
    static const char emptyZip[22] = {'P', 'K', 5, 6};
    return writeFileAtomic(path, {{emptyZip, sizeof(emptyZip)}}, error);
  }

  std::string tmp = path + ".tmp";
  std::string readError;
  int code = 0;
  ZipPtr archive(zip_open(tmp.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
  if (!archive) {
    error = path + ": cannot create '" + tmp + "': " + zipErrorString(code);
    return false;
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    std::string member = arrays[i].name + ".npy";
    auto *state = new MemberSource;
    state->header = std::move(headers[i]);
    state->data = static_cast<const uint8_t *>(arrays[i].data);
    state->dataSize = arrays[i].size;
    state->splatSize = arrays[i].splat ? arrays[i].itemSize() : 0;
    state->read = arrays[i].read;
    state->readError = &readError;
    zip_error_init(&state->error);
    zip_source_t *source =
        zip_source_function(archive.get(), memberSourceCallback, state);
    if (!source) {
      zip_error_fini(&state->error);
      delete state;
      error = path + ": member '" + printable(member) +
              "': " + zip_strerror(archive.get());
      return false;
    }
    zip_int64_t index =
        zip_file_add(archive.get(), member.c_str(), source, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(source);
      error = path + ": member '" + printable(member) +
              "': " + zip_strerror(archive.get());
      return false;
    }
    if (zip_set_file_compression(archive.get(), index, ZIP_CM_STORE, 0) != 0) {
      error = path + ": member '" + printable(member) +
              "': " + zip_strerror(archive.get());
      return false;
    }
  }
  if (zip_close(archive.get()) != 0) {
    error = readError.empty() ? path + ": cannot write '" + tmp +
                                    "': " + zip_strerror(archive.get())
                              : readError;
    std::remove(tmp.c_str());
    return false;
  }
  archive.release(); // zip_close freed it.
  return publish(tmp, path, error);
}

//===----------------------------------------------------------------------===//
// Random access
//===----------------------------------------------------------------------===//

struct NpzReader::Impl {
  ZipPtr archive;
  /// Per member: its index in the archive, where its data starts in the
  /// member, and whether it is stored (seekable).
  std::vector<zip_int64_t> index;
  std::vector<uint64_t> dataOffset;
  std::vector<bool> stored, fortran;
  bool wholeFortran = false;
};

NpzReader::NpzReader() = default;
NpzReader::~NpzReader() = default;

bool NpzReader::open(const std::string &path, std::string &error) {
  path_ = path;
  members_.clear();
  impl = std::make_unique<Impl>();
  uint64_t size = 0;
  if (!openArchive(path, impl->archive, size, error))
    return false;
  zip_t *archive = impl->archive.get();
  zip_int64_t count = zip_get_num_entries(archive, 0);
  if (count < 0) {
    error = path + ": cannot read archive directory";
    return false;
  }
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t zs;
    std::string member, memberContext;
    if (!statMember(archive, i, size, path, zs, member, memberContext, error))
      return false;
    ZipFilePtr file(zip_fopen_index(archive, i, 0));
    if (!file) {
      error = memberContext + ": cannot open: " + zip_strerror(archive);
      return false;
    }
    ZipReader reader(file.get());
    NpyLayout layout;
    if (!readNpyHeaderFrom(reader, zs.size, memberContext, layout, error))
      return false;
    if (zs.size != layout.dataOffset + layout.bytes) {
      error = memberContext + ": data size does not match its shape";
      return false;
    }
    members_.push_back(
        {arrayName(member), layout.dtype, layout.shape, layout.bytes});
    impl->index.push_back(i);
    impl->dataOffset.push_back(layout.dataOffset);
    impl->stored.push_back(zs.comp_method == ZIP_CM_STORE);
    impl->fortran.push_back(layout.fortranOrder);
  }
  return true;
}

const NpzReader::Member *NpzReader::find(const std::string &name) const {
  for (const Member &m : members_)
    if (m.name == name)
      return &m;
  return nullptr;
}

bool NpzReader::read(const Member &m, uint64_t offset, void *out, size_t len,
                     std::string &error) {
  size_t k = &m - members_.data();
  std::string context = path_ + ": member '" + printable(m.name) + ".npy'";
  if (k >= members_.size() || offset > m.bytes || len > m.bytes - offset) {
    error = context + ": read past the end of the array";
    return false;
  }
  // readArray reorders a whole Fortran-ordered array; parts cannot be.
  if (impl->fortran[k] && m.shape.size() > 1 && !impl->wholeFortran) {
    error = context + ": a Fortran-ordered array cannot be read in parts";
    return false;
  }
  zip_t *archive = impl->archive.get();
  ZipFilePtr file(zip_fopen_index(archive, impl->index[k], 0));
  if (!file) {
    error = context + ": cannot open: " + zip_strerror(archive);
    return false;
  }
  uint64_t start = impl->dataOffset[k] + offset;
  ZipReader reader(file.get());
  std::string ioError;
  if (impl->stored[k]) {
    if (zip_fseek(file.get(), zip_int64_t(start), SEEK_SET) != 0) {
      error = context + ": cannot seek: " + zip_file_strerror(file.get());
      return false;
    }
  } else {
    // Deflated data is read up to the offset.
    std::vector<uint8_t> skip(std::min<uint64_t>(start, 1 << 20));
    for (uint64_t left = start; left > 0;) {
      uint64_t n = std::min<uint64_t>(left, skip.size());
      if (reader.read(skip.data(), n, ioError) != int64_t(n)) {
        error = context + ": read error: " + ioError;
        return false;
      }
      left -= n;
    }
  }
  int64_t got = reader.read(out, len, ioError);
  if (got != int64_t(len)) {
    error =
        context + ": " +
        (got < 0 ? "read error: " + ioError : std::string("truncated data"));
    return false;
  }
  return true;
}

bool NpzReader::readArray(const Member &m, Array &out, std::string &error) {
  Array a;
  a.name = m.name;
  a.dtype = m.dtype;
  a.shape = m.shape;
  a.data.resize(m.bytes);
  impl->wholeFortran = true;
  bool ok = read(m, 0, a.data.data(), m.bytes, error);
  impl->wholeFortran = false;
  if (!ok)
    return false;
  size_t k = &m - members_.data();
  if (impl->fortran[k])
    fortranToC(a.data, a.shape, a.itemSize());
  out = std::move(a);
  return true;
}

} // namespace zero::rt
