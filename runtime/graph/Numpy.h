//===- Numpy.h - NumPy .npy and .npz files ----------------------*- C++ -*-===//
//
// The arrays PyG and DGL users export (np.save, np.savez,
// np.savez_compressed): .npy format versions 1 to 3 (a magic string, a
// header that is a Python dict literal, then the data) and .npz archives
// (ZIP, stored or deflated members, ZIP64 sizes, CRC-32 checked). Errors
// name the file, the archive member and the byte offset of what is wrong.
//
// As a dataset (`--data graph.npz`), an archive holds the keys PyG's and
// DGL's exports use: `edge_index` (2 x E) or `src` and `dst` (E each),
// the edges as given (an undirected graph lists both directions); `x`
// (N x F, float32 or float64), `y` (N, integer classes; -1 unlabelled) and
// the split as `train_mask` / `val_mask` / `test_mask` (N, bool or 0/1) or
// `train_idx` / `val_idx` / `test_idx` (vertex ids). N is x's row count.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_NUMPY_H
#define SAGA_RUNTIME_GRAPH_NUMPY_H

#include "runtime/graph/Loaders.h"
#include "runtime/memory/Tensor.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace saga {

/// One array: its element kind ('f' float, 'i' signed, 'u' unsigned, 'b'
/// bool), bytes per element, shape (C order) and little-endian data.
struct NpyArray {
  char kind = 'f';
  int64_t itemSize = 4;
  std::vector<int64_t> shape;
  std::vector<char> data;

  int64_t size() const;
  /// "float32", "int64", "bool", ...
  std::string dtypeName() const;
  /// Element i as a double or as an integer (integers and bools only).
  double asDouble(int64_t i) const;
  int64_t asInt(int64_t i) const;
};

/// A .npy file's bytes; `where` names it in errors.
llvm::Expected<NpyArray> parseNpy(llvm::StringRef bytes,
                                  const std::string &where);
llvm::Expected<NpyArray> readNpy(const std::string &path);
/// Every member of a .npz archive, by name without ".npy".
llvm::Expected<std::map<std::string, NpyArray>>
readNpz(const std::string &path);

/// An array to write: `bytes` of little-endian C-order data of NumPy type
/// `descr` ("<f4", "<i4", "|b1") and `shape`; in an .npz, saved as NAME.npy.
struct NpyView {
  std::string name, descr;
  std::vector<int64_t> shape;
  const void *data = nullptr;
  size_t bytes = 0;
};
/// Writes an array as a version 1.0 .npy file (to a temporary name, then
/// renamed: never a partial file under `path`).
llvm::Error writeNpy(const std::string &path, const NpyView &array);
/// Writes a [rows, ...] f32 or i32 tensor as a version 1.0 .npy file (to a
/// temporary name, then renamed: never a partial file under `path`).
llvm::Error writeNpy(const std::string &path, const Tensor &t);

/// Writes an .npz (ZIP, stored members, ZIP64 fields for sizes and offsets
/// from `zip64From` on: those that do not fit 32 bits; tests lower it) that
/// np.load and readNpz read; to a temporary name, then renamed.
llvm::Error writeNpz(const std::string &path,
                     const std::vector<NpyView> &members,
                     uint64_t zip64From = 0xffffffffu);
/// A dataset as an .npz with the keys loadNpzDataset reads (x, src, dst,
/// y and the three masks where the dataset has them).
llvm::Error writeNpzDataset(const std::string &path, const Dataset &d);

/// Whether the file starts as a ZIP archive (an .npz).
bool isNpzFile(const std::string &path);

/// A dataset from an .npz archive (the keys above).
llvm::Expected<Dataset> loadNpzDataset(const std::string &path);

/// The vertex arrays of a graph-only file (Matrix Market, an edge list):
/// `features` an .npy of N x F floats (N: the vertex count; the graph's
/// ids must be below it), `labels` an .npy of N integer classes (-1
/// unlabelled), `split` an .npz with the masks or index arrays above.
struct VertexArrays {
  std::string features, labels, split;
  bool empty() const {
    return features.empty() && labels.empty() && split.empty();
  }
};
llvm::Expected<Dataset> attachVertexArrays(EdgeList edges,
                                           const std::string &graphPath,
                                           const VertexArrays &arrays);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_NUMPY_H
