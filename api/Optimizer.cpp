//===- Optimizer.cpp - Adam and SGD over a model's parameters -------------===//

#include "api/Optimizer.h"

#include <algorithm>
#include <cmath>

using namespace saga;

uint64_t saga::epochSeed(uint64_t seed, uint64_t epoch) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ULL + epoch + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Optimizer::Optimizer(Model &model, const TrainOptions &options)
    : model(model), options(options) {
  for (const ValueInfo &p : model.params()) {
    names.push_back(p.name);
    m.emplace_back(p.shape);
    v.emplace_back(p.shape);
  }
}

llvm::Error
Optimizer::step(std::vector<std::pair<std::string, Tensor>> &grads) {
  ++steps;
  for (auto &[name, g] : grads) {
    auto it = std::find(names.begin(), names.end(), name);
    Tensor *w = model.mutableParam(name);
    if (it == names.end() || !w)
      return llvm::createStringError("no parameter '" + name +
                                     "' for its gradient");
    size_t i = it - names.begin();
    float *pw = w->f32(), *pm = m[i].f32(), *pv = v[i].f32();
    const float *pg = g.f32();
    int64_t n = w->numElements();
    double lr = options.learningRate * lrScale;
    if (options.optimizer == TrainOptions::SGD) {
      for (int64_t j = 0; j < n; ++j) {
        pm[j] = float(options.momentum * pm[j] + pg[j]);
        pw[j] -= float(lr * pm[j]);
      }
      continue;
    }
    double b1 = options.beta1, b2 = options.beta2;
    double c1 = 1 - std::pow(b1, double(steps));
    double c2 = 1 - std::pow(b2, double(steps));
    for (int64_t j = 0; j < n; ++j) {
      pm[j] = float(b1 * pm[j] + (1 - b1) * pg[j]);
      pv[j] = float(b2 * pv[j] + (1 - b2) * double(pg[j]) * pg[j]);
      double mhat = pm[j] / c1, vhat = pv[j] / c2;
      pw[j] -= float(lr * mhat / (std::sqrt(vhat) + options.epsilon));
    }
  }
  return llvm::Error::success();
}

Checkpoint Optimizer::save(uint64_t epoch) const {
  Checkpoint c;
  c.epoch = epoch;
  c.step = steps;
  for (size_t i = 0; i < names.size(); ++i) {
    c.params.emplace_back(names[i], *model.param(names[i]));
    c.moment1.emplace_back(names[i], m[i]);
    c.moment2.emplace_back(names[i], v[i]);
  }
  return c;
}

llvm::Error Optimizer::restore(Checkpoint &c) {
  steps = c.step;
  auto find = [&](NamedTensors &ts, const std::string &name) -> Tensor * {
    for (auto &[n, t] : ts)
      if (n == name)
        return &t;
    return nullptr;
  };
  for (size_t i = 0; i < names.size(); ++i) {
    Tensor *p = find(c.params, names[i]), *a = find(c.moment1, names[i]),
           *b = find(c.moment2, names[i]);
    if (!p || !a || !b)
      return llvm::createStringError("the checkpoint has no state for "
                                     "parameter '" + names[i] + "'");
    if (p->shape() != m[i].shape() || a->shape() != m[i].shape() ||
        b->shape() != m[i].shape())
      return llvm::createStringError("the checkpoint's '" + names[i] +
                                     "' has shape " + p->describe() +
                                     ", the model needs " +
                                     m[i].describe());
    if (llvm::Error e = model.setParam(names[i], std::move(*p)))
      return e;
    m[i] = std::move(*a);
    v[i] = std::move(*b);
  }
  return llvm::Error::success();
}
