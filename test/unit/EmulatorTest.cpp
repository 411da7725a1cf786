//===- EmulatorTest.cpp - the emulated GPU itself -------------------------===//
//
// Hand-written CUDA kernels run on the emulator: barriers, shuffles, shared
// memory and atomics give the GPU's results under every thread order; a
// missing barrier shows under some order; divergent barriers and deadlocks
// are reported, not hung on.
//
//===----------------------------------------------------------------------===//

#include "emulator/Emulator.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <numeric>
#include <vector>

using namespace saga::emu;

namespace {

const char *kSource = R"cuda(
// Sums each block's 256 values through shared memory.
extern "C" __global__ void block_sum(const float *x, float *out, int n) {
  __shared__ float part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = part[0];
}

// The same with the barrier after the first write left out.
extern "C" __global__ void block_sum_racy(const float *x, float *out, int n) {
  __shared__ float part[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  part[threadIdx.x] = i < n ? x[i] : 0.0f;
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      part[threadIdx.x] += part[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0)
    out[blockIdx.x] = part[0];
}

// A warp's butterfly sum, every lane gets it; lane 0 of each warp adds
// it to the total.
extern "C" __global__ void warp_sum(const float *x, float *total) {
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if ((threadIdx.x & 31) == 0)
    atomicAdd(total, v);
}

// Lane 5's value to every lane, through dynamic shared memory too.
extern "C" __global__ void broadcast(int *out) {
  SAGA_DYNAMIC_SHARED(smem);
  int *s = (int *)smem;
  int lane = threadIdx.x & 31;
  int v = __shfl_sync(0xffffffffu, lane * 10 + (int)(threadIdx.x / 32), 5);
  s[threadIdx.x] = v;
  __syncthreads();
  out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x];
}

extern "C" __global__ void divergent(int *out) {
  if (threadIdx.x < 16)
    __syncthreads();
  out[threadIdx.x] = 1;
}

extern "C" __global__ void mismatched(int *out) {
  if (threadIdx.x < 16)
    __syncwarp();
  else
    __syncthreads();
  out[threadIdx.x] = 1;
}
)cuda";

EmulatedModule &module() {
  static std::unique_ptr<EmulatedModule> m = [] {
    std::string error;
    auto m = EmulatedModule::compile(kSource, error,
                                     SAGA_TEST_SCRATCH_DIR "/emulator-cache");
    EXPECT_TRUE(m) << error;
    return m;
  }();
  return *m;
}

LaunchConfig config(unsigned grid, unsigned block, Order order) {
  LaunchConfig c;
  c.grid.x = grid;
  c.block.x = block;
  c.order = order;
  c.workers = 2;
  return c;
}

constexpr Order kOrders[] = {Order::Forward, Order::Reverse, Order::Random};

} // namespace

TEST(Emulator, FindsTheModulesKernels) {
  EXPECT_EQ(module().kernels(),
            (std::vector<std::string>{"block_sum", "block_sum_racy", "warp_sum",
                                      "broadcast", "divergent", "mismatched"}));
  EXPECT_EQ(module().lookup("nothing"), nullptr);
}

TEST(Emulator, BlockReductionUnderEveryOrder) {
  const int n = 1000;
  std::vector<float> x(n);
  std::iota(x.begin(), x.end(), 1.0f);
  for (Order order : kOrders) {
    std::vector<float> out(4, -1.0f);
    const float *xp = x.data();
    float *op = out.data();
    int nn = n;
    void *params[] = {&xp, &op, &nn};
    ASSERT_EQ(launch(module().lookup("block_sum"), params, config(4, 256, order)), "");
    for (int b = 0; b < 4; ++b) {
      double expect = 0;
      for (int i = b * 256; i < std::min(n, (b + 1) * 256); ++i)
        expect += x[size_t(i)];
      EXPECT_FLOAT_EQ(out[size_t(b)], float(expect)) << "block " << b;
    }
  }
}

TEST(Emulator, AMissingBarrierShowsUnderSomeOrder) {
  const int n = 256;
  std::vector<float> x(n, 1.0f);
  int wrong = 0;
  for (Order order : kOrders) {
    float out = 0;
    const float *xp = x.data();
    float *op = &out;
    int nn = n;
    void *params[] = {&xp, &op, &nn};
    ASSERT_EQ(launch(module().lookup("block_sum_racy"), params,
                     config(1, 256, order)),
              "");
    wrong += out != 256.0f;
  }
  // In order, each thread writes before the next reads: right by luck.
  // Reversed, thread 0 adds part[128] before thread 128 has written it.
  EXPECT_GE(wrong, 1);
}

TEST(Emulator, WarpShufflesAndAtomics) {
  std::vector<float> x(8 * 128);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = float(i % 7);
  double expect = std::accumulate(x.begin(), x.end(), 0.0);
  for (Order order : kOrders) {
    float total = 0;
    const float *xp = x.data();
    float *tp = &total;
    void *params[] = {&xp, &tp};
    ASSERT_EQ(launch(module().lookup("warp_sum"), params, config(8, 128, order)), "");
    EXPECT_FLOAT_EQ(total, float(expect));
  }
}

TEST(Emulator, ShuffleFromALaneAndDynamicSharedMemory) {
  std::vector<int> out(64, -1);
  int *op = out.data();
  void *params[] = {&op};
  LaunchConfig c = config(1, 64, Order::Random);
  c.sharedBytes = 64 * sizeof(int);
  ASSERT_EQ(launch(module().lookup("broadcast"), params, c), "");
  for (int t = 0; t < 64; ++t) // thread t reads what thread 63 - t stored
    EXPECT_EQ(out[size_t(t)], 50 + (63 - t) / 32) << t;
}

/// Runs `kernel(int *out)` on one block of `threads`; the emulator's verdict.
std::string runOnInts(const char *kernel, unsigned threads, Order order) {
  std::vector<int> out(threads);
  int *op = out.data();
  void *params[] = {&op};
  return launch(module().lookup(kernel), params, config(1, threads, order));
}

TEST(Emulator, DivergentBarrierIsReported) {
  std::string err = runOnInts("divergent", 64, Order::Forward);
  EXPECT_NE(err.find("divergent __syncthreads"), std::string::npos) << err;
  EXPECT_NE(err.find("block (0,0,0)"), std::string::npos) << err;
}

TEST(Emulator, MismatchedBarriersAreADeadlock) {
  std::string err = runOnInts("mismatched", 32, Order::Reverse);
  EXPECT_NE(err.find("deadlock"), std::string::npos) << err;
  EXPECT_NE(err.find("waits at __syncwarp"), std::string::npos) << err;
  EXPECT_NE(err.find("waits at __syncthreads"), std::string::npos) << err;
}

TEST(Emulator, BadConfigurationsAreErrors) {
  int *op = nullptr;
  void *params[] = {&op};
  EXPECT_EQ(launch(module().lookup("divergent"), params, config(1, 2048, Order::Forward)),
            "a block of 2048 threads (1 to 1024 allowed)");
  EXPECT_EQ(launch(nullptr, params, config(1, 32, Order::Forward)), "no kernel");
}

TEST(Emulator, ACompileErrorCarriesTheCompilersOutput) {
  std::string error;
  auto m = EmulatedModule::compile(
      "extern \"C\" __global__ void broken(int *x) { x[0] = undefined_name; }",
      error, SAGA_TEST_SCRATCH_DIR "/emulator-cache");
  EXPECT_FALSE(m);
  EXPECT_NE(error.find("undefined_name"), std::string::npos) << error;
}

// Under the sanitizer configuration (ctest's cuda-emulated-asan: modules
// compiled with -fsanitize=address,undefined, ASan preloaded), a kernel
// that writes past its buffer is reported, not silently corrupting.
TEST(EmulatorSanitized, AnOutOfBoundsWriteIsReported) {
  const char *flags = std::getenv("SAGA_EMU_FLAGS");
  if (!flags || !std::strstr(flags, "address"))
    GTEST_SKIP() << "only with SAGA_EMU_FLAGS=-fsanitize=address";
  std::string error;
  auto m = EmulatedModule::compile(
      "extern \"C\" __global__ void past(int *p, int n) {\n"
      "  p[n + threadIdx.x] = 1;\n}\n",
      error, "");
  ASSERT_TRUE(m) << error;
  Entry past = m->lookup("past");
  ASSERT_TRUE(past);
  auto writePast = [past] {
    auto *v = new std::vector<int>(32); // ASan's redzone follows it
    int *p = v->data();
    int n = 32;
    void *params[] = {&p, &n};
    LaunchConfig c;
    c.block.x = 32;
    launch(past, params, c);
  };
  EXPECT_DEATH(writePast(), "heap-buffer-overflow");
}
