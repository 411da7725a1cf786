// Trains a .saga model on a dataset with Saga's C++ API, from a project of
// its own: train_cora MODEL DATA EPOCHS. Prints the final accuracies.
#include "api/Model.h"
#include "runtime/graph/GraphFile.h"
#include "runtime/graph/Loaders.h"
#include "api/Trainer.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

int main(int argc, char **argv) {
  if (argc != 4) {
    llvm::errs() << "usage: train_cora MODEL DATA EPOCHS\n";
    return 2;
  }
  saga::CompileOptions co;
  co.training = true;
  auto model = saga::Model::compileFile(argv[1], co);
  if (!model) {
    llvm::errs() << llvm::toString(model.takeError()) << "\n";
    return 1;
  }
  auto data = saga::loadDataset(argv[2]);
  if (!data) {
    llvm::errs() << llvm::toString(data.takeError()) << "\n";
    return 1;
  }
  saga::rowNormalize(data->features);
  saga::Graph g = saga::Graph::build(data->edges.numVertices, data->edges.src,
                                     data->edges.dst, (*model)->selfLoops());
  saga::Model &m = **model;
  if (llvm::Error e = m.setGraph(g)) {
    llvm::errs() << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  saga::Tensor labels({int64_t(data->labels.size())}, saga::DType::I32);
  std::copy(data->labels.begin(), data->labels.end(), labels.i32());
  for (const saga::ValueInfo &in : m.inputs()) {
    llvm::Error e = in.dtype == saga::DType::I32
                        ? m.setInput(in.name, std::move(labels))
                        : m.setInput(in.name, std::move(data->features));
    if (e) {
      llvm::errs() << llvm::toString(std::move(e)) << "\n";
      return 1;
    }
  }
  m.initParams(0);
  saga::TrainOptions t;
  t.epochs = unsigned(std::atoi(argv[3]));
  saga::Split split{data->labels, data->train, data->val, data->test};
  auto result = saga::train(m, split, t);
  if (!result) {
    llvm::errs() << llvm::toString(result.takeError()) << "\n";
    return 1;
  }
  llvm::outs() << "epochs " << result->history.size() << " test accuracy "
               << result->final.testAcc << "\n";
  return 0;
}
