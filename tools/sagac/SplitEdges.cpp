//===- SplitEdges.cpp - sagac split-edges ---------------------------------===//
//
// Link prediction's held-out edges from the command line: any dataset Saga
// reads, split as PyG's RandomLinkSplit splits (runtime/graph/EdgeSplit.h),
// written as an .npz that np.load, PyG and DGL scripts read.
//
//===----------------------------------------------------------------------===//

#include "tools/sagac/Commands.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace saga;

int saga::runSplitEdges(const std::string &input, const std::string &output,
                        const EdgeSplitOptions &options,
                        const VertexArrays &arrays, const std::string &format) {
  auto fail = [](llvm::Error e) {
    llvm::errs() << "sagac: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  };
  if (!llvm::StringRef(output).ends_with(".npz"))
    return fail(llvm::createStringError(
        "split-edges writes an .npz: name the output NAME.npz, not '" +
        output + "'"));
  auto data = loadDataset(input, arrays, format);
  if (!data)
    return fail(data.takeError());
  auto split = splitEdges(data->edges, options);
  if (!split)
    return fail(split.takeError());
  if (llvm::Error e = writeEdgeSplitNpz(output, *split))
    return fail(std::move(e));
  llvm::outs() << llvm::format(
      "wrote %s: %zu train, %zu + %zu val, %zu + %zu test pairs (positive + "
      "negative, %s) of %s's %d vertices\n",
      output.c_str(), split->trainPos.size(), split->valPos.size(),
      split->valNeg.size(), split->testPos.size(), split->testNeg.size(),
      split->undirected ? "undirected" : "directed", input.c_str(),
      split->numVertices);
  return 0;
}
