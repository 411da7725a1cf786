// A hand-written two-layer GCN (Kipf & Welling, ICLR 2017) in the saga
// dialect at stage level: what `sagac --emit=saga` produces for gcn.saga.
//   GCNConv: h' = D^-1/2 (A) D^-1/2 h W + b, with A holding self loops.

func.func @GCNConv_1433_16(%h: !saga.vertex<1433xf32>, %W: tensor<1433x16xf32>,
                           %b: tensor<16xf32>) -> !saga.vertex<16xf32> {
  %deg = saga.degree : !saga.vertex<f32>
  // scatter(v) { h = v.h * rsqrt(v.deg); }
  %hn = saga.apply_vertex(%h, %deg) : (!saga.vertex<1433xf32>, !saga.vertex<f32>) -> !saga.vertex<1433xf32> {
  ^bb0(%x: tensor<1433xf32>, %d: tensor<f32>):
    %r = saga.rsqrt %d : tensor<f32>
    %y = saga.mul %x, %r : tensor<1433xf32>, tensor<f32> -> tensor<1433xf32>
    saga.yield %y : tensor<1433xf32>
  }
  %src = saga.scatter src %hn : !saga.vertex<1433xf32> -> !saga.edge<1433xf32>
  // apply_edge(e) { return e.src.h; }  gather(sum);
  %a = saga.gather sum %src : !saga.edge<1433xf32> -> !saga.vertex<1433xf32>
  // apply_vertex(v, a) { return (a * rsqrt(v.deg)) @ W + b; }
  %out = saga.apply_vertex(%a, %deg) : (!saga.vertex<1433xf32>, !saga.vertex<f32>) -> !saga.vertex<16xf32> {
  ^bb0(%x: tensor<1433xf32>, %d: tensor<f32>):
    %r = saga.rsqrt %d : tensor<f32>
    %s = saga.mul %x, %r : tensor<1433xf32>, tensor<f32> -> tensor<1433xf32>
    %m = saga.matmul %s, %W : tensor<1433xf32>, tensor<1433x16xf32> -> tensor<16xf32>
    %y = saga.add %m, %b : tensor<16xf32>, tensor<16xf32> -> tensor<16xf32>
    saga.yield %y : tensor<16xf32>
  }
  return %out : !saga.vertex<16xf32>
}

saga.model @GCN(%x: !saga.vertex<1433xf32>, %label: !saga.vertex<i32>)
    -> (!saga.vertex<16xf32>, tensor<f32>) {
  %W = saga.param "GCNConv#0.W" glorot : tensor<1433x16xf32>
  %b = saga.param "GCNConv#0.b" zeros : tensor<16xf32>
  %h = func.call @GCNConv_1433_16(%x, %W, %b)
      : (!saga.vertex<1433xf32>, tensor<1433x16xf32>, tensor<16xf32>) -> !saga.vertex<16xf32>
  %loss = saga.cross_entropy %h, %label
      : !saga.vertex<16xf32>, !saga.vertex<i32> -> tensor<f32>
  saga.return %h, %loss : !saga.vertex<16xf32>, tensor<f32>
}
