//===- OgbFolder.h - OGB node-property datasets as OGB unpacks them -*- C++ -*-===//
//
// An OGB node-property prediction dataset folder (ogbn-arxiv, -products,
// ... as `ogb` downloads and unpacks it: `<name>/raw/`, `<name>/split/`):
//
//   raw/edge.csv.gz          one `src,dst` line per edge (taken as given:
//                            OGB lists an undirected edge once, and its
//                            users add the reverse; so do the tests)
//   raw/num-node-list.csv.gz the vertex count (optional: else the
//                            feature rows)
//   raw/node-feat.csv.gz     one line of F comma-separated floats per vertex
//   raw/node-label.csv.gz    one class per vertex (`nan`: unlabelled)
//   split/<kind>/{train,valid,test}.csv.gz   vertex ids, one per line
//
// Every error names the file and the line (`arxiv/raw/edge.csv.gz:17:
// vertex 169343 is out of range [0, 169343)`), and a corrupt or truncated
// gzip stream says so with its file.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_OGBFOLDER_H
#define SAGA_RUNTIME_GRAPH_OGBFOLDER_H

#include "runtime/graph/Loaders.h"

#include "llvm/Support/Error.h"

#include <string>

namespace saga {

/// Whether `dir` looks like an OGB dataset folder (it has raw/edge.csv.gz).
bool isOgbFolder(const std::string &dir);

llvm::Expected<Dataset> loadOgbFolder(const std::string &dir);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_OGBFOLDER_H
