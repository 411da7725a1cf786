//===- Plot.cpp - training curves from a run's JSON-lines log -------------===//

#include "Plot.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace saga;

llvm::Expected<std::vector<EpochPoint>>
saga::readTrainingLog(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return llvm::createStringError(path + ": cannot read: " +
                                   buffer.getError().message());
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/true);
  std::vector<EpochPoint> epochs;
  for (size_t i = 0; i < lines.size(); ++i) {
    llvm::StringRef line = lines[i].trim();
    if (line.empty())
      continue;
    std::string where = path + ":" + std::to_string(i + 1) + ": ";
    auto value = llvm::json::parse(line);
    if (!value)
      return llvm::createStringError(where + "not JSON: " +
                                     llvm::toString(value.takeError()));
    const llvm::json::Object *o = value->getAsObject();
    if (!o)
      return llvm::createStringError(where + "not a JSON object");
    EpochPoint p;
    struct Field {
      const char *name;
      double *to;
    } fields[] = {{"epoch", &p.epoch},         {"loss", &p.loss},
                  {"train_acc", &p.trainAcc}, {"val_acc", &p.valAcc},
                  {"test_acc", &p.testAcc},   {"seconds", &p.seconds}};
    for (const Field &f : fields) {
      std::optional<double> v = o->getNumber(f.name);
      if (!v || !std::isfinite(*v))
        return llvm::createStringError(where + "no number '" + f.name + "'");
      *f.to = *v;
    }
    if (!epochs.empty() && p.epoch <= epochs.back().epoch)
      return llvm::createStringError(
          where + "epoch " + std::to_string(int64_t(p.epoch)) +
          " after epoch " + std::to_string(int64_t(epochs.back().epoch)));
    epochs.push_back(p);
  }
  if (epochs.empty())
    return llvm::createStringError(path + ": no epochs to plot");
  return epochs;
}

namespace {

/// Round tick positions covering [lo, hi], about `count` of them.
std::vector<double> ticks(double lo, double hi, int count) {
  double span = hi - lo;
  if (!(span > 0))
    span = std::max(1.0, std::abs(hi));
  double raw = span / count, mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  // From the last tick at or below lo to the first at or above hi.
  std::vector<double> t;
  double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  for (double k = first; k <= last; k += 1)
    t.push_back(std::abs(k) < 1e-9 ? 0.0 : k * step);
  return t;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string escape(const std::string &text) {
  std::string s;
  for (char c : text) {
    if (c == '<')
      s += "&lt;";
    else if (c == '>')
      s += "&gt;";
    else if (c == '&')
      s += "&amp;";
    else
      s += c;
  }
  return s;
}

struct Series {
  std::string name, colour;
  std::vector<double> values;
};

/// One panel at (x0, y0), w x h: axes, ticks, grid, labels, legend.
void panel(llvm::raw_ostream &svg, double x0, double y0, double w, double h,
           const std::vector<double> &epochs, const std::vector<Series> &series,
           const std::string &yLabel, bool fromZero) {
  const double left = x0 + 70, right = x0 + w - 20, top = y0 + 20,
               bottom = y0 + h - 50;
  double lo = fromZero ? 0 : INFINITY, hi = -INFINITY;
  for (const Series &s : series)
    for (double v : s.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (hi <= lo)
    hi = lo + 1;
  std::vector<double> yt = ticks(lo, hi, 5);
  lo = yt.front();
  hi = yt.back();
  double e0 = epochs.front(), e1 = epochs.back();
  if (e1 <= e0)
    e1 = e0 + 1;
  std::vector<double> xt = ticks(e0, e1, 8);
  xt.erase(std::remove_if(xt.begin(), xt.end(),
                          [&](double e) { return e < e0 || e > e1; }),
           xt.end());
  auto X = [&](double e) { return left + (e - e0) / (e1 - e0) * (right - left); };
  auto Y = [&](double v) { return bottom - (v - lo) / (hi - lo) * (bottom - top); };
  svg << llvm::format("<g font-family=\"sans-serif\" font-size=\"12\">\n");
  for (double v : yt) {
    if (v < lo - 1e-12 || v > hi + 1e-12)
      continue;
    svg << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"#ddd\"/>\n",
                        left, Y(v), right, Y(v));
    svg << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">",
                        left - 6, Y(v) + 4)
        << number(v) << "</text>\n";
  }
  for (double e : xt) {
    if (e < e0 - 1e-9 || e > e1 + 1e-9)
      continue;
    svg << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                        "stroke=\"#000\"/>\n",
                        X(e), bottom, X(e), bottom + 5);
    svg << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
                        X(e), bottom + 18)
        << number(e) << "</text>\n";
  }
  // Axes and their labels.
  svg << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#000\"/>\n",
                      left, bottom, right, bottom);
  svg << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
                      "stroke=\"#000\"/>\n",
                      left, top, left, bottom);
  svg << llvm::format("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                      "epoch</text>\n",
                      (left + right) / 2, bottom + 38);
  svg << llvm::format("<text transform=\"translate(%.1f %.1f) rotate(-90)\" "
                      "text-anchor=\"middle\">",
                      x0 + 18, (top + bottom) / 2)
      << escape(yLabel) << "</text>\n";
  // The curves, then the legend (top right, boxed).
  for (const Series &s : series) {
    svg << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << s.colour
        << "\" points=\"";
    for (size_t i = 0; i < s.values.size(); ++i)
      svg << llvm::format("%.1f,%.1f ", X(epochs[i]), Y(s.values[i]));
    svg << "\"/>\n";
  }
  // The legend in the corner (top or bottom right) the curves cross least.
  size_t longest = 0;
  for (const Series &s : series)
    longest = std::max(longest, s.name.size());
  double lw = 52 + 7 * double(longest), lh = 8 + 18 * double(series.size());
  double lx = right - lw - 8, ly = top + 8;
  auto crossings = [&](double y) {
    int n = 0;
    for (const Series &s : series)
      for (size_t i = 0; i < s.values.size(); ++i) {
        double px = X(epochs[i]), py = Y(s.values[i]);
        n += px >= lx && px <= lx + lw && py >= y - 6 && py <= y + lh + 6;
      }
    return n;
  };
  if (crossings(bottom - lh - 8) < crossings(ly))
    ly = bottom - lh - 8;
  svg << llvm::format("<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                      "height=\"%.1f\" fill=\"#fff\" fill-opacity=\"0.85\" "
                      "stroke=\"#999\"/>\n",
                      lx, ly, lw, lh);
  for (size_t i = 0; i < series.size(); ++i) {
    double y = ly + 16 + 18 * double(i);
    svg << llvm::format("<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                        "y2=\"%.1f\" stroke-width=\"2\" stroke=\"",
                        lx + 8, y - 4, lx + 32, y - 4)
        << series[i].colour << "\"/>\n";
    svg << llvm::format("<text x=\"%.1f\" y=\"%.1f\">", lx + 40, y)
        << escape(series[i].name) << "</text>\n";
  }
  svg << "</g>\n";
}

} // namespace

std::string saga::trainingCurvesSvg(const std::vector<EpochPoint> &epochs,
                                    const std::string &title) {
  std::string text;
  llvm::raw_string_ostream svg(text);
  const double w = 800, h = 300;
  svg << llvm::format("<svg xmlns=\"http://www.w3.org/2000/svg\" "
                      "width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f "
                      "%.0f\">\n",
                      w, 40 + 3 * h, w, 40 + 3 * h);
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  svg << llvm::format("<text x=\"%.0f\" y=\"26\" font-family=\"sans-serif\" "
                      "font-size=\"16\" text-anchor=\"middle\">",
                      w / 2)
      << escape(title) << "</text>\n";
  std::vector<double> x;
  Series loss{"training loss", "#1f77b4", {}};
  Series train{"train accuracy", "#2ca02c", {}},
      val{"validation accuracy", "#ff7f0e", {}},
      test{"test accuracy", "#d62728", {}};
  Series time{"epoch time", "#9467bd", {}};
  for (const EpochPoint &p : epochs) {
    x.push_back(p.epoch);
    loss.values.push_back(p.loss);
    train.values.push_back(p.trainAcc);
    val.values.push_back(p.valAcc);
    test.values.push_back(p.testAcc);
    time.values.push_back(p.seconds * 1e3);
  }
  panel(svg, 0, 40, w, h, x, {loss}, "loss", /*fromZero=*/true);
  panel(svg, 0, 40 + h, w, h, x, {train, val, test}, "accuracy", true);
  panel(svg, 0, 40 + 2 * h, w, h, x, {time}, "epoch time (ms)", true);
  svg << "</svg>\n";
  return text;
}

llvm::Error saga::writeTrainingCurves(const std::string &path,
                                      const std::vector<EpochPoint> &epochs,
                                      const std::string &title) {
  if (llvm::Error e = llvm::writeToOutput(path, [&](llvm::raw_ostream &out) {
        out << trainingCurvesSvg(epochs, title);
        return llvm::Error::success();
      }))
    return llvm::createStringError(path + ": cannot write: " +
                                   llvm::toString(std::move(e)));
  return llvm::Error::success();
}

int saga::runPlot(const std::string &log, const std::string &out) {
  auto epochs = readTrainingLog(log);
  if (!epochs) {
    llvm::errs() << "sagac: error: " << llvm::toString(epochs.takeError())
                 << "\n";
    return 1;
  }
  if (llvm::Error e = writeTrainingCurves(
          out, *epochs, llvm::sys::path::filename(log).str())) {
    llvm::errs() << "sagac: error: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  llvm::outs() << "plotted " << epochs->size() << " epochs of " << log
               << " to " << out << "\n";
  return 0;
}
