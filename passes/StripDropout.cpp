//===- StripDropout.cpp - dropout is the identity in inference ------------===//

#include "passes/Passes.h"

namespace saga {
#define GEN_PASS_DEF_SAGASTRIPDROPOUT
#include "passes/Passes.h.inc"
} // namespace saga

using namespace mlir;
using namespace saga;

namespace {
struct StripDropout : public saga::impl::SagaStripDropoutBase<StripDropout> {
  void runOnOperation() override {
    getOperation().walk([](DropoutOp op) {
      op.replaceAllUsesWith(op.getInput());
      op.erase();
    });
  }
};
} // namespace
