//===- TrainingCheckpointTest.cpp - checkpoints and resumed runs ----------===//
//
// Checkpoints: `sagac train` killed with SIGKILL mid-run and resumed ends
// with the same parameters, bit for bit, as an uninterrupted run (and its
// log has each epoch once); damaged checkpoint files are errors with a
// message.
//
// Parameter files (--save-params) read back what they wrote and refuse
// impossible shapes; early stopping's state survives a resume.
//
//===----------------------------------------------------------------------===//

#include "TrainingTestUtil.h"
#include "runtime/graph/Crc32.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/ParamsFile.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

using namespace saga;
using namespace sagatest::training;

namespace {

//===----------------------------------------------------------------------===//
// Checkpoints: sagac train killed and resumed
//===----------------------------------------------------------------------===//

/// A folder for one test's files, removed afterwards.
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string &name) {
    path = std::filesystem::path(testing::TempDir()) /
           ("saga-training-" + name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  std::string operator/(const std::string &file) const {
    return (path / file).string();
  }
};

/// Starts `args` with stdout and stderr to `output`; returns the pid.
pid_t spawn(const std::vector<std::string> &args, const std::string &output) {
  std::vector<char *> argv;
  for (const std::string &a : args)
    argv.push_back(const_cast<char *>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  EXPECT_EQ(rc, 0) << "cannot start " << args[0] << ": " << std::strerror(rc);
  return rc == 0 ? pid : -1;
}

/// Waits for `pid`; returns its wait status.
int waitFor(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

struct Outcome {
  int exitCode = -1; // -1: killed by a signal
  std::string output;
};

Outcome runSagac(const std::vector<std::string> &args,
                 const std::string &outputFile) {
  std::vector<std::string> full{SAGA_TOOLS_DIR "/sagac"};
  full.insert(full.end(), args.begin(), args.end());
  pid_t pid = spawn(full, outputFile);
  Outcome o;
  if (pid < 0)
    return o;
  int status = waitFor(pid);
  o.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  o.output = readFile(outputFile);
  return o;
}

std::vector<std::string> trainArgs(const std::string &ckpt,
                                   const std::string &params, unsigned epochs) {
  return {"train",         SAGA_EXAMPLES_DIR "/gcn.saga",
          "--data",        SAGA_EXAMPLES_DIR "/data/cora",
          "--epochs",      std::to_string(epochs),
          "--seed",        "0",
          "--threads",     "2",
          "--checkpoint",  ckpt,
          "--save-params", params};
}

/// Starts `sagac args`, polls `ckpt` until it records epoch >= `killAfter`
/// and kills the process with SIGKILL. Every checkpoint read meanwhile must
/// load (it is written to a temporary file and renamed) and epochs never go
/// back. Returns the epoch of the checkpoint left behind, or 0 (and a
/// failure) when that did not work out.
uint64_t startAndKill(const std::vector<std::string> &sagacArgs,
                      const std::string &ckpt, const std::string &output,
                      uint64_t killAfter) {
  std::vector<std::string> args{SAGA_TOOLS_DIR "/sagac"};
  args.insert(args.end(), sagacArgs.begin(), sagacArgs.end());
  pid_t pid = spawn(args, output);
  if (pid <= 0)
    return 0;
  uint64_t seen = 0;
  bool exited = false, torn = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (std::chrono::steady_clock::now() < deadline && !torn) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      exited = true;
      break;
    }
    if (std::filesystem::exists(ckpt)) {
      auto c = loadCheckpoint(ckpt);
      if (!c) {
        ADD_FAILURE() << "a checkpoint read while training: "
                      << llvm::toString(c.takeError());
        torn = true;
        break;
      }
      EXPECT_GE(c->epoch, seen) << "the checkpoint went back";
      seen = c->epoch;
      if (seen >= killAfter)
        break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (exited) {
    ADD_FAILURE() << "training ended before it could be killed:\n"
                  << readFile(output);
    return 0;
  }
  ::kill(pid, SIGKILL);
  int status = waitFor(pid);
  if (torn)
    return 0;
  if (seen < killAfter) {
    ADD_FAILURE() << "no checkpoint of epoch " << killAfter << " in 120 s";
    return 0;
  }
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  auto c = loadCheckpoint(ckpt);
  if (!c) {
    ADD_FAILURE() << "the checkpoint after the kill: "
                  << llvm::toString(c.takeError());
    return 0;
  }
  return c->epoch;
}

TEST(TrainingCheckpoint, KilledAndResumedRunMatchesUninterrupted) {
  constexpr unsigned kEpochs = 30, kKillAfter = 10;
  TempDir dir("resume");

  // The uninterrupted run.
  Outcome full =
      runSagac(trainArgs(dir / "full.ckpt", dir / "full.params", kEpochs),
               dir / "full.out");
  ASSERT_EQ(full.exitCode, 0) << full.output;
  expectContains(full.output, "final (epoch 30)");

  // The same run, killed once its checkpoint has passed epoch 10.
  uint64_t atKill = startAndKill(
      trainArgs(dir / "killed.ckpt", dir / "killed.params", kEpochs),
      dir / "killed.ckpt", dir / "killed.out", kKillAfter);
  ASSERT_GE(atKill, kKillAfter);
  ASSERT_LT(atKill, kEpochs);
  EXPECT_FALSE(std::filesystem::exists(dir / "killed.params"));
  RecordProperty("killed_after_epoch", std::to_string(atKill));

  // Resumed: it continues at the next epoch and ends where the
  // uninterrupted run ended, bit for bit.
  std::vector<std::string> resumeArgs =
      trainArgs(dir / "killed.ckpt", dir / "killed.params", kEpochs);
  resumeArgs.push_back("--resume");
  Outcome resumed = runSagac(resumeArgs, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  char firstLine[32];
  std::snprintf(firstLine, sizeof firstLine, "epoch %4u/%u",
                unsigned(atKill + 1), kEpochs);
  expectContains(resumed.output, firstLine, "the resumed run");
  char before[32];
  std::snprintf(before, sizeof before, "epoch %4u/%u", unsigned(atKill),
                kEpochs);
  EXPECT_EQ(resumed.output.find(before), std::string::npos)
      << "the resumed run repeated epoch " << atKill;
  expectContains(resumed.output, "final (epoch 30)");

  // The parameter files (every value with 9 significant digits, which
  // identify an f32) are byte-identical.
  std::string a = readFile(dir / "full.params"),
              b = readFile(dir / "killed.params");
  EXPECT_GT(a.size(), 1433u * 16u * 9u);
  expectContains(a, "\nGCNConv#1.b 7\n");
  EXPECT_TRUE(a == b) << "the resumed run's parameters differ from the "
                         "uninterrupted run's";
  // The final checkpoints (parameters and Adam's moments) agree too.
  EXPECT_TRUE(readFile(dir / "full.ckpt") == readFile(dir / "killed.ckpt"))
      << "final checkpoints differ";
}

/// A small checkpoint, as bytes.
std::string smallCheckpointBytes(const TempDir &dir) {
  Checkpoint c;
  c.epoch = 3;
  c.step = 3;
  for (NamedTensors *ts : {&c.params, &c.moment1, &c.moment2}) {
    Tensor w({2, 3}), b({3});
    for (int i = 0; i < 6; ++i)
      w.f32()[i] = float(i) * 0.5f;
    ts->emplace_back("L#0.W", std::move(w));
    ts->emplace_back("L#0.b", std::move(b));
  }
  EXPECT_EQ(errorText(saveCheckpoint(dir / "small.ckpt", c)), "");
  return readFile(dir / "small.ckpt");
}

void writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), std::streamsize(bytes.size()));
}

TEST(TrainingCheckpoint, RoundTrip) {
  TempDir dir("roundtrip");
  std::string bytes = smallCheckpointBytes(dir);
  auto c = loadCheckpoint(dir / "small.ckpt");
  ASSERT_TRUE(bool(c)) << llvm::toString(c.takeError());
  EXPECT_EQ(c->epoch, 3u);
  EXPECT_EQ(c->step, 3u);
  ASSERT_EQ(c->params.size(), 2u);
  EXPECT_EQ(c->params[0].first, "L#0.W");
  EXPECT_EQ(c->params[0].second.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(c->params[0].second.f32()[5], 2.5f);
  EXPECT_EQ(c->moment2[1].second.shape(), (std::vector<int64_t>{3}));
  // Saving leaves no temporary file behind.
  EXPECT_FALSE(std::filesystem::exists(dir / "small.ckpt.tmp"));
}

/// A file cut short mid-tensor reads as a shape larger than the bytes left:
/// "truncated checkpoint" or "damaged checkpoint (... impossible shape)";
/// from version 3 the checksum says so first.
void expectTruncatedOrDamaged(const std::string &message,
                              const std::string &what) {
  EXPECT_TRUE(message.find("truncated checkpoint") != std::string::npos ||
              message.find("damaged checkpoint") != std::string::npos ||
              message.find("checksum mismatch: the checkpoint is damaged or "
                           "truncated") != std::string::npos)
      << what << ": " << message;
}

/// A version 3 checkpoint as version 2 wrote it (no checksum): what the
/// structural checks behind the checksum still see in old files.
std::string asVersion2(std::string v3) {
  uint64_t two = 2;
  v3.replace(8, 8, reinterpret_cast<const char *>(&two), 8);
  return v3.substr(0, v3.size() - 8);
}

TEST(TrainingCheckpoint, TruncatedAtEveryLength) {
  TempDir dir("truncated");
  std::string bytes = smallCheckpointBytes(dir);
  ASSERT_GT(bytes.size(), 100u);
  for (size_t n = 0; n < bytes.size(); ++n) {
    writeFile(dir / "cut.ckpt", bytes.substr(0, n));
    auto c = loadCheckpoint(dir / "cut.ckpt");
    ASSERT_FALSE(bool(c)) << "a checkpoint cut to " << n << " of "
                          << bytes.size() << " bytes loaded";
    std::string m = llvm::toString(c.takeError());
    expectContains(m, dir / "cut.ckpt", std::to_string(n) + " bytes");
    if (n < 8)
      expectContains(m, "not a Saga checkpoint", std::to_string(n) + " bytes");
    else
      expectTruncatedOrDamaged(m, std::to_string(n) + " bytes");
  }
}

TEST(TrainingCheckpoint, DamagedHeaders) {
  TempDir dir("damaged");
  std::string bytes = smallCheckpointBytes(dir);
  auto load = [&](std::string damaged) {
    writeFile(dir / "bad.ckpt", damaged);
    auto c = loadCheckpoint(dir / "bad.ckpt");
    EXPECT_FALSE(bool(c)) << "a damaged checkpoint loaded";
    return c ? std::string() : llvm::toString(c.takeError());
  };
  auto setU64 = [](std::string s, size_t at, uint64_t v) {
    // (replace rather than memcpy into s.data(): g++ 12 at -O3 reports a
    // false stringop-overflow for the latter)
    char raw[8];
    std::memcpy(raw, &v, 8);
    s.replace(at, 8, raw, 8);
    return s;
  };
  std::string text = "GCNConv#0.W 2 2\n1 2 3 4\n";
  expectContains(load(text), "not a Saga checkpoint");
  std::string wrongMagic = bytes;
  wrongMagic[3] = 'X';
  expectContains(load(wrongMagic), "not a Saga checkpoint");
  expectContains(load(setU64(bytes, 8, 5)),
                 "checkpoint version 5 is not supported (expected 1 to 4)");
  // A version 3 file (its checksum over the size modulo 2^32, the same
  // below 4 GiB) still loads.
  {
    std::string v3 = setU64(bytes, 8, 3);
    uint64_t crc = crc32Zlib(0, v3.data(), v3.size() - 8);
    v3 = setU64(v3, v3.size() - 8, crc);
    writeFile(dir / "v3.ckpt", v3);
    auto c = loadCheckpoint(dir / "v3.ckpt");
    EXPECT_TRUE(bool(c)) << llvm::toString(c.takeError());
  }
  // Any flipped byte, anywhere, is a checksum mismatch.
  for (size_t at = 16; at < bytes.size(); at += 7) {
    std::string flipped = bytes;
    flipped[at] ^= 0x10;
    expectContains(load(flipped), "checksum mismatch: the checkpoint is "
                                  "damaged or truncated");
  }
  // The structure behind the checksum, as version 2 files (none) reach it.
  bytes = asVersion2(bytes);
  // Offsets: magic 0, version 8, epoch 16, step 24, best validation
  // accuracy 32, epochs since 40, tensor count 48, first name length 56.
  expectTruncatedOrDamaged(load(setU64(bytes, 48, uint64_t(1) << 40)),
                           "tensor count 2^40");
  expectContains(load(setU64(bytes, 56, ~uint64_t(0))), "truncated checkpoint");
  expectContains(load(setU64(bytes, 56, 1000)), "truncated checkpoint");
  // Rank (after the 5-byte name "L#0.W" at 64) and the first dimension.
  expectTruncatedOrDamaged(load(setU64(bytes, 69, uint64_t(1) << 50)),
                           "rank 2^50");
  expectTruncatedOrDamaged(load(setU64(bytes, 77, uint64_t(1) << 40)),
                           "dimension 2^40");
  // A version 1 file (no early-stopping state) still loads: drop those 16
  // bytes and set the version.
  std::string v1 = setU64(bytes, 8, 1);
  v1.erase(32, 16);
  writeFile(dir / "v1.ckpt", v1);
  auto old = loadCheckpoint(dir / "v1.ckpt");
  ASSERT_TRUE(bool(old)) << llvm::toString(old.takeError());
  EXPECT_EQ(old->bestVal, -1.0);
  EXPECT_EQ(old->sinceBest, 0u);
  EXPECT_TRUE(bool(loadCheckpoint(dir / "small.ckpt")));
}

TEST(TrainingCheckpoint, CorruptCheckpointsAtTheCommandLine) {
  TempDir dir("cli");
  // A real checkpoint of GCN on Cora, after one epoch.
  Outcome first =
      runSagac(trainArgs(dir / "gcn.ckpt", dir / "p1", 1), dir / "first.out");
  ASSERT_EQ(first.exitCode, 0) << first.output;
  std::string bytes = readFile(dir / "gcn.ckpt");
  ASSERT_GT(bytes.size(), 1000u);

  auto resume = [&](const std::string &ckpt, const std::string &name) {
    std::vector<std::string> args = trainArgs(ckpt, dir / "p2", 3);
    args.push_back("--resume");
    return runSagac(args, dir / (name + ".out"));
  };
  struct Case {
    std::string name, bytes, message;
  } cases[] = {
      {"half", bytes.substr(0, bytes.size() / 2), ""}, // truncated or damaged
      {"text", "hello\n", "not a Saga checkpoint"},
  };
  for (const Case &c : cases) {
    writeFile(dir / (c.name + ".ckpt"), c.bytes);
    Outcome o = resume(dir / (c.name + ".ckpt"), c.name);
    EXPECT_EQ(o.exitCode, 1) << c.name << ":\n" << o.output;
    std::string prefix = "sagac: error: " + dir / (c.name + ".ckpt") + ": ";
    expectContains(o.output, prefix + c.message, c.name);
    if (c.message.empty())
      expectTruncatedOrDamaged(o.output.substr(o.output.find(prefix)), c.name);
  }
  // A missing checkpoint.
  Outcome missing = resume(dir / "none.ckpt", "none");
  EXPECT_EQ(missing.exitCode, 1);
  expectContains(missing.output,
                 "sagac: error: cannot open checkpoint " + dir / "none.ckpt");

  // A checkpoint of another model: its shapes do not fit.
  Outcome other =
      runSagac({"train", SAGA_EXAMPLES_DIR "/graphsage.saga", "--data",
                SAGA_EXAMPLES_DIR "/data/cora", "--epochs", "1", "--threads",
                "2", "--checkpoint", dir / "sage.ckpt"},
               dir / "sage.out");
  ASSERT_EQ(other.exitCode, 0) << other.output;
  Outcome wrongModel = resume(dir / "sage.ckpt", "wrong_model");
  EXPECT_EQ(wrongModel.exitCode, 1) << wrongModel.output;
  expectContains(wrongModel.output,
                 "sagac: error: the checkpoint has no state for parameter "
                 "'GCNConv#0.W'");

  // The damaged files were left alone and the good one still resumes.
  Outcome good = resume(dir / "gcn.ckpt", "good");
  EXPECT_EQ(good.exitCode, 0) << good.output;
  expectContains(good.output, "epoch    2/3");
}

// saveParamsFile names every layer parameter Layer#k.name; loadParamsFile
// reads those names back ('#' starts a comment only at the start of a
// token), so `sagac train --save-params` output works with `sagac run
// --params`.
TEST(TrainingCheckpoint, ParamsFileRoundTrip) {
  TempDir dir("params");
  Tensor w({2, 3}), b({3});
  for (int i = 0; i < 6; ++i)
    w.f32()[i] = float(i) / 3;
  NamedTensors params;
  params.emplace_back("GCNConv#0.W", w);
  params.emplace_back("GCNConv#0.b", b);
  std::string path = dir / "params.txt";
  ASSERT_EQ(errorText(saveParamsFile(path, params)), "");
  auto back = loadParamsFile(path);
  ASSERT_TRUE(bool(back)) << llvm::toString(back.takeError());
  ASSERT_EQ(back->size(), 2u);
  EXPECT_EQ((*back)[0].first, "GCNConv#0.W");
  EXPECT_TRUE(std::memcmp((*back)[0].second.f32(), w.f32(), 24) == 0);
}

// Found by the params fuzzer (test/fuzz): a header declaring far more
// values than the file holds allocated them first (3.4 GB for a 130-byte
// file), and dimensions whose product overflows wrapped. Both are refused
// at the header line.
TEST(TrainingCheckpoint, ParamsFileShapeLargerThanTheFile) {
  TempDir dir("params-shape");
  std::string path = dir / "params.txt";
  writeFile(path, "# saga parameters\nLin#0.W 853220105\n0.5 1\n");
  EXPECT_EQ(errorText(loadParamsFile(path).takeError()),
            path + ":2: 'Lin#0.W' declares 853220105 values; the 7 bytes "
                   "left in the file hold at most 4");
  writeFile(path, "L.W 4294967296 4294967296 4294967296\n1\n");
  EXPECT_EQ(errorText(loadParamsFile(path).takeError()),
            path + ":1: 'L.W' declares 18446744073709551615 values; the 3 "
                   "bytes left in the file hold at most 2");
}

// A dimension with its sign bit set (one flipped bit), or dimensions whose
// product overflows, are a damaged checkpoint with a message (the size check
// used to wrap in uint64 arithmetic and Tensor's constructor then aborted the
// process).
TEST(TrainingCheckpoint, DamagedDimensionsInACheckpoint) {
  TempDir dir("dims");
  std::string bytes = asVersion2(smallCheckpointBytes(dir));
  auto setU64 = [](std::string s, size_t at, uint64_t v) {
    // (replace rather than memcpy into s.data(): g++ 12 at -O3 reports a
    // false stringop-overflow for the latter)
    char raw[8];
    std::memcpy(raw, &v, 8);
    s.replace(at, 8, raw, 8);
    return s;
  };
  // The first tensor, [2, 3]: rank at byte 69, dimensions at 77 and 85.
  std::string signBit = setU64(bytes, 77, 2 | (uint64_t(1) << 63));
  std::string overflow =
      setU64(setU64(bytes, 77, uint64_t(1) << 32), 85, uint64_t(1) << 32);
  std::string path = dir / "bad.ckpt";
  for (const auto &[what, damaged] :
       {std::pair<const char *, std::string>{"sign bit", signBit},
        {"overflow", overflow}}) {
    writeFile(path, damaged);
    auto c = loadCheckpoint(path);
    ASSERT_FALSE(bool(c)) << what
                          << ": a checkpoint with impossible "
                             "dimensions loaded";
    expectContains(llvm::toString(c.takeError()),
                   path + ": damaged checkpoint (tensor 'L#0.W' has an "
                          "impossible shape)",
                   what);
  }
}

// The JSON-lines log of a killed and resumed run has exactly one line per
// epoch, 1 to 30: each epoch's line is flushed before its checkpoint is
// written, and --resume keeps the lines of the epochs up to the
// checkpoint's and drops later ones. (The kill comes right after a
// checkpoint appears, between it and the next epoch's line.)
TEST(TrainingCheckpoint, LogOfAKilledAndResumedRun) {
  TempDir dir("log");
  std::vector<std::string> args =
      trainArgs(dir / "run.ckpt", dir / "run.params", 30);
  args.push_back("--log");
  args.push_back(dir / "run.jsonl");
  uint64_t atKill =
      startAndKill(args, dir / "run.ckpt", dir / "killed.out", 10);
  ASSERT_GE(atKill, 10u);
  args.push_back("--resume");
  Outcome resumed = runSagac(args, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  std::istringstream log(readFile(dir / "run.jsonl"));
  std::string line;
  unsigned expected = 1;
  while (std::getline(log, line)) {
    std::string want = "{\"epoch\": " + std::to_string(expected) + ",";
    EXPECT_EQ(line.substr(0, want.size()), want) << "line " << expected;
    ++expected;
  }
  EXPECT_EQ(expected, 31u) << "the log has " << expected - 1
                           << " lines for 30 epochs";
}

// Early stopping's state (the best validation accuracy and the epochs since)
// is in the checkpoint: a run stopped 3 epochs before the uninterrupted one
// stopped early, then resumed, stops after the same epoch. (Before the state
// was saved, GCN on Cora with --patience 5 stopped after epoch 18
// uninterrupted and after epoch 23 resumed.)
TEST(TrainingCheckpoint, EarlyStoppingAcrossResume) {
  TempDir dir("patience");
  auto args = [&](const std::string &ckpt, unsigned epochs) {
    std::vector<std::string> a =
        trainArgs(ckpt, dir / (ckpt + ".params"), epochs);
    a.push_back("--patience");
    a.push_back("5");
    return a;
  };
  Outcome full = runSagac(args(dir / "full.ckpt", 200), dir / "full.out");
  ASSERT_EQ(full.exitCode, 0) << full.output;
  expectContains(full.output, "stopped early");
  auto end = loadCheckpoint(dir / "full.ckpt");
  ASSERT_TRUE(bool(end)) << llvm::toString(end.takeError());
  ASSERT_GT(end->epoch, 3u);
  // Stopped 3 epochs before the uninterrupted run stopped, then resumed.
  Outcome part = runSagac(args(dir / "part.ckpt", unsigned(end->epoch) - 3),
                          dir / "part.out");
  ASSERT_EQ(part.exitCode, 0) << part.output;
  std::vector<std::string> resume = args(dir / "part.ckpt", 200);
  resume.push_back("--resume");
  Outcome resumed = runSagac(resume, dir / "resumed.out");
  ASSERT_EQ(resumed.exitCode, 0) << resumed.output;
  auto after = loadCheckpoint(dir / "part.ckpt");
  ASSERT_TRUE(bool(after)) << llvm::toString(after.takeError());
  EXPECT_EQ(after->epoch, end->epoch)
      << "the uninterrupted run stopped after epoch " << end->epoch
      << ", the resumed one after epoch " << after->epoch;
}

} // namespace
