//===- ParamsFile.h - parameters as text ------------------------*- C++ -*-===//
//
// A readable, diffable format for parameter values:
//
//   # comment (a '#' that starts a token; names such as GCNConv#0.W keep theirs)
//   GCNConv#0.W 1433 16        <- name, then the shape
//   0.25 -0.5 ...              <- exactly 1433 * 16 numbers, any layout
//
// Errors name the file, the line and the problem.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_RUNTIME_PARAMSFILE_H
#define SAGA_RUNTIME_PARAMSFILE_H

#include "runtime/memory/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace saga {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

llvm::Expected<NamedTensors> loadParamsFile(const std::string &path);
/// `comment` (any lines) is written after the header line, each line as a
/// comment: what travels with the parameters (ROC's cost model of a
/// --partition run, runtime/distributed/Partitioner.h).
llvm::Error saveParamsFile(const std::string &path, const NamedTensors &params,
                           llvm::StringRef comment = "");

} // namespace saga

#endif // SAGA_RUNTIME_PARAMSFILE_H
