//===- ParamsFile.cpp - parameters as text --------------------------------===//

#include "runtime/train/ParamsFile.h"
#include "runtime/memory/MemoryLimit.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

using namespace saga;

namespace {
struct Cursor {
  llvm::StringRef text;
  unsigned line = 1;
  /// The next whitespace-separated token, skipping comments.
  llvm::StringRef next(bool *newLine = nullptr) {
    bool sawNewLine = false;
    while (!text.empty()) {
      char c = text.front();
      if (c == '\n') {
        ++line;
        sawNewLine = true;
        text = text.drop_front();
      } else if (c == '#') {
        text = text.drop_until([](char ch) { return ch == '\n'; });
      } else if (llvm::isSpace(c)) {
        text = text.drop_front();
      } else {
        break;
      }
    }
    if (newLine)
      *newLine = sawNewLine;
    size_t end = text.find_first_of(" \t\r\n"); // '#' inside a name is part of it
    llvm::StringRef tok = text.take_front(end);
    text = text.drop_front(tok.size());
    return tok;
  }
};

llvm::Error fail(const std::string &path, unsigned line,
                 const llvm::Twine &what) {
  return llvm::createStringError(path + ":" + std::to_string(line) + ": " +
                                 what.str());
}
} // namespace

llvm::Expected<NamedTensors> saga::loadParamsFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return llvm::createStringError("cannot open " + path + ": " +
                                   buffer.getError().message());
  NamedTensors result;
  Cursor c{(*buffer)->getBuffer()};
  while (true) {
    llvm::StringRef name = c.next();
    if (name.empty())
      break;
    unsigned headerLine = c.line;
    // The shape: integers up to the end of the header line.
    std::vector<int64_t> shape;
    while (true) {
      Cursor peek = c;
      bool newLine = false;
      llvm::StringRef tok = peek.next(&newLine);
      if (tok.empty() || newLine)
        break;
      int64_t d;
      if (tok.getAsInteger(10, d) || d <= 0)
        return fail(path, headerLine,
                    "'" + tok + "' is not a positive dimension of '" + name +
                        "'");
      shape.push_back(d);
      c = peek;
    }
    // Each value takes at least two bytes ("0 "): a shape the rest of the
    // file cannot hold is refused before its tensor is allocated.
    const uint64_t elements = bytesOf(shape, 1);
    if (elements > (c.text.size() + 1) / 2)
      return fail(path, headerLine,
                  "'" + name + "' declares " + std::to_string(elements) +
                      " values; the " + std::to_string(c.text.size()) +
                      " bytes left in the file hold at most " +
                      std::to_string((c.text.size() + 1) / 2));
    if (llvm::Error e = checkMemory(
            elements * 4, path + ":" + std::to_string(headerLine) + ": '" +
                              name + "'"))
      return std::move(e);
    Tensor t(shape);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      llvm::StringRef tok = c.next();
      if (tok.empty())
        return fail(path, c.line,
                    "'" + name + "' has " + std::to_string(i) +
                        " values, its shape needs " +
                        std::to_string(t.numElements()));
      std::string s = tok.str();
      char *end = nullptr;
      double v = std::strtod(s.c_str(), &end);
      if (end != s.c_str() + s.size() || !std::isfinite(v))
        return fail(path, c.line, "'" + tok + "' is not a finite number");
      t.f32()[i] = static_cast<float>(v);
    }
    result.emplace_back(name.str(), std::move(t));
  }
  return result;
}

llvm::Error saga::saveParamsFile(const std::string &path,
                                 const NamedTensors &params,
                                 llvm::StringRef comment) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError("cannot write " + path + ": " +
                                   ec.message());
  os << "# saga parameters: name and shape, then the values row by row\n";
  llvm::SmallVector<llvm::StringRef> lines;
  comment.split(lines, '\n', -1, false);
  for (llvm::StringRef line : lines)
    os << "# " << line << '\n';
  for (const auto &[name, t] : params) {
    os << name;
    for (int64_t d : t.shape())
      os << ' ' << d;
    os << '\n';
    int64_t row = t.shape().empty() ? 1 : t.shape().back();
    for (int64_t i = 0; i < t.numElements(); ++i)
      os << llvm::format("%.9g", t.f32()[i]) << ((i + 1) % row ? ' ' : '\n');
  }
  return llvm::Error::success();
}
