//===- Checkpoint.cpp - training state on disk, written atomically --------===//

#include "runtime/train/Checkpoint.h"
#include "runtime/FaultInjection.h"
#include "runtime/graph/Crc32.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace saga;

namespace {
constexpr char kMagic[8] = {'S', 'A', 'G', 'A', 'C', 'K', 'P', 'T'};
// From version 3 a checkpoint ends with the CRC-32 of everything before it
// (8 bytes), so a damaged or truncated checkpoint is never read as valid.
// Version 3 computed it over the size modulo 2^32 only (zlib's length is
// 32-bit), leaving all but that many bytes of a checkpoint over 4 GiB
// unchecked; version 4 covers every byte (the same value below 4 GiB).
// 1 and 2 (no checksum) and 3 are still read.
constexpr uint64_t kVersion = 4;

/// The checksum a checkpoint of `version` ends with, over `data`.
uint64_t checksumOf(uint64_t version, const char *data, size_t bytes) {
  if (version == 3)
    return crc32Zlib(0, data, size_t(uint32_t(bytes)));
  return crc32Update(0, data, bytes);
}

void put(std::string &out, uint64_t v) {
  out.append(reinterpret_cast<const char *>(&v), sizeof v);
}

void putTensors(std::string &out, const NamedTensors &ts) {
  put(out, ts.size());
  for (const auto &[name, t] : ts) {
    put(out, name.size());
    out += name;
    put(out, t.shape().size());
    for (int64_t d : t.shape())
      put(out, uint64_t(d));
    out.append(reinterpret_cast<const char *>(t.f32()), t.numElements() * 4);
  }
}

struct Reader {
  llvm::StringRef data;
  std::string path;
  llvm::Error error = llvm::Error::success();
  bool failed = false;

  bool take(void *dst, size_t n) {
    if (failed || data.size() < n) {
      if (!failed)
        error = llvm::createStringError(path + ": truncated checkpoint");
      failed = true;
      return false;
    }
    std::memcpy(dst, data.data(), n);
    data = data.drop_front(n);
    return true;
  }
  uint64_t u64() {
    uint64_t v = 0;
    take(&v, sizeof v);
    return v;
  }
  NamedTensors tensors() {
    NamedTensors out;
    uint64_t n = u64();
    for (uint64_t i = 0; i < n && !failed; ++i) {
      uint64_t len = u64();
      if (failed || len > data.size()) {
        take(nullptr, data.size() + 1);
        break;
      }
      std::string name = data.take_front(len).str();
      data = data.drop_front(len);
      // Shapes no parameter has (a rank past 64, a dimension past 2^32, more
      // than 2^40 elements) mean a damaged file; a plausible shape whose
      // values are cut short means a truncated one.
      uint64_t rank = u64();
      std::vector<int64_t> shape;
      uint64_t elements = 1;
      bool damaged = rank > 64;
      for (uint64_t d = 0; d < rank && !failed && !damaged; ++d) {
        uint64_t dim = u64();
        if (dim > (uint64_t(1) << 32) ||
            (dim && elements > (uint64_t(1) << 40) / dim))
          damaged = true;
        else
          elements *= dim;
        shape.push_back(int64_t(dim));
      }
      if (failed)
        break;
      if (damaged) {
        error = llvm::createStringError(
            path + ": damaged checkpoint (tensor '" + name + "' has an "
            "impossible shape)");
        failed = true;
        break;
      }
      if (elements > data.size() / 4) { // the values are not all there
        take(nullptr, data.size() + 1);
        break;
      }
      Tensor t = Tensor::uninitialized(shape);
      take(t.f32(), elements * 4);
      out.emplace_back(name, std::move(t));
    }
    return out;
  }
};
} // namespace

llvm::Error saga::saveCheckpoint(const std::string &path,
                                 const Checkpoint &ckpt) {
  std::string bytes(kMagic, sizeof kMagic);
  put(bytes, kVersion);
  put(bytes, ckpt.epoch);
  put(bytes, ckpt.step);
  uint64_t best;
  std::memcpy(&best, &ckpt.bestVal, sizeof best);
  put(bytes, best);
  put(bytes, ckpt.sinceBest);
  putTensors(bytes, ckpt.params);
  putTensors(bytes, ckpt.moment1);
  putTensors(bytes, ckpt.moment2);
  put(bytes, checksumOf(kVersion, bytes.data(), bytes.size()));

  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return llvm::createStringError("cannot write " + tmp + ": " +
                                   std::strerror(errno));
  const char *p = bytes.data();
  size_t left = bytes.size();
  bool half = false;
  while (left) {
    if (!half && left <= bytes.size() / 2) {
      faultPoint("checkpoint"); // tests kill here: half a temporary file
      half = true;
    }
    ssize_t n = ::write(fd, p, std::min(left, bytes.size() / 2 + 1));
    if (n < 0) {
      ::close(fd);
      return llvm::createStringError("writing " + tmp + " failed: " +
                                     std::strerror(errno));
    }
    p += n;
    left -= size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    return llvm::createStringError("flushing " + tmp + " failed: " +
                                   std::strerror(errno));
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    return llvm::createStringError("renaming " + tmp + " to " + path +
                                   " failed: " + std::strerror(errno));
  return llvm::Error::success();
}

llvm::Expected<Checkpoint> saga::loadCheckpoint(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot open checkpoint " + path + ": " +
                                   buffer.getError().message());
  llvm::StringRef data = (*buffer)->getBuffer();
  if (!data.starts_with(llvm::StringRef(kMagic, sizeof kMagic)))
    return llvm::createStringError(path + ": not a Saga checkpoint");
  Reader r{data.drop_front(sizeof kMagic), path};
  uint64_t version = r.u64();
  if (!r.failed && (version < 1 || version > kVersion))
    return llvm::createStringError(path + ": checkpoint version " +
                                   std::to_string(version) +
                                   " is not supported (expected 1 to " +
                                   std::to_string(kVersion) + ")");
  if (!r.failed && version >= 3) {
    uint64_t stored = 0;
    if (data.size() < sizeof kMagic + 16)
      return llvm::createStringError(path + ": truncated checkpoint");
    std::memcpy(&stored, data.end() - 8, 8);
    uint64_t actual = checksumOf(version, data.data(), data.size() - 8);
    if (stored != actual)
      return llvm::createStringError(
          path + ": checksum mismatch: the checkpoint is damaged or "
                 "truncated");
    r.data = r.data.drop_back(8);
  }
  Checkpoint c;
  c.epoch = r.u64();
  c.step = r.u64();
  if (version >= 2) {
    uint64_t best = r.u64();
    std::memcpy(&c.bestVal, &best, sizeof best);
    c.sinceBest = r.u64();
  }
  c.params = r.tensors();
  c.moment1 = r.tensors();
  c.moment2 = r.tensors();
  if (r.failed)
    return std::move(r.error);
  llvm::consumeError(std::move(r.error));
  if (version >= 3 && !r.data.empty())
    return llvm::createStringError(path + ": " + std::to_string(r.data.size()) +
                                   " bytes after the last tensor");
  return c;
}
