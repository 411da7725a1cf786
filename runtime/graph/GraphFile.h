//===- GraphFile.h - Saga's on-disk graph format (.sgf) ---------*- C++ -*-===//
//
// One file holds a dataset for out-of-core runs: the CSR both ways with edge
// ids, the 2-D chunk index over P vertex intervals (chunk (i, j): the edges
// from interval i into interval j, stored contiguously as (dst, src, id)
// records sorted like the in-edge CSR, so that one chunk is one sequential
// read), each chunk's distinct sources and destinations (counted for every
// chunk, listed for those with few: selective loading), the features
// (interval j's rows contiguous), labels and splits.
//
// Layout, little-endian: a 4096-byte header (magic "SAGAGRF1", version,
// counts, the section table: kind, offset, bytes, CRC-32 of each section;
// the header's own CRC-32 in its last 4 bytes), then the sections, each at a
// 4096-byte boundary (O_DIRECT reads need it). Each chunk and each feature
// interval and each row list also has its own CRC-32, so a partial read is
// checked too.
// Reads use pread, optionally with O_DIRECT (no page cache), never mmap.
// Every error names the file, and where it applies the section and offset.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_GRAPH_GRAPHFILE_H
#define SAGA_RUNTIME_GRAPH_GRAPHFILE_H

#include "runtime/graph/EdgeChunks.h"
#include "runtime/graph/Loaders.h"
#include "runtime/memory/MappedAllocator.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace saga {

/// Version 2 added each chunk's distinct rows (chunk-row-table,
/// chunk-rows: counted for every chunk end, listed where they are at most
/// 1/kFewRows of their interval, EdgeChunks.h); version 1 files are read
/// without them.
constexpr uint32_t kGraphFileVersion = 2;

struct GraphFileInfo {
  std::string name;
  int64_t numVertices = 0, numEdges = 0, numFeatures = 0, numClasses = 0;
  int64_t intervals = 1; // P: the chunk index has P x P chunks
  int64_t numTrain = 0, numVal = 0, numTest = 0;
};

/// An edge of a chunk.
struct ChunkEdge {
  int32_t dst, src, id;
  bool operator==(const ChunkEdge &o) const {
    return dst == o.dst && src == o.src && id == o.id;
  }
};

/// Feature rows made on demand, for files whose features do not fit in
/// memory: `fill(begin, end, to)` writes rows [begin, end) ([rows, width]).
struct FeatureRows {
  int64_t width = 0;
  std::function<void(int64_t begin, int64_t end, float *to)> fill;
};

/// Writes `d` with a chunk index over `intervals` row intervals (the
/// chunked level's: chunkIntervals, so fewer on small graphs). With `rows`,
/// the features come from it, interval by interval, not from d.features.
/// The file appears whole or not at all (written beside it, flushed to
/// disk, then renamed); a failure (a full disk, a folder that cannot be
/// written) is an error naming the path.
llvm::Error writeGraphFile(const std::string &path, const Dataset &d,
                           int64_t intervals,
                           const FeatureRows *rows = nullptr);

/// Whether `path` is a file that starts with the graph file's magic.
bool isGraphFile(const std::string &path);

class GraphFile {
public:
  /// Opens and checks the header (magic, version, header checksum, the
  /// section table against the file's size). With `direct`, reads bypass
  /// the page cache (O_DIRECT).
  static llvm::Expected<std::unique_ptr<GraphFile>>
  open(const std::string &path, bool direct = false);
  ~GraphFile();

  const GraphFileInfo &info() const { return info_; }
  const std::string &filePath() const { return path; }
  /// Interval i is [bounds()[i], bounds()[i + 1]).
  const std::vector<int32_t> &bounds() const { return bounds_; }

  /// The whole dataset (edges in id order), every section's checksum
  /// verified; without `features`, the features are left empty (and not
  /// read).
  llvm::Expected<Dataset> readAll(bool features = true);
  /// Feature rows `rows` (file vertex ids), in that order: the intervals
  /// that hold them are read one at a time, each checksummed, and only
  /// those rows kept (a part of a partitioned run never holds the whole
  /// matrix). `intervalsRead` gets how many intervals were read.
  llvm::Expected<Tensor> readFeatureRowsOf(const std::vector<int32_t> &rows,
                                           int64_t *intervalsRead = nullptr);
  /// Chunk (i, j): the edges from interval i into interval j, in one read.
  llvm::Expected<std::vector<ChunkEdge>> readChunk(int64_t i, int64_t j);
  /// Interval j's feature rows, [rows, numFeatures], in one read.
  llvm::Expected<Tensor> readFeatures(int64_t j);

  /// Labels, class count and splits (no edges, no features).
  llvm::Expected<Dataset> readLabelsOnly();
  /// The graph without its edge arrays: counts and both offset arrays
  /// (with `selfLoops`, one more in-edge and out-edge per vertex), for a
  /// run that reads its chunks from the file (GraphFileChunks).
  llvm::Expected<Graph> readSkeleton(bool selfLoops);
  /// Edges in chunk (i, j).
  int64_t chunkEdgeCount(int64_t i, int64_t j) const;
  /// Edges [first, first + count) of chunk (i, j) into `to`, continuing
  /// the running CRC-32 `crc` when given; checkChunk compares the whole
  /// chunk's with the file's.
  llvm::Error readChunkPart(int64_t i, int64_t j, int64_t first, int64_t count,
                            ChunkEdge *to, uint32_t *crc);
  llvm::Error checkChunk(int64_t i, int64_t j, uint32_t crc);
  /// Interval j's feature rows into `to` ([rows, numFeatures] floats),
  /// each row divided by its sum with `normalize` (rowNormalize).
  llvm::Error readFeatureRows(int64_t j, float *to, bool normalize = false);
  /// Rows [begin, end), whole intervals of the file, into `to`; each row
  /// divided by its sum with `normalize` (rowNormalize).
  llvm::Error readFeatureRange(int64_t begin, int64_t end, float *to,
                               bool normalize);

  /// Whether the file counts its chunks' rows (version 2 on).
  bool hasChunkRows() const { return !rowTable.empty(); }
  /// How many of the 2 P^2 chunk ends (sources, destinations) have their
  /// rows listed.
  int64_t listedChunkRows() const;
  /// The distinct sources (of interval i) or, with `targets`, destinations
  /// (of interval j) of chunk (i, j); needs hasChunkRows().
  int64_t chunkRowCount(int64_t i, int64_t j, bool targets) const;
  /// Their list, ascending, relative to their interval's first row, in one
  /// read checked against its CRC-32; null where the file does not list
  /// it (more than 1/kFewRows of the interval, or a version 1 file).
  llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
  readChunkRows(int64_t i, int64_t j, bool targets);

  /// Bytes read from the file so far.
  int64_t bytesRead() const { return bytesRead_; }
  /// Seconds spent in reads so far (from any thread).
  double readSeconds() const { return double(readNanos_) * 1e-9; }

private:
  GraphFile() = default;
  struct Section {
    uint32_t kind;
    uint64_t offset, bytes;
    uint32_t crc;
  };
  llvm::Error readAt(uint64_t offset, uint64_t bytes, void *to,
                     const std::string &what);
  llvm::Expected<std::vector<char>> readSection(uint32_t kind);
  llvm::Error readLabels(Dataset &d);
  llvm::Error corrupt(const std::string &what, uint64_t offset,
                      const std::string &why) const;

  std::string path;
  int fd = -1;
  bool direct = false;
  uint64_t fileBytes = 0;
  GraphFileInfo info_;
  std::vector<int32_t> bounds_;
  std::vector<Section> sections;
  struct ChunkEntry {
    uint64_t first, count;
    uint32_t crc;
  };
  std::vector<ChunkEntry> chunkTable;
  struct RowListEntry {
    uint64_t count, first; // first: an index into chunk-rows, or ~0
    uint32_t crc;
  };
  std::vector<RowListEntry> rowTable; // per chunk: sources, destinations
  std::vector<uint32_t> featureCrcs;
  // Reads come from the compute thread (chunks) and the transfer thread
  // (feature rows).
  std::atomic<int64_t> bytesRead_{0}, readNanos_{0};
};

/// A graph file's chunks as the chunked executor reads them, one read per
/// chunk (self loops, when the model adds them, are added to the diagonal
/// chunks with the ids Graph::build gives them). The run's intervals must
/// be the file's.
class GraphFileChunks : public ChunkSource {
public:
  /// Parts of at most `partEdges` of the file's records (about 20 bytes
  /// per edge in memory while a part runs: 40 MiB by default).
  GraphFileChunks(GraphFile &file, bool selfLoops,
                  int64_t partEdges = int64_t(1) << 21);
  llvm::Error forEachPart(bool reversed, const std::vector<int32_t> &bounds,
                          int64_t i, int64_t j, const PartFn &fn) override;
  /// From the chunk index (at the file's intervals; with self loops the
  /// diagonal chunks hold one more edge per row).
  std::vector<int64_t> chunkEdgeCounts(const std::vector<int32_t> &bounds) override;
  /// From the file's chunk row table (version 2, at the file's intervals).
  std::vector<int64_t> chunkRowCounts(bool reversed,
                                      const std::vector<int32_t> &bounds) override;
  /// Read from the file's lists of the chunks with few rows.
  llvm::Expected<std::shared_ptr<const std::vector<int32_t>>>
  chunkRows(bool reversed, const std::vector<int32_t> &bounds, int64_t i,
            int64_t j) override;
  bool fromStorage() const override { return true; }

private:
  struct PartArrays { // made by a reader thread, freed by the kernels'
    MappedVector<int64_t> offsets;
    MappedVector<int32_t> others, ids;
  };
  /// Parts' arrays whose views were dropped, kept for the next parts (a
  /// fresh part's pages would be zeroed by the kernel each time); shared
  /// with the views, which may outlive the source.
  struct SparePool {
    std::mutex mutex;
    std::vector<std::unique_ptr<PartArrays>> spare;
  };
  std::shared_ptr<PartArrays> takeArrays();
  GraphFile &file;
  bool selfLoops;
  int64_t partEdges;
  std::shared_ptr<SparePool> pool = std::make_shared<SparePool>();
};

/// Any dataset Saga reads, detected by content: a Planetoid folder, an OGB
/// node-property folder (runtime/graph/OgbFolder.h), a graph file (.sgf)
/// or a NumPy .npz archive (runtime/graph/Numpy.h); an error names the
/// path and what it is not.
llvm::Expected<Dataset> loadDataset(const std::string &path);
/// The same, or with `arrays` (runtime/graph/Numpy.h) a graph-only file
/// (Matrix Market, an edge list such as SNAP's) and its vertex arrays.
struct VertexArrays;
llvm::Expected<Dataset> loadDataset(const std::string &path,
                                    const VertexArrays &arrays);
/// The same read as `format` says (sagac's --format): planetoid, ogb, npz,
/// sgf, mtx or edgelist; empty: detected by content.
llvm::Expected<Dataset> loadDataset(const std::string &path,
                                    const VertexArrays &arrays,
                                    const std::string &format);

} // namespace saga

#endif // SAGA_RUNTIME_GRAPH_GRAPHFILE_H
