//===- NpyReader.cpp - .npy arrays: the header and the data ---------------===//
//
// An NpyArray's elements, and parseNpy / readNpy: format versions 1 to 3,
// the header's Python dict literal (descr, fortran_order, shape), the data
// checked against the shape's size, Fortran-order 2-D arrays transposed.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Numpy.h"
#include "runtime/graph/NumpyBytes.h"

#include "llvm/Support/MemoryBuffer.h"

#include <cstring>
#include <limits>

using namespace saga;
using namespace saga::numpy;

namespace {

/// The value of `key` in a .npy header dict, raw (a quoted string, True or
/// False, or a parenthesised tuple), or empty.
std::string headerValue(llvm::StringRef header, llvm::StringRef key,
                        size_t *pos) {
  for (char quote : {'\'', '"'}) {
    std::string k = std::string(1, quote) + key.str() + quote;
    size_t at = header.find(k);
    if (at == llvm::StringRef::npos)
      continue;
    size_t colon = header.find(':', at + k.size());
    if (colon == llvm::StringRef::npos)
      return "";
    size_t begin = header.find_first_not_of(" ", colon + 1);
    if (begin == llvm::StringRef::npos)
      return "";
    *pos = begin;
    char open = header[begin];
    size_t end;
    if (open == '\'' || open == '"')
      end = header.find(open, begin + 1);
    else if (open == '(')
      end = header.find(')', begin);
    else
      end = header.find_first_of(",}", begin) - 1;
    if (end == llvm::StringRef::npos || end < begin)
      return "";
    return header.substr(begin, end - begin + 1).str();
  }
  return "";
}

} // namespace

int64_t NpyArray::size() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

std::string NpyArray::dtypeName() const {
  if (kind == 'b')
    return "bool";
  std::string base = kind == 'f' ? "float" : kind == 'i' ? "int" : "uint";
  return base + std::to_string(itemSize * 8);
}

double NpyArray::asDouble(int64_t i) const {
  const char *p = data.data() + i * itemSize;
  if (kind == 'f') {
    if (itemSize == 4) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  return double(asInt(i));
}

int64_t NpyArray::asInt(int64_t i) const {
  const char *p = data.data() + i * itemSize;
  uint64_t raw = little(p, int(itemSize));
  if (kind == 'i' && itemSize < 8 && (raw >> (itemSize * 8 - 1)) & 1)
    raw |= ~uint64_t(0) << (itemSize * 8); // sign-extend
  return int64_t(raw);
}

llvm::Expected<NpyArray> saga::parseNpy(llvm::StringRef bytes,
                                        const std::string &where) {
  static const char kMagic[] = "\x93NUMPY";
  if (bytes.size() < 10 || !bytes.starts_with(llvm::StringRef(kMagic, 6)))
    return at(where, 0, "not a .npy file (no \\x93NUMPY magic string)");
  int major = uint8_t(bytes[6]);
  if (major < 1 || major > 3)
    return at(where, 6,
              ".npy format version " + std::to_string(major) +
                  " is not one Saga reads (1 to 3)");
  int lengthBytes = major == 1 ? 2 : 4;
  if (bytes.size() < size_t(8 + lengthBytes))
    return at(where, 8, "the file ends inside the header length");
  uint64_t headerLength = little(bytes.data() + 8, lengthBytes);
  size_t headerStart = size_t(8 + lengthBytes);
  if (headerLength > bytes.size() - headerStart)
    return at(where, 8,
              "the header length " + std::to_string(headerLength) +
                  " runs past the end of the file (" +
                  std::to_string(bytes.size()) + " bytes)");
  llvm::StringRef header = bytes.substr(headerStart, headerLength);
  if (!header.trim().starts_with("{") || !header.trim().ends_with("}"))
    return at(where, int64_t(headerStart),
              "the header is not a Python dict literal");
  NpyArray a;
  size_t pos = 0;
  std::string descr = headerValue(header, "descr", &pos);
  if (descr.size() < 4)
    return at(where, int64_t(headerStart),
              "the header has no 'descr' (the dtype)");
  llvm::StringRef d = llvm::StringRef(descr).drop_front().drop_back();
  if (d.size() < 3 || (d[0] != '<' && d[0] != '|' && d[0] != '>' && d[0] != '='))
    return at(where, int64_t(headerStart + pos),
              "dtype " + descr + " is not a plain numeric type");
  if (d[0] == '>' && d.substr(2) != "1")
    return at(where, int64_t(headerStart + pos),
              "dtype " + descr +
                  " is big-endian; save it little-endian (arr.astype('<" +
                  d.substr(1).str() + "'))");
  a.kind = d[1];
  if (d.substr(2).getAsInteger(10, a.itemSize))
    return at(where, int64_t(headerStart + pos),
              "dtype " + descr + " has no element size");
  bool known = (a.kind == 'f' && (a.itemSize == 4 || a.itemSize == 8)) ||
               ((a.kind == 'i' || a.kind == 'u') &&
                (a.itemSize == 1 || a.itemSize == 2 || a.itemSize == 4 ||
                 a.itemSize == 8)) ||
               (a.kind == 'b' && a.itemSize == 1);
  if (!known)
    return at(where, int64_t(headerStart + pos),
              "dtype " + descr +
                  " is not one Saga reads (float32/64, (u)int8-64, bool)");
  std::string fortran = headerValue(header, "fortran_order", &pos);
  if (fortran != "False" && fortran != "True")
    return at(where, int64_t(headerStart),
              "the header has no 'fortran_order' True or False");
  std::string shape = headerValue(header, "shape", &pos);
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return at(where, int64_t(headerStart),
              "the header has no 'shape' tuple");
  llvm::SmallVector<llvm::StringRef> dims;
  llvm::StringRef(shape).drop_front().drop_back().split(dims, ',', -1, false);
  for (llvm::StringRef dim : dims) {
    dim = dim.trim();
    if (dim.empty())
      continue;
    int64_t n;
    if (dim.getAsInteger(10, n) || n < 0)
      return at(where, int64_t(headerStart + pos),
                "shape " + shape + " has a dimension that is not a "
                "non-negative integer");
    a.shape.push_back(n);
  }
  // The data: exactly the shape's bytes (no overflow on absurd shapes).
  uint64_t elements = 1;
  for (int64_t n : a.shape) {
    if (n != 0 && elements > std::numeric_limits<uint64_t>::max() /
                                 uint64_t(n) / uint64_t(a.itemSize))
      return at(where, int64_t(headerStart + pos),
                "shape " + shape + " is larger than any file");
    elements *= uint64_t(n);
  }
  const size_t dataStart = headerStart + headerLength;
  uint64_t want = elements * uint64_t(a.itemSize);
  uint64_t have = bytes.size() - dataStart;
  if (have != want)
    return at(where, int64_t(dataStart),
              (have < want ? "truncated: " : "trailing bytes: ") +
                  std::string("shape ") + shape + " of " + a.dtypeName() +
                  " needs " + std::to_string(want) +
                  " bytes of data after the header, the file has " +
                  std::to_string(have));
  a.data.assign(bytes.begin() + dataStart, bytes.end());
  if (d[0] == '>' && a.itemSize != 1)
    return at(where, int64_t(headerStart + pos), "big-endian data");
  if (fortran == "True" && a.shape.size() == 2) {
    // Column-major: transposed into C order.
    std::vector<char> c(a.data.size());
    int64_t rows = a.shape[0], cols = a.shape[1], s = a.itemSize;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = 0; k < cols; ++k)
        std::memcpy(c.data() + (r * cols + k) * s,
                    a.data.data() + (k * rows + r) * s, size_t(s));
    a.data = std::move(c);
  } else if (fortran == "True" && a.shape.size() > 2) {
    return at(where, int64_t(headerStart),
              "Fortran-order arrays of more than 2 dimensions are not read; "
              "save np.ascontiguousarray(arr)");
  }
  return a;
}

llvm::Expected<NpyArray> saga::readNpy(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  return parseNpy((*buffer)->getBuffer(), path);
}
