//===- ModelApiErrorsTest.cpp - the model API's error paths ---------------===//
//
// Model's API refuses misuse with a message: running without a graph, an
// input or a parameter; inputs and parameters of the wrong shape or name; a
// graph whose self loops do not match the model's; sources with syntax or
// semantic errors (at their location), without a model, or missing.
//
//===----------------------------------------------------------------------===//

#include "ModelReferenceTestUtil.h"
#include "api/Model.h"

#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <string>

using namespace saga;
using namespace sagatest::modelref;

namespace {

//===----------------------------------------------------------------------===//
// Error paths of the API
//===----------------------------------------------------------------------===//

std::unique_ptr<Model> compileExample(const char *file) {
  auto model = Model::compileFile(std::string(SAGA_EXAMPLES_DIR "/") + file);
  EXPECT_TRUE(bool(model)) << llvm::toString(model.takeError());
  return model ? std::move(*model) : nullptr;
}

/// The error's message, or "" (and a failure) when there was none.
std::string messageOf(llvm::Error e) {
  EXPECT_TRUE(bool(e)) << "expected an error";
  return e ? llvm::toString(std::move(e)) : "";
}
template <typename T> std::string messageOf(llvm::Expected<T> &value) {
  EXPECT_FALSE(bool(value)) << "expected an error";
  return value ? "" : llvm::toString(value.takeError());
}

/// A GCN (examples/gcn.saga) ready to run on the small graph.
struct ReadyGcn {
  std::unique_ptr<Model> model = compileExample("gcn.saga");
  const EdgeList &list = edgeLists()[0];
  const Graph &graph = sagaGraph(list, true);
};

TEST(ModelApiErrors, ForwardWithoutGraph) {
  auto model = compileExample("gcn.saga");
  ASSERT_TRUE(model);
  model->initParams(0);
  auto result = model->forward();
  EXPECT_NE(messageOf(result).find("no graph: call setGraph first"),
            std::string::npos);
}

TEST(ModelApiErrors, MissingInput) {
  ReadyGcn g;
  ASSERT_TRUE(g.model);
  g.model->initParams(0);
  ASSERT_FALSE(bool(g.model->setGraph(g.graph)));
  ASSERT_FALSE(bool(g.model->setInput("label", randomLabels(g.list, 7))));
  auto result = g.model->forward();
  EXPECT_NE(messageOf(result).find("graph input 'x' is not set"),
            std::string::npos);
  // Setting it makes the model runnable.
  ASSERT_FALSE(bool(g.model->setInput("x", randomFeatures(g.list, 1433))));
  auto ok = g.model->forward();
  EXPECT_TRUE(bool(ok)) << (ok ? "" : llvm::toString(ok.takeError()));
}

TEST(ModelApiErrors, MissingLabelInput) {
  ReadyGcn g;
  ASSERT_TRUE(g.model);
  g.model->initParams(0);
  ASSERT_FALSE(bool(g.model->setGraph(g.graph)));
  ASSERT_FALSE(bool(g.model->setInput("x", randomFeatures(g.list, 1433))));
  auto result = g.model->forward();
  EXPECT_NE(messageOf(result).find("graph input 'label' is not set"),
            std::string::npos);
}

TEST(ModelApiErrors, InputWithWrongShape) {
  ReadyGcn g;
  ASSERT_TRUE(g.model);
  g.model->initParams(0);
  ASSERT_FALSE(bool(g.model->setGraph(g.graph)));
  ASSERT_FALSE(bool(g.model->setInput("label", randomLabels(g.list, 7))));
  const int64_t V = g.list.numVertices;
  const std::string want =
      "the model needs [" + std::to_string(V) + ", 1433] f32";

  // Wrong width.
  ASSERT_FALSE(bool(g.model->setInput("x", randomFeatures(g.list, 1432))));
  auto r1 = g.model->forward();
  std::string m1 = messageOf(r1);
  EXPECT_NE(m1.find("graph input 'x' has shape [" + std::to_string(V) +
                    ", 1432] f32"),
            std::string::npos)
      << m1;
  EXPECT_NE(m1.find(want), std::string::npos) << m1;

  // Wrong row count.
  ASSERT_FALSE(bool(g.model->setInput("x", Tensor({V + 1, 1433}))));
  auto r2 = g.model->forward();
  std::string m2 = messageOf(r2);
  EXPECT_NE(m2.find("graph input 'x' has shape [" + std::to_string(V + 1) +
                    ", 1433] f32"),
            std::string::npos)
      << m2;

  // Wrong element type.
  ASSERT_FALSE(bool(g.model->setInput("x", Tensor({V, 1433}, DType::I32))));
  auto r3 = g.model->forward();
  std::string m3 = messageOf(r3);
  EXPECT_NE(m3.find("i32"), std::string::npos) << m3;
  EXPECT_NE(m3.find(want), std::string::npos) << m3;

  // Labels of the wrong type.
  ASSERT_FALSE(bool(g.model->setInput("x", randomFeatures(g.list, 1433))));
  ASSERT_FALSE(bool(g.model->setInput("label", Tensor({V}))));
  auto r4 = g.model->forward();
  EXPECT_NE(messageOf(r4).find("graph input 'label' has shape"),
            std::string::npos);

  // A correct input afterwards runs.
  ASSERT_FALSE(bool(g.model->setInput("label", randomLabels(g.list, 7))));
  auto ok = g.model->forward();
  EXPECT_TRUE(bool(ok)) << (ok ? "" : llvm::toString(ok.takeError()));
}

TEST(ModelApiErrors, UnknownInputName) {
  auto model = compileExample("gcn.saga");
  ASSERT_TRUE(model);
  EXPECT_NE(messageOf(model->setInput("y", Tensor({4, 1433})))
                .find("the model has no graph input 'y'"),
            std::string::npos);
}

TEST(ModelApiErrors, SetParamWithWrongShape) {
  auto model = compileExample("gcn.saga");
  ASSERT_TRUE(model);
  std::string m = messageOf(model->setParam("GCNConv#0.W", Tensor({16, 1433})));
  EXPECT_NE(m.find("parameter 'GCNConv#0.W' needs [1433, 16] f32, got [16, "
                   "1433] f32"),
            std::string::npos)
      << m;
  EXPECT_NE(messageOf(model->setParam("GCNConv#1.b", Tensor({1, 7})))
                .find("parameter 'GCNConv#1.b' needs [7] f32"),
            std::string::npos);
  // A rejected value is not kept: the parameter is still unset.
  EXPECT_EQ(model->param("GCNConv#0.W"), nullptr);
}

TEST(ModelApiErrors, SetParamWithUnknownName) {
  auto model = compileExample("gcn.saga");
  ASSERT_TRUE(model);
  for (const char *name : {"GCNConv#2.W", "W", "GCNConv#0.w", "GATConv#0.W"})
    EXPECT_NE(messageOf(model->setParam(name, Tensor({1433, 16})))
                  .find(std::string("the model has no parameter '") + name +
                        "'"),
              std::string::npos)
        << name;
}

TEST(ModelApiErrors, ParamNotSet) {
  ReadyGcn g;
  ASSERT_TRUE(g.model);
  ASSERT_FALSE(bool(g.model->setGraph(g.graph)));
  ASSERT_FALSE(bool(g.model->setInput("x", randomFeatures(g.list, 1433))));
  ASSERT_FALSE(bool(g.model->setInput("label", randomLabels(g.list, 7))));
  auto result = g.model->forward();
  std::string m = messageOf(result);
  EXPECT_NE(m.find("parameter 'GCNConv#"), std::string::npos) << m;
  EXPECT_NE(m.find("is not set"), std::string::npos) << m;
}

TEST(ModelApiErrors, GraphWithoutSelfLoopsForSelfLoopModel) {
  auto model = compileExample("gcn.saga");
  ASSERT_TRUE(model);
  ASSERT_TRUE(model->selfLoops());
  std::string m = messageOf(model->setGraph(sagaGraph(edgeLists()[0], false)));
  EXPECT_NE(m.find("asks for self loops but the graph was built without them"),
            std::string::npos)
      << m;
  // The graph was not taken.
  model->initParams(0);
  auto result = model->forward();
  EXPECT_NE(messageOf(result).find("no graph"), std::string::npos);
}

TEST(ModelApiErrors, GraphWithSelfLoopsForModelWithout) {
  for (const char *file : {"gin.saga", "graphsage.saga", "ggcn.saga"}) {
    auto model = compileExample(file);
    ASSERT_TRUE(model);
    ASSERT_FALSE(model->selfLoops()) << file;
    std::string m = messageOf(model->setGraph(sagaGraph(edgeLists()[0], true)));
    EXPECT_NE(m.find("has no self loops but the graph was built with them"),
              std::string::npos)
        << file << ": " << m;
  }
}

TEST(ModelApiErrors, SyntaxErrorHasLocation) {
  // Line 3, column 1: the '}' where ';' or '=' was expected.
  const char *source = "graph {\n  vertex x: f32[4]\n}\n"
                       "model M { out = x; }\n";
  auto model = Model::compileSource(source);
  std::string m = messageOf(model);
  std::smatch match;
  ASSERT_TRUE(std::regex_search(
      m, match, std::regex(R"(<string>:([0-9]+):([0-9]+): error:)")))
      << m;
  EXPECT_EQ(match[1].str(), "3") << m;
  EXPECT_EQ(match[2].str(), "1") << m;
  // The name given to compileSource is the one in the message.
  auto named = Model::compileSource(source, "mine.saga");
  EXPECT_NE(messageOf(named).find("mine.saga:3:1: error:"), std::string::npos);
}

TEST(ModelApiErrors, SemanticErrorHasLocation) {
  const char *source = "graph { vertex x: f32[4]; }\n"
                       "model M {\n  out = y;\n}\n";
  auto model = Model::compileSource(source);
  std::string m = messageOf(model);
  EXPECT_NE(m.find("<string>:3:9: error: unknown name 'y'"), std::string::npos)
      << m;
}

TEST(ModelApiErrors, SourceWithoutModel) {
  auto model = Model::compileSource("graph { vertex x: f32[4]; }\n");
  std::string m = messageOf(model);
  EXPECT_NE(m.find("the file declares no model"), std::string::npos) << m;
}

TEST(ModelApiErrors, MissingFile) {
  auto model = Model::compileFile(SAGA_EXAMPLES_DIR "/no-such-model.saga");
  std::string m = messageOf(model);
  EXPECT_NE(m.find("cannot open"), std::string::npos) << m;
}

} // namespace
