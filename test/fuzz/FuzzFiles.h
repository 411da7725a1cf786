//===- FuzzFiles.h - scratch files for the loader fuzzers -------*- C++ -*-===//
//
// Saga's loaders read paths, as users give them, so each fuzzer writes its
// input to files in a private scratch folder (removed at exit) and calls
// the loader on them. Inputs with several files (a Planetoid or OGB folder)
// are split at FUZZ_SEPARATOR lines. The fuzzers set SAGA_AVAILABLE_MEMORY
// to 512 MiB: a header that asks for more must be refused with a message
// (runtime/memory/MemoryLimit.h), never allocated past libFuzzer's RSS
// limit.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TEST_FUZZ_FUZZFILES_H
#define SAGA_TEST_FUZZ_FUZZFILES_H

#include "runtime/graph/Graph.h"
#include "runtime/graph/Loaders.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace saga::fuzz {

/// Splits a multi-file input.
constexpr llvm::StringLiteral kSeparator = "\n=====\n";

inline void setUp() { setenv("SAGA_AVAILABLE_MEMORY", "512M", 1); }

/// The scratch folder (made once per process, removed at exit).
inline const std::string &dir() {
  static std::string d = [] {
    char t[] = "/tmp/saga-fuzz-XXXXXX";
    if (!mkdtemp(t))
      std::abort();
    std::string made = t;
    static std::string removeAtExit = made;
    std::atexit([] {
      std::string cmd = "rm -rf '" + removeAtExit + "'";
      (void)std::system(cmd.c_str());
    });
    return made;
  }();
  return d;
}

/// libFuzzer's input as bytes.
inline llvm::StringRef bytes(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// Writes `bytes` to dir()/name (folders made as needed); the path.
inline std::string write(const std::string &name, llvm::StringRef bytes) {
  std::string path = dir() + "/" + name;
  for (size_t slash = name.find('/'); slash != std::string::npos;
       slash = name.find('/', slash + 1)) {
    std::string sub = dir() + "/" + name.substr(0, slash);
    std::string cmd = "mkdir -p '" + sub + "'";
    static std::string made;
    if (made.find("|" + sub + "|") == std::string::npos) {
      if (std::system(cmd.c_str()) != 0)
        std::abort();
      made += "|" + sub + "|";
    }
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
  return path;
}

/// The input's parts at kSeparator, exactly `n` (missing ones empty, the
/// rest joined into the last).
inline std::vector<llvm::StringRef> parts(const uint8_t *data, size_t size,
                                          size_t n) {
  llvm::StringRef rest = bytes(data, size);
  std::vector<llvm::StringRef> out;
  while (out.size() + 1 < n) {
    auto [head, tail] = rest.split(kSeparator);
    out.push_back(head);
    rest = tail;
  }
  out.push_back(rest);
  return out;
}

/// What every loaded graph must allow: Graph::build on it (ids in range;
/// build stops the process otherwise), unless it is refused as too large.
inline void build(const EdgeList &edges) {
  if (!Graph::buildError(edges.numVertices, int64_t(edges.src.size()), true)
           .empty())
    return;
  Graph g = Graph::build(edges.numVertices, edges.src, edges.dst, true);
  if (g.numEdges != int64_t(edges.src.size()) + edges.numVertices)
    std::abort();
}

/// Checks a loaded dataset's invariants (what trainers index without
/// checking): labels below the class count, splits in range.
inline void check(const Dataset &d) {
  build(d.edges);
  const int64_t n = d.edges.numVertices;
  if (!d.labels.empty() && int64_t(d.labels.size()) != n)
    std::abort();
  for (int32_t l : d.labels)
    if (l < -1 || l >= d.numClasses)
      std::abort();
  for (const std::vector<int32_t> *s : {&d.train, &d.val, &d.test})
    for (int32_t v : *s)
      if (v < 0 || v >= n)
        std::abort();
  if (d.features.numElements() > 0 && d.features.rows() != n)
    std::abort();
}

template <typename T> void drop(llvm::Expected<T> &&e) {
  if (!e)
    llvm::consumeError(e.takeError());
}

} // namespace saga::fuzz

#endif // SAGA_TEST_FUZZ_FUZZFILES_H
