//===- Npz.h - NumPy .npy/.npz reading and writing --------------*- C++ -*-===//
//
// Reads and writes arrays in NumPy's .npy format and .npz archives (zip files
// of .npy members, as written by np.savez and np.savez_compressed).
//
// Conventions:
//  - No exceptions. Every fallible function returns true on success; on
//    failure it returns false and stores a one-line message in `error`, of the
//    form "<file>: member '<name>.npy': <what went wrong>".
//  - Arrays are held in C (row-major) order, little-endian. A .npy header with
//    fortran_order=True is accepted and its data is reordered into C order.
//  - Big-endian, object and structured dtypes are rejected.
//  - BF16 has no NumPy descr: it can be held in memory but not written.
//  - Writes are atomic: data goes to "<path>.tmp", which is renamed over
//    <path> only once complete. On failure <path> is left untouched.
//  - .npz members are read stored or deflated; they are written stored.
//
//===----------------------------------------------------------------------===//
#ifndef ZERO_RT_NPZ_H
#define ZERO_RT_NPZ_H

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace zero::rt {

enum class DType {
  F32,
  F64,
  F16,
  BF16,
  I8,
  I16,
  I32,
  I64,
  U8,
  U16,
  U32,
  U64,
  Bool
};

/// Size of one element in bytes; 0 for a value outside the enum.
size_t itemSize(DType dtype);

/// NumPy's name for the dtype: "float32", "int64", "bool", ... ("bfloat16"
/// for BF16).
const char *dtypeName(DType dtype);

/// The DType named `name` (dtypeName's inverse), or nullopt.
std::optional<DType> dtypeFromName(std::string_view name);

/// A shape as "[2, 3]", for messages.
std::string formatShape(const std::vector<int64_t> &shape);

/// The .npy descr written for the dtype ("<f4", "|b1", ...), or nullptr for
/// BF16, which NumPy cannot represent.
const char *numpyDescr(DType dtype);

/// Maps a little-endian (or byte-order-free) NumPy descr such as "<f4" or
/// "|u1" to a DType; nullopt for anything unsupported.
std::optional<DType> dtypeFromNumpyDescr(std::string_view descr);

/// A dense, C-ordered, little-endian array.
struct Array {
  std::string name;
  DType dtype = DType::F32;
  /// Empty for a 0-d (scalar) array.
  std::vector<int64_t> shape;
  /// numel() * itemSize() bytes.
  std::vector<uint8_t> data;

  /// Number of elements (1 for a 0-d array), or -1 if a dimension is negative
  /// or the product overflows int64_t.
  int64_t numel() const;
  size_t itemSize() const { return rt::itemSize(dtype); }

  /// Typed view of `data`. T must have the element's size (e.g. uint16_t for
  /// F16/BF16, bool or uint8_t for Bool).
  template <class T> T *as() {
    static_assert(std::is_trivially_copyable_v<T>);
    assert(sizeof(T) == itemSize() && "element type size mismatch");
    return reinterpret_cast<T *>(data.data());
  }
  template <class T> const T *as() const {
    static_assert(std::is_trivially_copyable_v<T>);
    assert(sizeof(T) == itemSize() && "element type size mismatch");
    return reinterpret_cast<const T *>(data.data());
  }
};

/// Reads every member of an .npz archive, in archive order. Member names lose
/// their ".npy" suffix.
bool readNpz(const std::string &path, std::vector<Array> &arrays,
             std::string &error);

/// Same as readNpz, from an archive held in memory; `context` names it in
/// error messages.
bool parseNpz(const void *data, size_t size, std::vector<Array> &arrays,
              std::string &error, const std::string &context = "<memory>");

/// An array whose data the caller owns and keeps alive: what writeNpz
/// needs to write a large archive without a copy of it.
struct ArrayView {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t size = 0; ///< bytes of the array
  /// `data` holds one element, the value of every element.
  bool splat = false;
  /// Set instead of `data`: produces bytes [offset, offset + len) of the
  /// array when the archive writes them, so an array never has to be
  /// whole in memory. False with `error` stops the write.
  std::function<bool(uint64_t offset, void *out, size_t len,
                     std::string &error)>
      read;
  size_t itemSize() const { return rt::itemSize(dtype); }
};

/// Writes the arrays as "<name>.npy" members of an uncompressed archive.
/// Names must be non-empty and unique.
bool writeNpz(const std::string &path, const std::vector<Array> &arrays,
              std::string &error);
bool writeNpz(const std::string &path, const std::vector<ArrayView> &arrays,
              std::string &error);

/// Random access to the members of an .npz archive without reading them
/// whole: stored members are read at any byte offset.
class NpzReader {
public:
  struct Member {
    std::string name; ///< without ".npy"
    DType dtype = DType::F32;
    std::vector<int64_t> shape;
    uint64_t bytes = 0; ///< of the array data
  };
  NpzReader();
  ~NpzReader();
  NpzReader(const NpzReader &) = delete;
  NpzReader &operator=(const NpzReader &) = delete;

  /// Opens the archive and reads every member's .npy header.
  bool open(const std::string &path, std::string &error);
  const std::vector<Member> &members() const { return members_; }
  /// The member named `name`, or null.
  const Member *find(const std::string &name) const;
  /// Bytes [offset, offset + len) of member `m`'s array data. Deflated
  /// members are read from their start.
  bool read(const Member &m, uint64_t offset, void *out, size_t len,
            std::string &error);
  /// The whole member as an array.
  bool readArray(const Member &m, Array &out, std::string &error);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
  std::vector<Member> members_;
  std::string path_;
};

/// Reads one .npy file. The array is named after the file, without directory
/// and ".npy" suffix.
bool readNpy(const std::string &path, Array &array, std::string &error);

/// Parses a .npy image held in memory; `context` names it in error messages.
/// The array's name is left unchanged.
bool parseNpy(const void *data, size_t size, Array &array, std::string &error,
              const std::string &context = "<memory>");

/// Writes one .npy file (the array's name is not stored).
bool writeNpy(const std::string &path, const Array &array, std::string &error);

/// Serializes the array into a .npy image, replacing the contents of `out`.
bool serializeNpy(const Array &array, std::vector<uint8_t> &out,
                  std::string &error, const std::string &context = "<memory>");

} // namespace zero::rt

#endif
