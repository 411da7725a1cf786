//===- PlanMemory.h - a plan's operators as a memory problem ----*- C++ -*-===//
//
// The execution plan's step sequence, sized for a graph, as the input of the
// memory planner (support/MemoryPlanner.h): each plan step (a kernel
// launch, GEMM, loss, gradient helper; not releases or constants) is an
// operator reading its operands and writing its results, and the return
// (where the optimiser takes the gradients) reads what the plan returns and
// every parameter. Graph inputs and parameters start in the next tier.
// Values that are not per vertex or edge (parameters, their gradients,
// scalars) and smaller than `pinBelow` bytes are left out: they stay
// resident (their total is `pinnedBytes`, to take off the budget).
//
// With `intervals` P > 1 the problem is the chunked level's: graph-wide
// values split into P row intervals (tensor "v#j"); a step over rows runs
// once per interval j, reading and writing piece j (a reduction to a
// non-graph value accumulates: written at j = 0, updated after); a
// propagation runs per 2-D chunk (i, j), reading the other end's piece i
// and the row side's piece j, its results' piece j the running state
// (written at i = 0, updated after). With P > 1 a propagation also keeps
// a state piece per destination interval (its running reductions: written
// at i = 0, updated after, last read at i = P - 1, when its result piece is
// written). Chunks run in groups of `group` destination intervals: per
// group, source interval i outer, the group's j inner (1: j outer, i
// inner), so a source piece serves the whole group while it is resident.
// With `interleave` (the default), chains of consecutive ops over rows
// then run interval by interval, after the chunk group of a propagation
// heading the chain (interleaveRows in PlanMemory.cpp); without, every op
// runs over all its intervals before the next (op-major).
// The intervals' bounds are exec::chunkIntervals (slice bounds
// of the weight gradient), so P may come out smaller than asked. Where
// the graph says how many rows a chunk reads at its other end, and that
// is at most a quarter of its interval (kFewRows), the chunk's read of
// the other end's piece is a partial read of those rows
// (PlanOperator::partialReads).
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_ANALYSIS_PLANMEMORY_H
#define SAGA_ANALYSIS_PLANMEMORY_H

#include "support/MemoryPlanner.h"

#include "dialect/Saga.h"

#include <algorithm>
#include <functional>
#include <map>

namespace saga {

/// Where an operator of the problem comes from: a plan op, over row
/// interval j (-1: the whole op) and, for a propagation chunk, source
/// interval i (-1 otherwise).
struct PlanStep {
  mlir::Operation *op = nullptr;
  int64_t i = -1, j = -1;
};

/// What a tensor of the problem is: piece `piece` (-1: all of it) of a plan
/// value (mlir::Value's opaque pointer), or the running state of the
/// propagation `stateOf` over interval `piece`.
struct PlanPiece {
  void *value = nullptr;
  int64_t piece = -1;
  mlir::Operation *stateOf = nullptr;
};

/// Which 2-D chunks hold edges, for row intervals with the given bounds:
/// P x P flags, [i * P + j] for the edges from interval i into interval j
/// (in-edges of j's rows whose source lies in i; a model's self loops
/// included). Empty: not known, every chunk may.
using ChunkOccupancy =
    std::function<std::vector<uint8_t>(const std::vector<int32_t> &bounds)>;

/// How many rows of interval i each chunk (i, j) reads at its other end,
/// P x P, [i * P + j], in a CSR direction (`reversed`: rows are sources,
/// the other ends targets). Empty: not known.
using ChunkRowCounts = std::function<std::vector<int64_t>(
    bool reversed, const std::vector<int32_t> &bounds)>;

/// How many edges each 2-D chunk holds, P x P, [i * P + j] (the edges from
/// interval i into interval j, a model's self loops included). Empty: not
/// known.
using ChunkEdgeCounts =
    std::function<std::vector<int64_t>(const std::vector<int32_t> &bounds)>;

/// What sizes a plan's values: the graph's vertex and edge counts, and
/// where known which chunks are empty (an empty chunk reads none of its
/// sources: NGra's selective loading at its limit), how many rows each
/// chunk reads (so a chunk may load only those: selective loading) and how
/// many edges each chunk holds (so edge values split by interval).
struct GraphSize {
  int64_t vertices = 0, edges = 0;
  ChunkOccupancy occupancy;
  ChunkRowCounts rowCounts;
  ChunkEdgeCounts chunkEdges;
};

struct PlanMemory {
  MemoryProblem problem; // budget left 0: the caller's to set
  int64_t pinnedBytes = 0;
  std::vector<PlanStep> steps;   // per problem operator
  /// Per operator: the other end's pieces a 2-D chunk reads (and reads
  /// only there), which it may load in part.
  std::vector<std::vector<int>> otherEnd;
  std::vector<PlanPiece> pieces; // per problem tensor
  std::vector<int32_t> bounds;   // the row intervals (P + 1 entries)
  int64_t group = 1;             // destination intervals per chunk group
  bool interleaved = true;       // row-local chains interval by interval
  /// GraphSize::occupancy at `bounds` (P x P), or empty: every chunk may
  /// hold edges.
  std::vector<uint8_t> occupied;

  /// Whether chunk (i, j) of a propagation or edge map holds no edges: in
  /// its CSR direction (`reversed`: rows are sources, the other ends
  /// destinations in interval i). Such a chunk reads no other-end rows.
  bool chunkEmpty(int64_t i, int64_t j, bool reversed) const {
    const int64_t parts = int64_t(bounds.size()) - 1;
    if (occupied.size() != size_t(parts * parts) || i < 0 || j < 0)
      return false;
    return !occupied[size_t(reversed ? j * parts + i : i * parts + j)];
  }
  /// GraphSize::rowCounts at `bounds`, per direction ([1]: reversed), or
  /// empty.
  std::vector<int64_t> rowCounts[2];
  /// How many rows of interval i chunk (i, j) reads at its other end, or
  /// -1 when not known.
  int64_t chunkRowCount(int64_t i, int64_t j, bool reversed) const {
    const std::vector<int64_t> &c = rowCounts[reversed ? 1 : 0];
    const int64_t parts = int64_t(bounds.size()) - 1;
    if (c.size() != size_t(parts * parts) || i < 0 || j < 0)
      return -1;
    return c[size_t(i * parts + j)];
  }
  /// The bytes of one row of interval piece t (a value's piece j >= 0).
  int64_t rowBytes(int t) const {
    const PlanPiece &at = pieces[size_t(t)];
    return problem.tensors[size_t(t)].bytes /
           (bounds[size_t(at.piece) + 1] - bounds[size_t(at.piece)]);
  }
  /// Edge values split by destination interval (chunk order): with P > 1,
  /// where the chunks' edge counts are known and every edge value is made
  /// and read only by propagations and edge maps (over in-edges), piece j
  /// of an edge value holds the edges into interval j, numbered from
  /// edgeFirst[j] by source interval, then in the in-edge CSR's order
  /// (dst, src, id). Chunk (i, j)'s edges are then chunkBase[i * P + j] on;
  /// a kernel over a chunk reads its edges' numbers as their ids
  /// (chunked::forEachKernelPart gives them), and a propagation or edge
  /// map over chunk (i, j) touches piece j, or piece i when reversed (the
  /// other end's: sources' out-edges into interval i). Empty: edge values
  /// stay whole, read by edge id.
  std::vector<int64_t> chunkEdges; // P x P, [i * P + j]
  std::vector<int64_t> chunkBase;  // P x P, [i * P + j]
  std::vector<int64_t> edgeFirst;  // P + 1
  bool edgesSplit() const { return !chunkEdges.empty(); }
  /// Whether value pieces are per interval (vertex values; edge values
  /// when split).
  bool splitsByInterval(mlir::Type type) const {
    auto d = mlir::dyn_cast<DomainType>(type);
    return bounds.size() > 2 && d && (!d.isEdgeDomain() || edgesSplit());
  }
  /// The first row of piece j of a value of `type` (a vertex or, split, an
  /// edge value), in the whole value's rows.
  int64_t firstRow(mlir::Type type, int64_t j) const {
    auto d = mlir::cast<DomainType>(type);
    return d.isEdgeDomain() ? edgeFirst[size_t(j)] : bounds[size_t(j)];
  }
  /// How many of the P x P chunks are empty.
  int64_t emptyChunks() const {
    return int64_t(std::count(occupied.begin(), occupied.end(), 0));
  }
};

/// The problem's tensors by (value, piece) and by (propagation, piece) for
/// running states.
/// Whether a plan has edge values and they may be split by destination
/// interval (PlanMemory::chunkEdges): every one is made by an edge map over
/// in-edges (or is a graph input) and read only by propagations and such
/// edge maps, whose chunks say which edges they touch.
bool edgeValuesSplittable(ModelOp plan);

struct PieceIndex {
  std::map<std::pair<void *, int64_t>, int> values;
  std::map<std::pair<mlir::Operation *, int64_t>, int> states;
};
PieceIndex indexPieces(const PlanMemory &pm);

PlanMemory planMemoryProblem(ModelOp plan, GraphSize graph, int64_t pinBelow,
                             int64_t intervals = 1, int64_t group = 1,
                             bool interleave = true);

} // namespace saga

#endif // SAGA_ANALYSIS_PLANMEMORY_H
