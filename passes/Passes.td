//===- Passes.td - saga passes ------------------------------*- tablegen -*-===//

#ifndef SAGA_PASSES_TD
#define SAGA_PASSES_TD

include "mlir/Pass/PassBase.td"

def SagaFormPropagation : Pass<"saga-form-propagation", "mlir::ModuleOp"> {
  let summary = "turn scatter -> apply_edge -> gather into saga.propagate";
  let description = [{
    Stage level to graph-tensor level for the edge side of a layer. Every
    `saga.gather` whose input comes from a `saga.apply_edge` (or directly from
    a `saga.scatter`) becomes one `saga.propagate`: the edge body is cloned
    into it, its scattered inputs become `src`/`dst` operands (the vertex
    values themselves, read at the edge's endpoints) and edge inputs `edge`
    operands. The result is a generalised SpMM that never materialises edge
    tensors. Scatters and edge maps left without uses are erased.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaOperatorMotion : Pass<"saga-operator-motion", "mlir::ModuleOp"> {
  let summary = "move edge work that depends on one end to the vertices";
  let description = [{
    NGra's operator motion. In a `saga.propagate` body, any pure computation
    whose inputs are only the source rows (plus parameters and constants) is
    the same for every out-edge of a vertex; it moves into an
    `apply_vertex` over the source values before the propagation, whose
    results become new source operands. Likewise for the destination side.
    The moved matmuls then become GEMMs (saga-extract-gemm), the edge body
    keeps only what truly needs both ends, and parameters leave the edge
    function (so their gradients are vertex-side gradients). A general
    dataflow rewrite over the body, not a per-model pattern.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaStripDropout : Pass<"saga-strip-dropout", "mlir::ModuleOp"> {
  let summary = "remove dropout for inference";
  let description = [{
    Dropout is the identity outside training: every `saga.dropout` is
    replaced by its input. Stage bodies left forwarding their inputs are
    removed by the GEMM extraction's cleanup, so an inference plan has no
    copy kernels for dropout.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaFuseMaps : Pass<"saga-fuse-maps", "mlir::ModuleOp"> {
  let summary = "merge chains of apply_vertex into one";
  let description = [{
    An `apply_vertex` whose single result is read only by another
    `apply_vertex` is merged into it: one body computing both, so one kernel
    and no intermediate row in memory. Runs after autodiff (the backward's
    maps merge too) and before lower-to-kernels, which can then fuse the
    whole chain after a propagation into the propagation's kernel.

    Sibling propagations (the same reduction and direction, not
    softmax_sum, each read only by the same map, and each operand read
    again where the last of them runs) become one `propagate`
    that evaluates all their bodies (common subexpressions merged) and
    yields their messages flattened and concatenated; the map takes their
    parts back with `saga.slice`. GAT's backward reduces the projection's
    message gradient and its source attention-score gradient over the same
    out-edges: one edge pass, and neither result stored. A map reading
    several propagations' results can still be the epilogue of only the one
    right before it: the propagation with the widest result is moved there,
    when its operands are read there anyway.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaExtractGemm : Pass<"saga-extract-gemm", "mlir::ModuleOp"> {
  let summary = "batch per-vertex vector-matrix products into GEMMs";
  let description = [{
    A `saga.matmul` in an `apply_vertex` body whose left side is one vector
    per vertex and whose right side is a parameter computes the same product
    for every vertex: a `[V, k] x [k, N]` GEMM. The pass moves it out as a
    `saga.linear` on the whole vertex value. The ops the left side depends
    on are cloned into a preceding `apply_vertex` that yields it (when the
    left side is not already a body input); the matmul's result enters the
    original body as a new input. A body that then only forwards an input is
    removed. The GEMM runs in a tuned BLAS instead of a per-row loop.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaReorderLinear : Pass<"saga-reorder-linear", "mlir::ModuleOp"> {
  let summary = "multiply by a weight before aggregating when it narrows";
  let description = [{
    `linear(f(x), W) == f(linear(x, W))` when f only scales each vertex's
    vector by per-vertex scalars (an apply_vertex multiplying or dividing its
    input by scalars computed from other inputs) or sums source vectors over
    edges (a sum or mean propagate whose message is the source vector scaled
    by scalars). When W narrows the features, the pass moves the linear in
    front of the longest such chain, so the chain runs on the narrow side:
    for GCN on Cora, 16 features per vertex instead of 1433. DGL and PyG pick
    the same order by hand; here it follows from the IR.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaAutodiff : Pass<"saga-autodiff", "mlir::ModuleOp"> {
  let summary = "append the backward pass: gradients of the loss";
  let description = [{
    Runs on the graph-tensor level (after saga-form-propagation and
    saga-extract-gemm). Every model with a scalar loss result then returns
    that loss followed by its gradient with respect to each parameter, in
    parameter order (the model's other results are dropped: a training step
    does not read them); the `saga.gradients` attribute lists their
    names. Dropout ops get keys so the backward reproduces their masks.

    Supported: apply_vertex bodies of elementwise ops, sum/mean reductions
    and per-row vector-matrix products; propagate with sum, mean, max, min
    and softmax_sum reducers (the softmax's log-normaliser is recomputed by
    one logsumexp propagation; max/min send the gradient to the edges whose message
    equals the output, split evenly among ties, counted by an extra
    propagation); linear; cross_entropy, l2 and scalar arithmetic.
    Parameters used inside edge functions (those operator motion did not
    move) get a sum propagation of their per-edge contributions, one
    parameter-shaped row per vertex, then sum_rows.
  }];
  let dependentDialects = ["saga::SagaDialect", "mlir::arith::ArithDialect"];
}

def SagaMaterializeEdges : Pass<"saga-materialize-edges", "mlir::ModuleOp"> {
  let summary = "unfuse propagation: store the edge tensors, then reduce them";
  let description = [{
    The inverse of fusion, run when `fuse-propagation` is off (-O0,
    `--disable-pass=fuse-propagation`). Every `saga.propagate` (forward and
    backward, reversed or not, every gather kind) becomes a `saga.edge_map`
    with the propagate's operands and a copy of its body, whose results are
    the yielded message (and score) as edge tensors with one row per edge,
    followed by a `saga.propagate` of the same kind and direction whose only
    operands are those edge tensors and whose body yields its arguments.
    This is how PyG and DGL run a message function they do not fuse: the
    edge tensors exist in memory between the two kernels. A yield that is
    already an edge operand is reduced as it is, and a propagate that only
    forwards its edge operands is left alone. Dropout in the body keeps its
    key and the edge_map kernel keys it by edge id, so masks are those of
    the fused kernel.
  }];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaRematerialize : Pass<"saga-rematerialize", "mlir::ModuleOp"> {
  let summary = "recompute cheap maps instead of keeping their results";
  let description = [{
    An `apply_vertex` without matmuls (dropout, bias, activation), whose
    results per vertex are at least as large as its inputs, is cloned
    before each later reader when vertex or edge values are made between
    that reader and the previous one, provided each of its inputs is a graph
    input or is still read at or after that reader; readers with nothing
    allocated between them share one copy. In training this trades one
    elementwise pass for a [V, F] buffer kept from the forward to the
    backward (GAT: input dropout, and each layer's output after bias, ELU
    and dropout). A projection of the input features (a `saga.linear` of a
    graph input, or of such a map of graph inputs) whose input row is no
    wider than its output row is remade too, with its map: one GEMM instead
    of keeping [V, F] from the first layer's forward to its backward (GAT's
    z = dropout(x) @ W). Maps are visited last to first, so chains are remade from
    their start. Runs last before lower-to-kernels, after CSE (which would
    merge the clones back). With `fuse-epilogues` (as lower-to-kernels is
    run) a propagation right before its only reader, a map, counts as no
    allocation, and a copy for that map goes before the propagation.
  }];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Whether lower-to-kernels will fuse maps into propagations">
  ];
  let dependentDialects = ["saga::SagaDialect"];
}

def SagaLowerToKernels : Pass<"saga-lower-to-kernels", "mlir::ModuleOp"> {
  let summary = "graph-tensor level to loop kernels and an execution plan";
  let description = [{
    Each `apply_vertex`, `propagate` and `edge_map` of a model becomes a
    kernel function over a range of vertex rows (scf/memref/arith/math on flat buffers) and a
    `saga.launch` of it in the model, which is then the execution plan: the
    runtime walks it, allocating results, launching kernels over its threads,
    running `saga.linear` as a BLAS GEMM and freeing each buffer at its
    `saga.release`. Per-element tensors become small stack buffers hoisted
    out of the row loop; `dropout` without a key is the identity
    (inference), with a key a hashed mask.

    Kernel signature: `(begin: index, end: index, seed: i64, [offsets:
    memref<?xi64>, neighbours: memref<?xi32>, edge_ids: memref<?xi64>,]
    operands..., results...)` where every operand/result is a flat
    `memref<?xT>` of row-major rows (parameters whole). A propagate kernel
    receives the CSR by destination, or by source when `reversed`. An
    edge_map kernel receives the CSR by destination and writes, for each
    in-edge of its rows, the edge's row (by edge id) of each result; its
    launch is marked `{edge_map}`. The seed drives training-mode dropout
    masks.

    With `fuse-epilogues` an `apply_vertex` that is the only user of a
    propagation's result, and whose other operands exist where the
    propagation runs, becomes the propagation kernel's epilogue (bias,
    normalisation, activation on each reduced row): one kernel, and the
    propagation's result is never written to memory.
  }];
  let options = [
    Option<"fuseEpilogues", "fuse-epilogues", "bool", /*default=*/"true",
           "Fuse elementwise apply_vertex epilogues into propagations">,
    Option<"reversedEpilogues", "reversed-epilogues", "bool", /*default=*/"true",
           "Also into reversed propagations (off for parts of a partitioned "
           "graph, whose reversed sums are partial)">
  ];
  let dependentDialects = ["saga::SagaDialect", "mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect", "mlir::memref::MemRefDialect",
                           "mlir::arith::ArithDialect", "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def SagaScheduleMemory : Pass<"saga-schedule-memory", "mlir::ModuleOp"> {
  let summary = "plan level to the chunked level: intervals, 2-D chunks, "
                "ROC's memory plan, transfers";
  let description = [{
    For a device-tier budget and a graph size, writes each plan-level model's
    `saga.schedule`: the row intervals (the fewest whose largest step, twice
    over, fits the budget, or `intervals`), every step of the model over an
    interval or a 2-D chunk (source interval i, destination interval j), and
    the memory plan's loads, stores and frees between them, each load that
    may start early preceded by a `saga.prefetch`. The plan is ROC's dynamic
    program over the steps (resident subsets of the live pieces), or its
    stated fallback (`method`). The chunked executor runs exactly this.

    With `empty-chunks` (the executors learn them from the graph), chunks
    that hold no edges read no source piece, and the schedule lists them.

    Consecutive ops over rows run interval by interval, after the chunk
    group of a propagation heading them; `op-major` runs each op over every
    interval before the next (the schedule says `op_major`).

    Edge values (made and read only by propagations and edge maps) are
    split by destination interval, each chunk's edges estimated as the
    share of its rows (the executors count them; the schedule's
    `chunk_edges`); `whole-edges` keeps them whole (to compare: the
    executors plan again, split, wherever they can).

    A budget below one step's working set is an error saying what it needs.

    With `devices` N > 1, the schedule also gets `saga.ring`: NGra's ring of
    N devices over the source intervals (support/RingSchedule.h). `owners`
    gives each destination interval's device (contiguous runs of about
    equal in-edges); in each propagation every device sees every source
    interval once, `host_loads` of them come from the host (each interval
    once) and `peer_copies` travel from the previous device in the ring.
    The executors do not run a ring yet: it is the plan a multi-device run
    will follow.
  }];
  let options = [
    Option<"wholeEdges", "whole-edges", "bool", /*default=*/"false",
           "Keep edge values whole instead of split by interval">,
    Option<"opMajor", "op-major", "bool", /*default=*/"false",
           "Run each op over every interval before the next">,
    Option<"budget", "budget", "int64_t", /*default=*/"0",
           "Device-tier bytes (required)">,
    Option<"vertices", "vertices", "int64_t", /*default=*/"0",
           "The graph's vertices (required)">,
    Option<"edges", "edges", "int64_t", /*default=*/"0",
           "The graph's edges (with self loops when the model adds them)">,
    Option<"intervals", "intervals", "int64_t", /*default=*/"0",
           "Row intervals (0: the fewest that fit)">,
    Option<"devices", "devices", "int64_t", /*default=*/"1",
           "Devices to plan NGra's ring over (saga.ring; 1: none)">,
    ListOption<"emptyChunks", "empty-chunks", "int64_t",
               "With intervals: the 2-D chunks that hold no edges, as i * P + j "
               "(sources in interval i, destinations in j); their steps load "
               "no source rows">
  ];
  let dependentDialects = ["saga::SagaDialect"];
}

#endif // SAGA_PASSES_TD
