//===- TextReader.h - lines and fields of the text loaders ------*- C++ -*-===//
//
// Private to runtime/graph (Loaders.h is the interface): what the text
// loaders (EdgeList.cpp, MatrixMarket.cpp, the Planetoid reader in
// Loaders.cpp) share. Each file is read whole (one MemoryBuffer) and cut into
// lines and space/tab-separated fields by hand; numbers are parsed without
// locale or iostreams. Every rejection is an llvm::Error "PATH:LINE: what"
// (or "PATH: what" for whole-file problems such as a wrong line count).
// Inline, as it was in the one file the loaders shared: the per-line fast
// paths stay inlined into each loader's loop.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_TEXTREADER_H
#define SAGA_RUNTIME_GRAPH_TEXTREADER_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Compiler.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

namespace saga::text {

using llvm::Error;
using llvm::StringRef;
using llvm::Twine;

/// Vertex ids are int32 and the vertex count must be an int32 too, so ids are
/// below INT32_MAX.
constexpr int64_t kMaxVertices = std::numeric_limits<int32_t>::max();

inline Error makeError(const Twine &msg) {
  return llvm::createStringError(
      std::make_error_code(std::errc::invalid_argument), msg);
}

/// A token for a message: quoted, non-printables escaped, cut at 40 chars.
inline std::string quote(StringRef tok) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << '\'';
  llvm::printEscapedString(tok.take_front(40), os);
  if (tok.size() > 40)
    os << "...";
  os << '\'';
  return s;
}

/// A token known to be printable (digits), cut at 40 chars, unquoted.
inline std::string shorten(StringRef tok) {
  return tok.size() <= 40 ? tok.str() : (tok.take_front(40) + "...").str();
}

/// Reads a whole file. A missing or unreadable file is "cannot open PATH:
/// reason".
inline llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>>
readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                         /*RequiresNullTerminator=*/false);
  if (std::error_code ec = buf.getError())
    return llvm::createStringError(ec,
                                   "cannot open " + path + ": " + ec.message());
  return std::move(*buf);
}

enum class IntStatus { Ok, NotAnInteger, TooLarge };

/// Parses `-?[0-9]+` exactly. Magnitudes of 19 or more digits are TooLarge
/// (every caller's limit is far below 10^18).
inline IntStatus parseInt(StringRef tok, int64_t &out) {
  bool neg = !tok.empty() && tok[0] == '-';
  StringRef digits = neg ? tok.drop_front() : tok;
  if (digits.empty())
    return IntStatus::NotAnInteger;
  int64_t v = 0;
  size_t significant = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return IntStatus::NotAnInteger;
    if (significant || c != '0')
      ++significant;
    if (significant > 18) {
      // Keep scanning: "123...x" is still not an integer.
      continue;
    }
    v = v * 10 + (c - '0');
  }
  if (significant > 18)
    return IntStatus::TooLarge;
  out = neg ? -v : v;
  return IntStatus::Ok;
}

/// The lines of a file and the fields of the current line.
class TextReader {
public:
  TextReader(std::string path, const llvm::MemoryBuffer &buf)
      : path_(std::move(path)), cur_(buf.getBufferStart()),
        end_(buf.getBufferEnd()), size_(buf.getBufferSize()) {}

  const std::string &path() const { return path_; }
  size_t size() const { return size_; }
  StringRef line() const { return line_; }
  int64_t lineNo() const { return lineNo_; }

  /// Advances to the next line ('\n' or "\r\n" ended; the last may lack its
  /// end). False at the end of the file.
  bool next() {
    if (cur_ == end_)
      return false;
    const char *nl =
        static_cast<const char *>(std::memchr(cur_, '\n', end_ - cur_));
    const char *stop = nl ? nl : end_;
    line_ = StringRef(cur_, stop - cur_);
    if (line_.ends_with("\r"))
      line_ = line_.drop_back();
    cur_ = nl ? nl + 1 : end_;
    ++lineNo_;
    return true;
  }

  /// "PATH:LINE: msg".
  Error error(const Twine &msg) const {
    return makeError(path_ + ":" + Twine(lineNo_) + ": " + msg);
  }
  /// "PATH: msg".
  Error fileError(const Twine &msg) const {
    return makeError(path_ + ": " + msg);
  }

  // The checks below are split into an inlined fast path (valid input) and
  // an out-of-line diagnosis, which keeps the per-line cost to a few
  // compares.

  /// Splits the line at runs of spaces and tabs into exactly `n` fields.
  Error split(StringRef *fields, size_t n) const {
    size_t count = 0;
    const char *p = line_.begin(), *e = line_.end();
    while (true) {
      while (p != e && (*p == ' ' || *p == '\t'))
        ++p;
      if (p == e)
        break;
      const char *start = p;
      while (p != e && *p != ' ' && *p != '\t')
        ++p;
      if (count < n)
        fields[count] = StringRef(start, p - start);
      ++count;
    }
    if (LLVM_LIKELY(count == n))
      return Error::success();
    return columnsError(n, count);
  }

  /// A non-negative integer below `limit`; `what` names it in the range
  /// message ("vertex id 2708 is out of range [0, 2708)").
  Error index(StringRef tok, const char *what, int64_t limit,
              int64_t &out) const {
    // Fast path: 1..18 plain digits, below the limit.
    if (LLVM_LIKELY(!tok.empty() && tok.size() <= 18)) {
      // Unsigned: garbage characters only wrap around, and fail `digits`.
      uint64_t v = 0;
      bool digits = true;
      for (char c : tok) {
        uint64_t d = uint64_t(static_cast<unsigned char>(c)) - uint64_t('0');
        digits &= d <= 9;
        v = v * 10 + d;
      }
      if (LLVM_LIKELY(digits && v < static_cast<uint64_t>(limit))) {
        out = static_cast<int64_t>(v);
        return Error::success();
      }
    }
    return indexError(tok, what, limit);
  }

  /// An integer in [lo, hi).
  Error integerIn(StringRef tok, const char *what, int64_t lo, int64_t hi,
                  int64_t &out) const {
    int64_t v = 0;
    if (LLVM_LIKELY(parseInt(tok, v) == IntStatus::Ok && v >= lo && v < hi)) {
      out = v;
      return Error::success();
    }
    return integerError(tok, what, lo, hi);
  }

  /// A finite float32 in plain decimal or exponent notation.
  Error number(StringRef tok, float &out) const {
    // The binary data sets are all "1".
    if (tok.size() == 1 && tok[0] >= '0' && tok[0] <= '9') {
      out = static_cast<float>(tok[0] - '0');
      return Error::success();
    }
    auto [ptr, ec] = std::from_chars(tok.begin(), tok.end(), out);
    if (LLVM_LIKELY(ec == std::errc() && ptr == tok.end() &&
                    std::isfinite(out)))
      return Error::success();
    return numberError(tok, ec, ptr);
  }

private:
  LLVM_ATTRIBUTE_NOINLINE Error columnsError(size_t n, size_t count) const {
    return error("expected " + Twine(n) + (n == 1 ? " column" : " columns") +
                 ", found " + Twine(count));
  }

  LLVM_ATTRIBUTE_NOINLINE Error indexError(StringRef tok, const char *what,
                                           int64_t limit) const {
    int64_t v = 0;
    IntStatus st = parseInt(tok, v);
    if (st == IntStatus::NotAnInteger || tok[0] == '-')
      return error(quote(tok) + " is not a non-negative integer");
    return error(Twine(what) + " " + shorten(tok) + " is out of range [0, " +
                 Twine(limit) + ")");
  }

  LLVM_ATTRIBUTE_NOINLINE Error integerError(StringRef tok, const char *what,
                                             int64_t lo, int64_t hi) const {
    int64_t v = 0;
    if (parseInt(tok, v) == IntStatus::NotAnInteger)
      return error(quote(tok) + " is not an integer");
    return error(Twine(what) + " " + shorten(tok) + " is out of range [" +
                 Twine(lo) + ", " + Twine(hi) + ")");
  }

  LLVM_ATTRIBUTE_NOINLINE Error numberError(StringRef tok, std::errc ec,
                                            const char *ptr) const {
    if (ec == std::errc::invalid_argument || ptr != tok.end())
      return error(quote(tok) + " is not a number");
    if (ec == std::errc::result_out_of_range)
      return error(quote(tok) + " is out of the float32 range");
    return error(quote(tok) + " is not a finite number");
  }

private:
  std::string path_;
  const char *cur_, *end_;
  size_t size_;
  StringRef line_;
  int64_t lineNo_ = 0;
};

} // namespace saga::text

#endif // SAGA_RUNTIME_GRAPH_TEXTREADER_H
