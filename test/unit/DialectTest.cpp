//===- DialectTest.cpp - C++ API of the saga dialect ----------------------===//

#include "dialect/Saga.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace saga;

namespace {

class DialectTest : public ::testing::Test {
protected:
  DialectTest() { ctx.loadDialect<SagaDialect, func::FuncDialect>(); }
  MLIRContext ctx;
};

TEST(BroadcastShapes, FollowsNumPyRules) {
  EXPECT_EQ(*broadcastShapes({16}, {}), SmallVector<int64_t>({16}));
  EXPECT_EQ(*broadcastShapes({8, 1}, {4}), SmallVector<int64_t>({8, 4}));
  EXPECT_EQ(*broadcastShapes({1, 8, 8}, {8, 1}),
            SmallVector<int64_t>({1, 8, 8}));
  EXPECT_TRUE(failed(broadcastShapes({16}, {7})));
  EXPECT_TRUE(failed(broadcastShapes({2, 3}, {3, 3})));
}

TEST(FormatShape, PrintsBracketedList) {
  EXPECT_EQ(formatShape({}), "[]");
  EXPECT_EQ(formatShape({4, 8}), "[4, 8]");
}

TEST_F(DialectTest, DomainTypesExposeTheirElementTensor) {
  Type f32 = Float32Type::get(&ctx);
  auto v = VertexType::get(&ctx, {4, 8}, f32);
  auto e = EdgeType::get(&ctx, {4, 8}, f32);
  EXPECT_NE(Type(v), Type(e));
  auto dv = cast<DomainType>(v);
  EXPECT_FALSE(dv.isEdgeDomain());
  EXPECT_TRUE(cast<DomainType>(e).isEdgeDomain());
  EXPECT_EQ(dv.getElementTensorType(), RankedTensorType::get({4, 8}, f32));
}

TEST_F(DialectTest, GetCheckedRejectsBadShapes) {
  Type f32 = Float32Type::get(&ctx);
  std::string message;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  auto bad = VertexType::getChecked(
      [&] { return emitError(UnknownLoc::get(&ctx)); }, &ctx, {0}, f32);
  EXPECT_FALSE(bad);
  EXPECT_NE(message.find("non-positive dimension"), std::string::npos);
}

// Builds scatter -> gather by hand and checks the verifier accepts it and
// rejects a gather over a vertex value.
TEST_F(DialectTest, BuiltStagesVerify) {
  OpBuilder b(&ctx);
  Location loc = b.getUnknownLoc();
  Type f32 = b.getF32Type();
  auto vt = VertexType::get(&ctx, {16}, f32);
  auto et = EdgeType::get(&ctx, {16}, f32);
  auto module = ModuleOp::create(loc);
  b.setInsertionPointToEnd(module.getBody());
  auto fn = func::FuncOp::create(b, loc, "layer", b.getFunctionType({vt}, {vt}));
  Block *entry = fn.addEntryBlock();
  b.setInsertionPointToEnd(entry);
  Value h = entry->getArgument(0);
  Value e = ScatterOp::create(b, loc, et, EdgeEnd::src, h);
  Value a = GatherOp::create(b, loc, vt, GatherKind::sum, e, Value(), FloatAttr());
  func::ReturnOp::create(b, loc, a);
  EXPECT_TRUE(succeeded(verify(module)));

  ScopedDiagnosticHandler silence(&ctx, [](Diagnostic &) { return success(); });
  b.setInsertionPoint(entry->getTerminator());
  GatherOp::create(b, loc, vt, GatherKind::sum, h, Value(), FloatAttr());
  EXPECT_TRUE(failed(verify(module)));
  module->destroy();
}

} // namespace
