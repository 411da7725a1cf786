//===- TrainingNotImplementedTest.cpp - what the autodiff cannot do yet ---===//
//
// Models the autodiff does not handle yet (multi-row matmuls, a model
// without a loss) must fail to compile for training with a message saying
// so, while their inference plans compile; trainStep needs the training
// plan. GAT's softmax_sum gather compiles for training (max/min reductions
// and concat are differentiated: GradientCheck's reduce_extremum, concat).
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <string>

using namespace saga;
using namespace sagatest::training;

namespace {

//===----------------------------------------------------------------------===//
// What the autodiff does not handle yet
//===----------------------------------------------------------------------===//

std::string trainingCompileError(const std::string &source,
                                 const std::string &name) {
  CompileOptions co;
  co.training = true;
  auto model = Model::compileSource(source, name, co);
  EXPECT_FALSE(bool(model)) << name << ": compiled for training";
  // The inference plan of the same model compiles.
  auto inference = Model::compileSource(source, name);
  EXPECT_TRUE(bool(inference))
      << name << ": "
      << (inference ? "" : llvm::toString(inference.takeError()));
  return model ? "" : llvm::toString(model.takeError());
}

// GAT's softmax_sum gather has a compiled gradient (checked against finite
// differences in GradientCheckDropout.ExampleFiles); compileFile builds its
// training plan.
TEST(TrainingSoftmax, GatCompilesForTraining) {
  CompileOptions co;
  co.training = true;
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/gat.saga", co);
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
}

TEST(TrainingNotImplemented, MultiRowMatmul) {
  std::string m = trainingCompileError(R"(
graph { vertex x: f32[4]; vertex label: class[3]; }
layer L(in: int) {
  param W: f32[2, 3] = glorot;
  apply_vertex(v, a) { return sum(reshape(v.h, [2, 2]) @ W, 0); }
}
model M { out = L(4)(x); loss = cross_entropy(out, label); }
)",
                                       "matmul.saga");
  expectContains(m, "error: 'saga.matmul' op gradient of a matmul with a "
                    "multi-row left side is not implemented yet");
}

TEST(TrainingNotImplemented, ModelWithoutLoss) {
  std::string m = trainingCompileError(R"(
graph { vertex x: f32[4]; }
layer L(in: int) {
  param W: f32[in, 3] = glorot;
  apply_vertex(v, a) { return v.h @ W; }
}
model M { out = L(4)(x); }
)",
                                       "noloss.saga");
  expectContains(m, "noloss.saga:7:1: error: 'saga.model' op training needs "
                    "a scalar 'loss' result");
}

TEST(TrainingNotImplemented, TrainStepWithoutTrainingPlan) {
  auto model = Model::compileSource(example(kGcn, "0.5"));
  ASSERT_TRUE(bool(model)) << llvm::toString(model.takeError());
  ASSERT_EQ(errorText(bindRandom(**model, graphFor("tiny", true), 3, "x")), "");
  auto step = (*model)->trainStep({}, 0);
  ASSERT_FALSE(bool(step));
  expectContains(llvm::toString(step.takeError()),
                 "the model was compiled without its training plan "
                 "(CompileOptions::training)");
}

} // namespace
