//===- Plot.h - training curves from a run's JSON-lines log -----*- C++ -*-===//
//
// `sagac plot run.jsonl curves.svg` and `sagac train ... --plot curves.svg`:
// the loss, the train / validation / test accuracies and the epoch time
// against the epoch, three panels of one SVG file with axes, ticks, axis
// labels and legends. The log is the trainer's (--log): one JSON object per
// epoch with epoch, loss, train_acc, val_acc, test_acc and seconds.
//
//===----------------------------------------------------------------------===//

#ifndef SAGA_TOOLS_SAGAC_PLOT_H
#define SAGA_TOOLS_SAGAC_PLOT_H

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace saga {

struct EpochPoint {
  double epoch = 0, loss = 0, trainAcc = 0, valAcc = 0, testAcc = 0;
  double seconds = 0;
};

/// The epochs of a JSON-lines training log; errors name the file and line.
llvm::Expected<std::vector<EpochPoint>> readTrainingLog(const std::string &path);

/// The curves as an SVG document titled `title`.
std::string trainingCurvesSvg(const std::vector<EpochPoint> &epochs,
                              const std::string &title);

/// Writes them to `path` (whole or not at all).
llvm::Error writeTrainingCurves(const std::string &path,
                                const std::vector<EpochPoint> &epochs,
                                const std::string &title);

/// `sagac plot LOG OUT.svg`: the process exit status.
int runPlot(const std::string &log, const std::string &out);

} // namespace saga

#endif // SAGA_TOOLS_SAGAC_PLOT_H
