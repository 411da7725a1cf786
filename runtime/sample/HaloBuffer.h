//===- HaloBuffer.h - MassiveGNN's prefetched buffer of halo features -*- C++ -*-===//
//
// A trainer of a distributed mini-batch run owns a partition; the features
// of the other vertices its batches read come from their owners. MassiveGNN
// (Cluster 2024; pnnl/MassiveGNN, massivegnn/prefetch/prefetch.py) keeps the
// features of part of the partition's halo (the remote in-neighbours of its
// vertices) in a buffer, prefetched and continuously refreshed. This class
// is that buffer's policy, as the code does it, without the transport:
//
//  - fill: the top floor(f x |halo|) halo vertices by in-degree, fetched in
//    one request; every slot's score starts at 1, and a buffered vertex's
//    miss count is "in the buffer" (-1);
//  - each mini-batch (lookup): every slot's score is multiplied by
//    (1 - alpha), and a slot the batch reads gets that decay undone; the
//    batch's remote vertices the buffer lacks are fetched; each of them
//    that is a halo vertex has its miss count incremented, except on an
//    eviction round (the code counts misses on a background task it only
//    starts on other rounds);
//  - every Delta mini-batches (the Delta-th, 2 Delta-th, ...): slots scoring
//    below tau = (1 - alpha)^Delta (rounded to 3 decimals, as the code does)
//    are replaced, in slot order, by the most-missed halo vertices (miss
//    count > 0, most first; ties by id), as many as there are of the fewer;
//    their features come in the same request as the batch's misses; a
//    newcomer's score starts from its miss count and the evicted vertex's
//    miss count from its last score.
//
// Counters: hits and misses (of halo vertices), slots replaced.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_SAMPLE_HALOBUFFER_H
#define SAGA_RUNTIME_SAMPLE_HALOBUFFER_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace saga {

struct HaloBufferOptions {
  double fraction = 0;    // f: the share of the halo buffered; 0: no buffer
  int64_t period = 32;    // Delta: mini-batches between evictions
  double alpha = 0.05;    // score decay per mini-batch
};

class HaloBuffer {
public:
  /// `halo`: the partition's halo vertices, ascending whole-graph ids;
  /// `inDegree`: their in-degrees, in the same order; `width`: floats per
  /// feature row.
  HaloBuffer(std::vector<int32_t> halo, const std::vector<int64_t> &inDegree,
             int64_t width, const HaloBufferOptions &options);

  /// The vertices of the initial fill (slot order), to fetch in one request
  /// and hand to fill().
  const std::vector<int32_t> &slots() const { return slotIds; }
  void fill(const float *rows);

  /// What one mini-batch does with the buffer.
  struct Plan {
    /// Per needed vertex: its slot, or -1 (fetched).
    std::vector<int32_t> slotOf;
    /// The needed vertices to fetch (not buffered), in the order needed.
    std::vector<int32_t> fetch;
    /// On an eviction round: the slots replaced and their newcomers, whose
    /// features come with `fetch` (after them, in this order).
    std::vector<int32_t> replacedSlots, newcomers;
  };
  /// The lookup of a mini-batch's remote vertices (`needed`, distinct):
  /// scores decay and hits restore theirs, misses are counted, and every
  /// Delta-th batch chooses replacements. Call install() with the fetched
  /// rows before the next lookup.
  Plan lookup(const std::vector<int32_t> &needed);
  /// Puts the newcomers' rows (plan.newcomers.size() x width) in their
  /// slots, once the batch has read its hits' rows: slots are kept in
  /// vertex order, so the plan's slots are stale afterwards.
  void install(const Plan &plan, const float *newcomerRows);

  const float *row(int32_t slot) const {
    return features.data() + int64_t(slot) * width;
  }
  int64_t size() const { return int64_t(slotIds.size()); }
  double threshold() const { return tau; }
  /// A slot's current score and a halo vertex's miss count (-1: buffered),
  /// for tests.
  float score(int32_t slot) const { return scores[std::size_t(slot)]; }
  float missCount(int32_t vertex) const;

  struct Counters {
    int64_t hits = 0, misses = 0; // halo vertices needed, found or not
    int64_t lookups = 0, replaced = 0;
  };
  const Counters &counters() const { return counters_; }

private:
  /// Index of `v` in `halo`, or -1.
  int64_t haloIndex(int32_t v) const;

  std::vector<int32_t> halo;
  int64_t width;
  HaloBufferOptions options;
  float decay, tau;
  std::vector<int32_t> slotIds;   // vertex in each slot, ascending
  std::vector<float> scores;      // per slot
  std::vector<float> features;    // slots x width
  std::vector<float> normal;      // per halo vertex: miss count, -1 buffered
  Counters counters_;
};

} // namespace saga

#endif // SAGA_RUNTIME_SAMPLE_HALOBUFFER_H
