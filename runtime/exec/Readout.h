//===- Readout.h - graph readouts over the rows of a batch of graphs -*- C++ -*-===//
//
// saga.readout and saga.readout_grad on host rows: each graph of a batch
// (bounds: graph g owns rows [bounds[g], bounds[g+1])) reduced over its
// rows, element by element, the result written to every row of the graph.
// Sums add in row order in double; a mean divides that sum by the rows; a
// max or min compares floats. The CUDA executor's kernels
// (cuda/RuntimeKernels.cpp: saga_rt_readout, saga_rt_readout_grad) follow
// the same order, so both devices give the same bits.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_EXEC_READOUT_H
#define SAGA_RUNTIME_EXEC_READOUT_H

#include "dialect/Saga.h"

#include <cstdint>
#include <vector>

namespace saga {

class ThreadPool;

/// r[v] = the reduction `kind` of x over the rows of v's graph ([V, w]
/// rows; graphs in parallel on `pool`).
void readoutRows(ReduceKind kind, const float *x, int64_t w,
                 const std::vector<int64_t> &bounds, float *r,
                 ThreadPool &pool);

/// The gradient of a max or min readout y = readout(x): per graph and
/// element, the sum of dy over the graph's rows goes to the first row whose
/// x equals y (its arg max or arg min); every other row gets 0.
void readoutGradRows(const float *x, const float *y, const float *dy,
                     int64_t w, const std::vector<int64_t> &bounds, float *dx,
                     ThreadPool &pool);

} // namespace saga

#endif // SAGA_RUNTIME_EXEC_READOUT_H
