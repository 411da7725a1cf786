//===- LoadDataset.cpp - any dataset, its format detected or given --------===//
//
// loadDataset: a synthetic spec, a Planetoid or OGB folder, a graph file, an
// .npz archive, or a graph-only file (Matrix Market, an edge list) with its
// vertex arrays; by content, or as sagac's --format says.
//
//===----------------------------------------------------------------------===//

#include "runtime/graph/GraphFile.h"
#include "runtime/graph/GraphFileFormat.h"
#include "runtime/graph/Loaders.h"
#include "runtime/graph/Numpy.h"
#include "runtime/graph/OgbFolder.h"
#include "runtime/graph/Synthetic.h"

#include <sys/stat.h>

using namespace saga;
using namespace saga::sgf;

llvm::Expected<Dataset> saga::loadDataset(const std::string &path,
                                          const VertexArrays &arrays) {
  if (arrays.empty())
    return loadDataset(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError(path, "cannot open");
  if (S_ISDIR(st.st_mode) || isGraphFile(path) || isNpzFile(path))
    return llvm::createStringError(
        path + " has its own vertex arrays; --features, --labels and "
               "--split go with a graph-only file (Matrix Market, an edge "
               "list)");
  auto edges = isMatrixMarketFile(path) ? loadMatrixMarket(path)
                                        : loadEdgeList(path);
  if (!edges)
    return edges.takeError();
  return attachVertexArrays(std::move(*edges), path, arrays);
}

llvm::Expected<Dataset> saga::loadDataset(const std::string &path,
                                          const VertexArrays &arrays,
                                          const std::string &format) {
  if (format.empty())
    return loadDataset(path, arrays);
  const bool graphOnly = format == "mtx" || format == "edgelist";
  if (!graphOnly && format != "planetoid" && format != "ogb" &&
      format != "npz" && format != "sgf")
    return llvm::createStringError(
        "--format: '" + format +
        "' is not planetoid, ogb, npz, sgf, mtx or edgelist");
  if (!graphOnly && !arrays.empty())
    return llvm::createStringError(
        path + " (" + format + ") has its own vertex arrays; --features, "
        "--labels and --split go with --format mtx or edgelist");
  if (format == "planetoid")
    return loadPlanetoid(path);
  if (format == "ogb")
    return loadOgbFolder(path);
  if (format == "npz")
    return loadNpzDataset(path);
  if (format == "sgf") {
    auto file = GraphFile::open(path);
    if (!file)
      return file.takeError();
    return (*file)->readAll();
  }
  auto edges = format == "mtx" ? loadMatrixMarket(path) : loadEdgeList(path);
  if (!edges)
    return edges.takeError();
  return attachVertexArrays(std::move(*edges), path, arrays);
}

llvm::Expected<Dataset> saga::loadDataset(const std::string &path) {
  if (isSyntheticSpec(path))
    return loadSyntheticDataset(path);
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return ioError(path, "cannot open");
  if (S_ISDIR(st.st_mode))
    return isOgbFolder(path) ? loadOgbFolder(path) : loadPlanetoid(path);
  if (isGraphFile(path)) {
    auto file = GraphFile::open(path);
    if (!file)
      return file.takeError();
    return (*file)->readAll();
  }
  if (isNpzFile(path))
    return loadNpzDataset(path);
  if (isMatrixMarketFile(path))
    return attachVertexArrays(EdgeList(), path, VertexArrays());
  return llvm::createStringError(
      path + ": not a dataset Saga reads: not a Planetoid folder, a Saga "
             "graph file (sagac convert writes one) or a NumPy .npz archive "
             "(a Matrix Market file or an edge list needs --features, "
             "--labels and --split)");
}
