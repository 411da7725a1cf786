//===- NpzReader.cpp - .npz archives: ZIP members as arrays ---------------===//
//
// isNpzFile and readNpz: the end of central directory record (and ZIP64's),
// each directory entry and its local header, stored or deflated members
// (an absurd uncompressed size refused before allocating), each CRC-32
// checked, every NAME.npy member parsed as an array.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/Crc32.h"
#include "runtime/graph/Numpy.h"
#include "runtime/graph/NumpyBytes.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/Support/MemoryBuffer.h"

#include <zlib.h>

#include <cstring>

using namespace saga;
using namespace saga::numpy;

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
