//===- GemmBench.cpp - the dense path's GEMM under several BLAS libraries -===//
//
// Times cblas_sgemm (row-major, C = A B, single thread) on the shapes Saga's
// plans run: Cora's first layer and a 1M-vertex 64x64 layer. Built once per
// library by bench/gemm.sh; Eigen is timed in the same binary as a baseline
// when its headers are there.
//
//   GemmBench [LABEL [MxKxN ...]]   (shapes: instead of the three below)
//
//===----------------------------------------------------------------------===//

#if __has_include(<Eigen/Dense>)
#include <Eigen/Dense>
#define SAGA_GEMM_EIGEN 1
#endif
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  const char *label = argc > 1 ? argv[1] : "blas";
  struct Shape { int m, k, n; std::string what; };
  std::vector<Shape> shapes = {{2708, 1433, 16, "cora-layer1"},
                               {1048576, 64, 64, "rmat20-64x64"},
                               {65536, 1024, 256, "dense-1024x256"}};
  if (argc > 2)
    shapes.clear();
  for (int i = 2; i < argc; ++i) {
    Shape s{0, 0, 0, argv[i]};
    if (std::sscanf(argv[i], "%dx%dx%d", &s.m, &s.k, &s.n) != 3 || s.m < 1 ||
        s.k < 1 || s.n < 1) {
      std::fprintf(stderr, "GemmBench: shape %s is not MxKxN\n", argv[i]);
      return 2;
    }
    shapes.push_back(s);
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  for (const Shape &s : shapes) {
    std::vector<float> a(size_t(s.m) * s.k), b(size_t(s.k) * s.n),
        c(size_t(s.m) * s.n);
    for (float &x : a) x = u(rng);
    for (float &x : b) x = u(rng);
    auto time = [&](auto &&fn) {
      std::vector<double> t;
      for (int r = 0; r < 5; ++r) {
        auto start = std::chrono::steady_clock::now();
        fn();
        t.push_back(std::chrono::duration<double>(
                        std::chrono::steady_clock::now() - start).count());
      }
      std::sort(t.begin(), t.end());
      return t[2];
    };
    double blas = time([&] {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k,
                  1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n);
    });
    double flops = 2.0 * s.m * s.k * s.n;
#ifdef SAGA_GEMM_EIGEN
    using Mat = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    Eigen::Map<Mat> A(a.data(), s.m, s.k), B(b.data(), s.k, s.n), C(c.data(), s.m, s.n);
    double eigen = time([&] { C.noalias() = A * B; });
    std::printf("%-12s %-15s %9.2f ms %7.1f GFLOP/s   eigen %9.2f ms %7.1f GFLOP/s\n",
                label, s.what.c_str(), blas * 1e3, flops / blas / 1e9,
                eigen * 1e3, flops / eigen / 1e9);
#else
    std::printf("%-12s %-15s %9.2f ms %7.1f GFLOP/s   eigen: no headers\n",
                label, s.what.c_str(), blas * 1e3, flops / blas / 1e9);
#endif
  }
  return 0;
}
