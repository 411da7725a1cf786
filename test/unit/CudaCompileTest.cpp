//===- CudaCompileTest.cpp - every kernel through NVRTC and ptxas ---------===//
//
// Every example's kernels (inference and training plans, -O0 and -O2),
// printed as CUDA, compile with NVRTC for sm_80 and sm_90, and ptxas -v
// reports no spills and no stack frame for any of them. Skipped, saying
// so, where NVRTC or ptxas is not installed.
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/CudaEmitter.h"
#include "codegen/cuda/Nvrtc.h"
#include "dialect/Saga.h"
#include "parser/FrontEnd.h"
#include "passes/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include "runtime/exec/cuda/RuntimeKernels.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <tuple>

using namespace saga;

namespace {
using Param = std::tuple<const char *, unsigned, bool>;

std::string cudaOf(const std::string &file, unsigned opt, bool training) {
  llvm::SourceMgr sm;
  auto buffer = llvm::MemoryBuffer::getFile(std::string(SAGA_EXAMPLES_DIR "/") + file);
  EXPECT_TRUE(bool(buffer));
  sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  mlir::DialectRegistry registry;
  registerSagaDialects(registry);
  mlir::MLIRContext ctx(registry);
  auto module = compileSaga(sm, ctx);
  EXPECT_TRUE(bool(module));
  mlir::PassManager pm(&ctx);
  buildLowerToPlanPipeline(pm, {opt, training, {}});
  EXPECT_TRUE(mlir::succeeded(pm.run(*module)));
  auto source = cuda::emitCuda(*module);
  if (!source) {
    ADD_FAILURE() << llvm::toString(source.takeError());
    return "";
  }
  return source->code;
}
} // namespace

namespace {
/// NVRTC compiles `source` for sm_80 and sm_90 and ptxas -v reports no
/// spills and no stack frame for any of its kernels; prints the most
/// registers a thread uses.
void expectCompilesWithoutSpills(cuda::Nvrtc &nvrtc, const std::string &source,
                                 const std::string &name) {
  size_t kernels = 0;
  for (size_t at = 0; (at = source.find("__global__", at)) != std::string::npos; ++at)
    ++kernels;
  for (int arch : {80, 90}) {
    auto compiled = nvrtc.compile(source, arch, false);
    ASSERT_TRUE(bool(compiled)) << llvm::toString(compiled.takeError());
    std::string base = std::string(SAGA_TEST_SCRATCH_DIR "/") + name +
                       "-sm_" + std::to_string(arch);
    {
      std::ofstream out(base + ".ptx");
      out << compiled->ptx;
    }
    std::string cmd = std::string(SAGA_PTXAS) + " -v -arch=sm_" +
                      std::to_string(arch) + " " + base + ".ptx -o " + base +
                      ".cubin 2>&1";
    FILE *p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char line[512];
    while (fgets(line, sizeof line, p))
      out += line;
    ASSERT_EQ(pclose(p), 0) << out;
    // One "Used N registers" and one stack/spill line per kernel.
    std::regex used(R"(Used (\d+) registers)"), spill(
        R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
    size_t seen = 0, maxRegs = 0;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), used);
         it != std::sregex_iterator(); ++it, ++seen)
      maxRegs = std::max<size_t>(maxRegs, std::stoul((*it)[1]));
    EXPECT_EQ(seen, kernels) << out;
    for (auto it = std::sregex_iterator(out.begin(), out.end(), spill);
         it != std::sregex_iterator(); ++it) {
      EXPECT_EQ((*it)[1], "0") << "stack frame: " << out;
      EXPECT_EQ((*it)[2], "0") << "spill stores: " << out;
      EXPECT_EQ((*it)[3], "0") << "spill loads: " << out;
    }
    std::printf("sm_%d: %zu kernels, at most %zu registers per thread\n", arch,
                kernels, maxRegs);
  }
}
} // namespace

class CudaCompile : public testing::TestWithParam<Param> {};

TEST_P(CudaCompile, NvrtcAndPtxasAcceptEveryKernelWithoutSpills) {
  auto [file, opt, training] = GetParam();
  auto nvrtc = cuda::Nvrtc::load();
  if (!nvrtc)
    GTEST_SKIP() << llvm::toString(nvrtc.takeError());
  if (std::string(SAGA_PTXAS).empty())
    GTEST_SKIP() << "ptxas was not found at configure time";
  std::string source = cudaOf(file, opt, training);
  ASSERT_FALSE(source.empty());
  expectCompilesWithoutSpills(**nvrtc, source,
                              std::string(file) + "-O" + std::to_string(opt) +
                                  (training ? "-train" : ""));
}

// The CUDA executor's own kernels (losses, sums over rows, arithmetic).
TEST(CudaCompileRuntime, NvrtcAndPtxasAcceptTheRuntimeKernelsWithoutSpills) {
  auto nvrtc = cuda::Nvrtc::load();
  if (!nvrtc)
    GTEST_SKIP() << llvm::toString(nvrtc.takeError());
  if (std::string(SAGA_PTXAS).empty())
    GTEST_SKIP() << "ptxas was not found at configure time";
  expectCompilesWithoutSpills(**nvrtc, cuda::runtimeKernelSource(),
                              "runtime-kernels");
}

INSTANTIATE_TEST_SUITE_P(
    Examples, CudaCompile,
    testing::Combine(testing::Values("gcn.saga", "gat.saga", "graphsage.saga",
                                     "gin.saga", "ggcn.saga", "gcn_citeseer.saga"),
                     testing::Values(0u, 2u), testing::Bool()),
    [](const testing::TestParamInfo<Param> &info) {
      std::string name = std::get<0>(info.param);
      return name.substr(0, name.find('.')) + "_O" +
             std::to_string(std::get<1>(info.param)) +
             (std::get<2>(info.param) ? "_training" : "_inference");
    });

// How kernels are launched (cuda::launchShape, shared by the CUDA executor
// and the emulated device): 8 warps a block where their shared scratch
// fits 48 KiB, fewer where it does not, and scratch over 48 KiB a warp in a
// global buffer of at most kGlobalScratchLimit (one warp's, when even that
// is larger).
TEST(CudaLaunchShape, ScratchDecidesWarpsAndWhereItLives) {
  cuda::KernelInfo k;
  k.scratchBytes = 80;
  cuda::LaunchShape s = cuda::launchShape(k, 1000, 64);
  EXPECT_EQ(s.warpsPerBlock, 8u);
  EXPECT_EQ(s.blocks, 64u);
  EXPECT_EQ(s.sharedBytes, 640u);
  EXPECT_EQ(s.globalScratchBytes, 0);
  EXPECT_EQ(cuda::launchShape(k, 20, 64).blocks, 3u);
  EXPECT_EQ(cuda::launchShape(k, 0, 64).blocks, 1u);

  k.scratchBytes = 20000; // two warps fit
  s = cuda::launchShape(k, 1000, 64);
  EXPECT_EQ(s.warpsPerBlock, 2u);
  EXPECT_EQ(s.sharedBytes, 40000u);

  k.scratchBytes = cuda::kSharedScratchLimit; // exactly one
  s = cuda::launchShape(k, 1000, 64);
  EXPECT_EQ(s.warpsPerBlock, 1u);
  EXPECT_EQ(s.sharedBytes, unsigned(cuda::kSharedScratchLimit));

  k.scratchBytes = 733696; // examples/gatv2.saga's -O0 weight gradient
  k.globalScratch = true;
  s = cuda::launchShape(k, 2708, 2112);
  EXPECT_EQ(s.warpsPerBlock, 8u);
  EXPECT_EQ(s.blocks, 11u); // 91 warps' scratch fit 64 MiB
  EXPECT_EQ(s.sharedBytes, 0u);
  EXPECT_EQ(s.globalScratchBytes, 11 * 8 * 733696);
  EXPECT_LE(s.globalScratchBytes, cuda::kGlobalScratchLimit);

  k.scratchBytes = cuda::kGlobalScratchLimit + 1; // one warp, alone
  s = cuda::launchShape(k, 1000, 64);
  EXPECT_EQ(s.warpsPerBlock, 1u);
  EXPECT_EQ(s.blocks, 1u);
  EXPECT_EQ(s.globalScratchBytes, cuda::kGlobalScratchLimit + 1);
}
