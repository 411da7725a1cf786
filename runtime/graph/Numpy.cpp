//===- Numpy.cpp - NumPy .npy and .npz files ------------------------------===//

#include "runtime/graph/Numpy.h"
#include "runtime/graph/Crc32.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <zlib.h>

#include <cstring>
#include <functional>
#include <limits>

using namespace saga;

namespace {

llvm::Error at(const std::string &where, int64_t offset,
               const std::string &what) {
  return llvm::createStringError(where + ": offset " + std::to_string(offset) +
                                 ": " + what);
}

uint64_t little(const char *p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | uint8_t(p[i]);
  return v;
}

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

bool saga::isNpzFile(const std::string &path) {
  char magic[4] = {};
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f)
    return false;
  size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return n == 4 && std::memcmp(magic, "PK\x03\x04", 4) == 0;
}

llvm::Expected<std::map<std::string, NpyArray>>
saga::readNpz(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  llvm::StringRef z = (*buffer)->getBuffer();
  const char *p = z.data();
  const int64_t size = int64_t(z.size());
  // The end of central directory record, within the last 64 KiB + 22.
  int64_t eocd = -1;
  for (int64_t i = size - 22; i >= 0 && i >= size - 65557; --i)
    if (little(p + i, 4) == 0x06054b50) {
      eocd = i;
      break;
    }
  if (eocd < 0)
    return at(path, size,
              "not a complete .npz (ZIP) archive: no end of central "
              "directory record (truncated?)");
  uint64_t entries = little(p + eocd + 10, 2);
  uint64_t dirSize = little(p + eocd + 12, 4);
  uint64_t dirOffset = little(p + eocd + 16, 4);
  uint64_t dirEnd = uint64_t(eocd); // where the directory must end
  if (dirOffset == 0xffffffffu || entries == 0xffffu) {
    // ZIP64: the locator just before, then the ZIP64 record.
    int64_t locator = eocd - 20;
    if (locator < 0 || little(p + locator, 4) != 0x07064b50)
      return at(path, eocd, "a ZIP64 archive without its locator");
    uint64_t record = little(p + locator + 8, 8);
    if (record + 56 > uint64_t(size) || little(p + record, 4) != 0x06064b50)
      return at(path, locator, "the ZIP64 end record is missing");
    entries = little(p + record + 32, 8);
    dirSize = little(p + record + 40, 8);
    dirOffset = little(p + record + 48, 8);
    dirEnd = record;
  }
  if (dirOffset > dirEnd || dirSize != dirEnd - dirOffset)
    return at(path, eocd,
              "the central directory (" + std::to_string(dirSize) +
                  " bytes at " + std::to_string(dirOffset) +
                  ") does not end where the end record begins (" +
                  std::to_string(dirEnd) + "): the archive is damaged");
  std::map<std::string, NpyArray> arrays;
  uint64_t q = dirOffset;
  for (uint64_t e = 0; e < entries; ++e) {
    if (q + 46 > dirOffset + dirSize || little(p + q, 4) != 0x02014b50)
      return at(path, int64_t(q),
                "central directory entry " + std::to_string(e) +
                    " is not where the directory says");
    uint64_t method = little(p + q + 10, 2);
    uint32_t crc = uint32_t(little(p + q + 16, 4));
    uint64_t packed = little(p + q + 20, 4);
    uint64_t unpacked = little(p + q + 24, 4);
    uint64_t nameLength = little(p + q + 28, 2);
    uint64_t extraLength = little(p + q + 30, 2);
    uint64_t commentLength = little(p + q + 32, 2);
    uint64_t local = little(p + q + 42, 4);
    if (q + 46 + nameLength + extraLength > dirOffset + dirSize)
      return at(path, int64_t(q), "a directory entry runs past the directory");
    std::string name(p + q + 46, nameLength);
    // ZIP64 sizes and offset, in that order, for the fields saturated.
    uint64_t x = q + 46 + nameLength, xEnd = x + extraLength;
    while (x + 4 <= xEnd) {
      uint64_t id = little(p + x, 2), len = little(p + x + 2, 2);
      if (x + 4 + len > xEnd)
        break;
      if (id == 0x0001) {
        uint64_t f = x + 4;
        auto take = [&](uint64_t &field, uint64_t saturated) {
          if (field == saturated && f + 8 <= x + 4 + len) {
            field = little(p + f, 8);
            f += 8;
          }
        };
        take(unpacked, 0xffffffffu);
        take(packed, 0xffffffffu);
        take(local, 0xffffffffu);
      }
      x += 4 + len;
    }
    q = xEnd + commentLength;
    const std::string member = path + ": " + name;
    if (local + 30 > uint64_t(size) || little(p + local, 4) != 0x04034b50)
      return at(member, int64_t(local), "no local file header");
    uint64_t dataStart = local + 30 + little(p + local + 26, 2) +
                         little(p + local + 28, 2);
    if (dataStart + packed > uint64_t(size))
      return at(member, int64_t(dataStart),
                "its " + std::to_string(packed) +
                    " bytes run past the end of the archive (truncated?)");
    std::string bytes;
    if (method == 0) {
      if (packed != unpacked)
        return at(member, int64_t(local), "a stored member whose sizes differ");
      bytes.assign(p + dataStart, packed);
    } else if (method == 8) {
      // Deflate expands at most 1032:1: a larger claim is a corrupt (or
      // hostile) header, refused before anything is allocated.
      if (unpacked > (uint64_t(1) << 40) || unpacked / 1032 > packed + 64)
        return at(member, int64_t(local),
                  "an absurd uncompressed size (" + std::to_string(unpacked) +
                      " bytes from " + std::to_string(packed) + ")");
      if (llvm::Error e = checkMemory(unpacked, member + ": inflating it"))
        return std::move(e);
      bytes.resize(unpacked);
      z_stream s{};
      if (inflateInit2(&s, -MAX_WBITS) != Z_OK)
        return at(member, int64_t(dataStart), "cannot start inflating");
      s.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(p + dataStart));
      s.avail_in = uInt(packed);
      s.next_out = reinterpret_cast<Bytef *>(bytes.data());
      s.avail_out = uInt(unpacked);
      int rc = inflate(&s, Z_FINISH);
      uint64_t out = s.total_out;
      inflateEnd(&s);
      if (rc != Z_STREAM_END || out != unpacked)
        return at(member, int64_t(dataStart),
                  "the deflated data is corrupt (" + std::to_string(out) +
                      " of " + std::to_string(unpacked) + " bytes inflated)");
    } else {
      return at(member, int64_t(local),
                "compression method " + std::to_string(method) +
                    " (only stored and deflated members are read)");
    }
    uint32_t actual = crc32Update(0, bytes.data(), bytes.size());
    if (actual != crc)
      return at(member, int64_t(dataStart),
                "CRC-32 mismatch: the member is corrupt");
    llvm::StringRef key(name);
    if (!key.consume_back(".npy"))
      continue; // not an array
    auto array = parseNpy(bytes, member);
    if (!array)
      return array.takeError();
    arrays[key.str()] = std::move(*array);
  }
  return arrays;
}

namespace {

/// The .npy preamble (magic, version 1.0, header length) and header for an
/// array of `descr` and `shape`, padded so that the data starts at a
/// multiple of 64 bytes.
std::string npyPreamble(const std::string &descr,
                        const std::vector<int64_t> &shape) {
  std::string dims = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    dims += (i ? ", " : "") + std::to_string(shape[i]);
  dims += shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr +
                       "', 'fortran_order': False, 'shape': " + dims + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  return out + header;
}

void putLittle(std::string &out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out += char((value >> (8 * i)) & 0xff);
}

} // namespace

llvm::Error saga::writeNpy(const std::string &path, const NpyView &array) {
  const std::string preamble = npyPreamble(array.descr, array.shape);
  // Through a temporary file, renamed: never a partial file under `path`.
  if (llvm::Error e = llvm::writeToOutput(path, [&](llvm::raw_ostream &out) {
        out << preamble;
        out.write(static_cast<const char *>(array.data), array.bytes);
        return llvm::Error::success();
      }))
    return llvm::createStringError(path + ": cannot write: " +
                                   llvm::toString(std::move(e)));
  return llvm::Error::success();
}

llvm::Error saga::writeNpy(const std::string &path, const Tensor &t) {
  if (t.dtype() != DType::F32 && t.dtype() != DType::I32)
    return llvm::createStringError(path + ": only f32 and i32 tensors are "
                                          "written as .npy");
  return writeNpy(path, NpyView{"", t.dtype() == DType::F32 ? "<f4" : "<i4",
                                t.shape(), t.f32(),
                                size_t(t.numElements()) * 4});
}

llvm::Error saga::writeNpz(const std::string &path,
                           const std::vector<NpyView> &members,
                           uint64_t zip64From) {
  // Stored (not deflated) members, each an .npy; ZIP64 fields where a size
  // or an offset does not fit 32 bits (zip64From), and a ZIP64 end record
  // then.
  constexpr uint64_t kSaturated = 0xffffffffu;
  std::string directory;
  uint64_t offset = 0;
  bool zip64 = false;
  if (llvm::Error e = llvm::writeToOutput(path, [&](llvm::raw_ostream &out) {
        for (const NpyView &m : members) {
          const std::string name = m.name + ".npy";
          const std::string preamble = npyPreamble(m.descr, m.shape);
          const uint64_t size = preamble.size() + m.bytes;
          uint32_t crc = crc32Update(0, preamble.data(), preamble.size());
          crc = crc32Update(crc, m.data, m.bytes);
          const bool bigSize = size >= zip64From;
          const bool bigOffset = offset >= zip64From;
          zip64 |= bigSize || bigOffset;
          // The fields the local header and the directory entry share,
          // from "version needed" to the extra field's length.
          auto shared = [&](std::string &to, bool zip64Fields,
                            size_t extraBytes) {
            putLittle(to, zip64Fields ? 45 : 20, 2); // version needed
            putLittle(to, 0, 2);                     // flags
            putLittle(to, 0, 2);                     // stored
            putLittle(to, 0, 2);                     // time
            putLittle(to, 0x21, 2);                  // 1980-01-01
            putLittle(to, crc, 4);
            putLittle(to, bigSize ? kSaturated : size, 4); // packed
            putLittle(to, bigSize ? kSaturated : size, 4); // unpacked
            putLittle(to, name.size(), 2);
            putLittle(to, extraBytes, 2);
          };
          std::string local;
          putLittle(local, 0x04034b50, 4);
          shared(local, bigSize, bigSize ? 20 : 0);
          local += name;
          if (bigSize) {
            putLittle(local, 0x0001, 2);
            putLittle(local, 16, 2);
            putLittle(local, size, 8);
            putLittle(local, size, 8);
          }
          std::string extra;
          if (bigSize || bigOffset) {
            putLittle(extra, 0x0001, 2);
            putLittle(extra, (bigSize ? 16 : 0) + (bigOffset ? 8 : 0), 2);
            if (bigSize) {
              putLittle(extra, size, 8);
              putLittle(extra, size, 8);
            }
            if (bigOffset)
              putLittle(extra, offset, 8);
          }
          putLittle(directory, 0x02014b50, 4);
          putLittle(directory, 45, 2); // made by
          shared(directory, bigSize || bigOffset, extra.size());
          putLittle(directory, 0, 2); // comment
          putLittle(directory, 0, 2); // disk
          putLittle(directory, 0, 2); // internal attributes
          putLittle(directory, 0, 4); // external attributes
          putLittle(directory, bigOffset ? kSaturated : offset, 4);
          directory += name + extra;
          out << local << preamble;
          out.write(static_cast<const char *>(m.data), m.bytes);
          offset += local.size() + size;
        }
        const uint64_t dirOffset = offset, dirSize = directory.size();
        const uint64_t entries = members.size();
        zip64 |= dirOffset >= zip64From || entries >= 0xffff;
        std::string end;
        if (zip64) {
          putLittle(end, 0x06064b50, 4);
          putLittle(end, 44, 8); // the record's size after this field
          putLittle(end, 45, 2);
          putLittle(end, 45, 2);
          putLittle(end, 0, 4);
          putLittle(end, 0, 4);
          putLittle(end, entries, 8);
          putLittle(end, entries, 8);
          putLittle(end, dirSize, 8);
          putLittle(end, dirOffset, 8);
          putLittle(end, 0x07064b50, 4); // the locator
          putLittle(end, 0, 4);
          putLittle(end, dirOffset + dirSize, 8);
          putLittle(end, 1, 4);
        }
        putLittle(end, 0x06054b50, 4);
        putLittle(end, 0, 2);
        putLittle(end, 0, 2);
        putLittle(end, zip64 ? 0xffff : entries, 2);
        putLittle(end, zip64 ? 0xffff : entries, 2);
        putLittle(end, zip64 ? kSaturated : dirSize, 4);
        putLittle(end, zip64 ? kSaturated : dirOffset, 4);
        putLittle(end, 0, 2);
        out << directory << end;
        return llvm::Error::success();
      }))
    return llvm::createStringError(path + ": cannot write: " +
                                   llvm::toString(std::move(e)));
  return llvm::Error::success();
}

llvm::Error saga::writeNpzDataset(const std::string &path, const Dataset &d) {
  const int64_t n = d.edges.numVertices;
  const int64_t e = int64_t(d.edges.src.size());
  std::vector<NpyView> members;
  std::vector<int64_t> xShape = d.features.shape();
  members.push_back({"x", "<f4", xShape, d.features.f32(),
                     size_t(d.features.numElements()) * 4});
  members.push_back({"src", "<i4", {e}, d.edges.src.data(), size_t(e) * 4});
  members.push_back({"dst", "<i4", {e}, d.edges.dst.data(), size_t(e) * 4});
  if (!d.labels.empty())
    members.push_back({"y", "<i4", {n}, d.labels.data(), size_t(n) * 4});
  std::vector<uint8_t> masks[3];
  const std::vector<int32_t> *splits[3] = {&d.train, &d.val, &d.test};
  const char *names[3] = {"train_mask", "val_mask", "test_mask"};
  for (int s = 0; s < 3; ++s) {
    if (splits[s]->empty())
      continue;
    masks[s].assign(size_t(n), 0);
    for (int32_t v : *splits[s])
      masks[s][size_t(v)] = 1;
    members.push_back({names[s], "|b1", {n}, masks[s].data(), size_t(n)});
  }
  return writeNpz(path, members);
}

namespace {

/// Vertex ids of an index array (any integer type, 1-D), each in [0, n).
llvm::Expected<std::vector<int32_t>> idsOf(const NpyArray &a,
                                           const std::string &where,
                                           int64_t n) {
  if (a.kind == 'f' || a.shape.size() != 1)
    return llvm::createStringError(where + ": a 1-D integer array of vertex "
                                           "ids, not " + a.dtypeName() +
                                   " of " + std::to_string(a.shape.size()) +
                                   " dimensions");
  std::vector<int32_t> ids;
  for (int64_t i = 0; i < a.size(); ++i) {
    int64_t v = a.asInt(i);
    if (v < 0 || v >= n)
      return llvm::createStringError(where + "[" + std::to_string(i) +
                                     "]: vertex " + std::to_string(v) +
                                     " is out of range [0, " +
                                     std::to_string(n) + ")");
    ids.push_back(int32_t(v));
  }
  return ids;
}

} // namespace

namespace {

/// The labels (`y`, N integer classes) and the split (masks or index
/// arrays, from `m`) of `d`, whose features give N; `where(key)` names a
/// key in errors, `file` the archive holding the split.
llvm::Error labelsAndSplit(Dataset &d, const NpyArray *y,
                           const std::map<std::string, NpyArray> &m,
                           const std::function<std::string(const std::string &)> &key,
                           const std::string &file) {
  const int64_t n = d.features.rows();
  auto find = [&](const std::string &k) -> const NpyArray * {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  const std::string &path = file;
  // Labels.
  if (!y)
    return llvm::createStringError(key("y") + ": missing (the N vertex "
                                              "classes; -1 unlabelled)");
  if (y->kind == 'f' || !(y->shape.size() == 1 ||
                          (y->shape.size() == 2 && y->shape[1] == 1)) ||
      y->shape[0] != n)
    return llvm::createStringError(
        key("y") + ": must be " + std::to_string(n) +
        " integer classes (one per row of 'x'), not " + y->dtypeName() +
        " of shape (" + [&] {
          std::string s;
          for (int64_t dim : y->shape)
            s += (s.empty() ? "" : ", ") + std::to_string(dim);
          return s;
        }() + ")");
  for (int64_t i = 0; i < n; ++i) {
    int64_t c = y->asInt(i);
    if (c < -1 || c >= (int64_t(1) << 20))
      return llvm::createStringError(key("y") + "[" + std::to_string(i) +
                                     "]: class " + std::to_string(c) +
                                     " is not -1 or a class number");
    d.labels.push_back(int32_t(c));
    d.numClasses = std::max<int32_t>(d.numClasses, int32_t(c + 1));
  }
  // The split: masks or index arrays.
  std::vector<int32_t> *lists[3] = {&d.train, &d.val, &d.test};
  const char *names[3] = {"train", "val", "test"};
  std::vector<int8_t> taken(size_t(n), -1);
  for (int k = 0; k < 3; ++k) {
    std::string maskKey = std::string(names[k]) + "_mask",
                idxKey = std::string(names[k]) + "_idx";
    if (const NpyArray *mask = find(maskKey)) {
      if (mask->kind == 'f' || mask->shape.size() != 1 || mask->shape[0] != n)
        return llvm::createStringError(key(maskKey) + ": must be " +
                                       std::to_string(n) +
                                       " booleans (one per row of 'x')");
      for (int64_t i = 0; i < n; ++i) {
        int64_t b = mask->asInt(i);
        if (b != 0 && b != 1)
          return llvm::createStringError(key(maskKey) + "[" +
                                         std::to_string(i) + "]: " +
                                         std::to_string(b) +
                                         " is not 0 or 1");
        if (b)
          lists[k]->push_back(int32_t(i));
      }
    } else if (const NpyArray *idx = find(idxKey)) {
      auto ids = idsOf(*idx, key(idxKey), n);
      if (!ids)
        return ids.takeError();
      *lists[k] = std::move(*ids);
    } else {
      return llvm::createStringError(path + ": no '" + maskKey + "' or '" +
                                     idxKey + "' (the " + names[k] +
                                     " split)");
    }
    for (int32_t v : *lists[k]) {
      if (d.labels[size_t(v)] < 0)
        return llvm::createStringError(path + ": vertex " + std::to_string(v) +
                                       " of the " + names[k] +
                                       " split has no label (y = -1)");
      if (taken[size_t(v)] >= 0)
        return llvm::createStringError(
            path + ": vertex " + std::to_string(v) + " is in both the " +
            names[taken[size_t(v)]] + " and the " + names[k] + " split");
      taken[size_t(v)] = int8_t(k);
    }
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Dataset> saga::loadNpzDataset(const std::string &path) {
  auto arrays = readNpz(path);
  if (!arrays)
    return arrays.takeError();
  auto &m = *arrays;
  auto key = [&](const std::string &k) { return path + ": '" + k + "'"; };
  auto find = [&](const std::string &k) -> const NpyArray * {
    auto it = m.find(k);
    return it == m.end() ? nullptr : &it->second;
  };
  Dataset d;
  d.name = llvm::sys::path::stem(path).str();
  const NpyArray *x = find("x");
  if (!x)
    return llvm::createStringError(
        path + ": no 'x' (the N x F vertex features); the archive has: " +
        [&] {
          std::string names;
          for (auto &[k, v] : m)
            names += (names.empty() ? "" : ", ") + k;
          return names.empty() ? std::string("no arrays") : names;
        }());
  if (x->kind != 'f' || x->shape.size() != 2)
    return llvm::createStringError(key("x") + ": features must be a 2-D "
                                              "float array, not " +
                                   x->dtypeName() + " of " +
                                   std::to_string(x->shape.size()) +
                                   " dimensions");
  const int64_t n = x->shape[0], f = x->shape[1];
  if (n > std::numeric_limits<int32_t>::max())
    return llvm::createStringError(key("x") + ": " + std::to_string(n) +
                                   " vertices; Saga numbers at most 2^31 - 1");
  d.features = Tensor::uninitialized({n, f});
  for (int64_t i = 0; i < n * f; ++i)
    d.features.f32()[i] = float(x->asDouble(i));
  // Edges.
  const NpyArray *ei = find("edge_index"), *src = find("src"),
                 *dst = find("dst");
  std::vector<int32_t> from, to;
  if (ei) {
    if (ei->kind == 'f' || ei->shape.size() != 2 || ei->shape[0] != 2)
      return llvm::createStringError(key("edge_index") +
                                     ": must be a 2 x E integer array");
    NpyArray row = *ei, col = *ei;
    int64_t e = ei->shape[1];
    row.shape = {e};
    col.shape = {e};
    row.data.assign(ei->data.begin(), ei->data.begin() + e * ei->itemSize);
    col.data.assign(ei->data.begin() + e * ei->itemSize, ei->data.end());
    auto a = idsOf(row, key("edge_index") + "[0]", n);
    if (!a)
      return a.takeError();
    auto b = idsOf(col, key("edge_index") + "[1]", n);
    if (!b)
      return b.takeError();
    from = std::move(*a);
    to = std::move(*b);
  } else if (src && dst) {
    auto a = idsOf(*src, key("src"), n);
    if (!a)
      return a.takeError();
    auto b = idsOf(*dst, key("dst"), n);
    if (!b)
      return b.takeError();
    if (a->size() != b->size())
      return llvm::createStringError(path + ": 'src' has " +
                                     std::to_string(a->size()) +
                                     " edges, 'dst' " +
                                     std::to_string(b->size()));
    from = std::move(*a);
    to = std::move(*b);
  } else {
    return llvm::createStringError(path + ": no edges: give 'edge_index' "
                                          "(2 x E) or 'src' and 'dst'");
  }
  if (int64_t(from.size()) > Graph::kMaxEdges)
    return llvm::createStringError(path + ": " + std::to_string(from.size()) +
                                   " edges; Saga numbers at most " +
                                   std::to_string(Graph::kMaxEdges));
  d.edges.numVertices = int32_t(n);
  d.edges.src = std::move(from);
  d.edges.dst = std::move(to);
  if (llvm::Error e = labelsAndSplit(d, find("y"), m, key, path))
    return std::move(e);
  return d;
}

llvm::Expected<Dataset> saga::attachVertexArrays(EdgeList edges,
                                                 const std::string &graphPath,
                                                 const VertexArrays &arrays) {
  if (arrays.features.empty() || arrays.labels.empty() || arrays.split.empty())
    return llvm::createStringError(
        graphPath + " holds only a graph: give its vertex arrays with "
                    "--features X.npy, --labels Y.npy and --split S.npz");
  Dataset d;
  d.name = llvm::sys::path::stem(graphPath).str();
  auto x = readNpy(arrays.features);
  if (!x)
    return x.takeError();
  if (x->kind != 'f' || x->shape.size() != 2)
    return llvm::createStringError(arrays.features +
                                   ": features must be a 2-D float array, "
                                   "not " + x->dtypeName() + " of " +
                                   std::to_string(x->shape.size()) +
                                   " dimensions");
  const int64_t n = x->shape[0], f = x->shape[1];
  if (n > std::numeric_limits<int32_t>::max())
    return llvm::createStringError(arrays.features + ": " + std::to_string(n) +
                                   " vertices; Saga numbers at most 2^31 - 1");
  if (edges.numVertices > n)
    return llvm::createStringError(
        graphPath + " has " + std::to_string(edges.numVertices) +
        " vertices but " + arrays.features + " has " + std::to_string(n) +
        " feature rows");
  d.features = Tensor::uninitialized({n, f});
  for (int64_t i = 0; i < n * f; ++i)
    d.features.f32()[i] = float(x->asDouble(i));
  edges.numVertices = int32_t(n);
  d.edges = std::move(edges);
  auto y = readNpy(arrays.labels);
  if (!y)
    return y.takeError();
  auto split = readNpz(arrays.split);
  if (!split)
    return split.takeError();
  auto key = [&](const std::string &k) {
    return k == "y" ? arrays.labels : arrays.split + ": '" + k + "'";
  };
  if (llvm::Error e = labelsAndSplit(d, &*y, *split, key, arrays.split))
    return std::move(e);
  return d;
}
