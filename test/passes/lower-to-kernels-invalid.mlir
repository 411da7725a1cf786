// RUN: saga-opt %s --saga-lower-to-kernels --split-input-file -verify-diagnostics

// Tests that stage-level edge ops left in a model are reported: they must be
// formed into a propagate first.
saga.model @m(%x: !saga.vertex<8xf32> {saga.name = "x"}) -> !saga.vertex<8xf32> {
  // expected-error @+1 {{'saga.scatter' op must be formed into saga.propagate before lowering (run --saga-form-propagation)}}
  %s = saga.scatter src %x : !saga.vertex<8xf32> -> !saga.edge<8xf32>
  %a = saga.gather sum %s : !saga.edge<8xf32> -> !saga.vertex<8xf32>
  saga.return %a : !saga.vertex<8xf32>
}
