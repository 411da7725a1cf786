//===- DeviceSplit.cpp - a memory problem's operators over devices --------===//

#include "support/DeviceSplit.h"

#include <algorithm>

using namespace saga;

DeviceSplit saga::splitByDevice(const MemoryProblem &p,
                                const std::vector<int> &deviceOf,
                                int devices) {
  DeviceSplit s;
  s.deviceOf = deviceOf;
  s.devices.resize(size_t(std::max(devices, 1)));
  s.exportsAfter.resize(p.ops.size());
  const size_t numTensors = p.tensors.size();
  std::vector<int> lastDevice(numTensors, -1), lastOp(numTensors, -1);
  std::vector<char> changed(numTensors, 0);
  // The current version of each tensor on each device (-1: none yet or
  // another device touched it since).
  std::vector<std::vector<int>> local(s.devices.size(),
                                      std::vector<int>(numTensors, -1));
  for (size_t k = 0; k < p.ops.size(); ++k) {
    const int d = deviceOf[k];
    if (d < 0 || d >= int(s.devices.size())) {
      s.error = "operator " + std::to_string(k) + " (" + p.ops[k].name +
                ") is given device " + std::to_string(d);
      return s;
    }
    DeviceProblem &dp = s.devices[size_t(d)];
    const PlanOperator &op = p.ops[k];
    auto versionOf = [&](int t, bool reads) -> int {
      int &id = local[size_t(d)][size_t(t)];
      if (id >= 0 && lastDevice[size_t(t)] == d)
        return id;
      PlanTensor v = p.tensors[size_t(t)];
      int exported = -1;
      if (!reads) {
        v.input = false;
      } else if (v.input && lastOp[size_t(t)] < 0) {
        // Where the graph input or parameter lives.
      } else if (lastOp[size_t(t)] >= 0) {
        v.input = true;
        exported = lastOp[size_t(t)];
        auto &list = s.exportsAfter[size_t(exported)];
        auto it = std::find_if(list.begin(), list.end(),
                               [&](const Handover &h) { return h.tensor == t; });
        if (it == list.end())
          list.push_back({t, !changed[size_t(t)], -1});
      } else {
        s.error = "tensor " + v.name + " is read by operator " +
                  std::to_string(k) + " (" + op.name +
                  ") before any operator makes it";
        return -1;
      }
      id = int(dp.problem.tensors.size());
      dp.problem.tensors.push_back(std::move(v));
      dp.globalTensor.push_back(t);
      dp.exportedAfter.push_back(exported);
      dp.lastOp.push_back(int(k));
      return id;
    };
    PlanOperator lop;
    lop.name = op.name;
    for (int t : op.reads) {
      int id = versionOf(t, true);
      if (id < 0)
        return s;
      lop.reads.push_back(id);
    }
    for (int t : op.updates) {
      int id = versionOf(t, true);
      if (id < 0)
        return s;
      lop.updates.push_back(id);
    }
    for (int t : op.writes) {
      int id = versionOf(t, false);
      if (id < 0)
        return s;
      lop.writes.push_back(id);
    }
    for (auto [t, bytes] : op.partialReads)
      lop.partialReads.push_back({local[size_t(d)][size_t(t)], bytes});
    for (const auto *list : {&lop.reads, &lop.writes, &lop.updates})
      for (int id : *list)
        dp.lastOp[size_t(id)] = int(k);
    dp.problem.ops.push_back(std::move(lop));
    dp.globalOp.push_back(int(k));
    for (const auto *list : {&op.reads, &op.writes, &op.updates})
      for (int t : *list) {
        lastDevice[size_t(t)] = d;
        lastOp[size_t(t)] = int(k);
      }
    for (const auto *list : {&op.writes, &op.updates})
      for (int t : *list)
        changed[size_t(t)] = 1;
  }
  // Each handover lasts to the last operator of the versions reading it.
  for (const DeviceProblem &dp : s.devices)
    for (size_t id = 0; id < dp.globalTensor.size(); ++id) {
      const int after = dp.exportedAfter[id];
      if (after < 0)
        continue;
      for (Handover &h : s.exportsAfter[size_t(after)])
        if (h.tensor == dp.globalTensor[id])
          h.lastReader = std::max(h.lastReader, dp.lastOp[id]);
    }
  return s;
}
