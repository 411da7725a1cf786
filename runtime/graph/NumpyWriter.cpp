//===- NumpyWriter.cpp - .npy files and .npz archives written -------------===//
//
// writeNpy (version 1.0, the data aligned to 64 bytes) and writeNpz (stored
// members, ZIP64 fields where a size or an offset does not fit 32 bits),
// each through a temporary file renamed into place.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Crc32.h"
#include "runtime/graph/Numpy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace saga;

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
