//===- LinkMetrics.h - what link prediction reports -------------*- C++ -*-===//
//
// The metrics link-prediction papers and OGB report, from the scores of
// positive pairs (edges) and negative pairs (non-edges):
//   ROC AUC: the probability that a random positive outscores a random
//     negative, ties counting one half (the Mann-Whitney statistic, as
//     scikit-learn's roc_auc_score computes it);
//   Hits@K: the fraction of positives that outscore the K-th highest
//     negative (OGB's ogbl-collab and ogbl-ddi; 1 when there are fewer
//     than K negatives, as OGB's evaluator gives);
//   MRR: the mean over positives of 1 / rank among the positive's own
//     negatives, a tie ranking half-way (OGB's ogbl-citation2).
// Computed in double precision; the order of the scores does not matter;
// a NaN score makes the metric NaN.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_TRAIN_LINKMETRICS_H
#define SAGA_RUNTIME_TRAIN_LINKMETRICS_H

#include <cstdint>
#include <vector>

namespace saga {

/// NaN when either list is empty.
double rocAuc(const std::vector<float> &positive,
              const std::vector<float> &negative);
/// NaN without positives or with k < 1.
double hitsAtK(const std::vector<float> &positive,
               const std::vector<float> &negative, int64_t k);
/// `negative` holds `perPositive` scores for each positive, row by row;
/// NaN without positives or when the sizes disagree.
double meanReciprocalRank(const std::vector<float> &positive,
                          const std::vector<float> &negative,
                          int64_t perPositive);

} // namespace saga

#endif // SAGA_RUNTIME_TRAIN_LINKMETRICS_H
