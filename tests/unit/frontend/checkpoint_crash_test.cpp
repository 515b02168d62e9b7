// Atomic checkpoint writes: a writer killed (kill -9) after part of its bytes leaves the previous
// checkpoint loadable with its old values, and its temporary file is never taken for one.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "frontend/io/atomic_file_testing.h"
#include "lt/lt.h"
#include "tests/support/scratch_dir.h"

namespace lt {
namespace {

using testing::read_bytes;
using testing::ScratchDir;

void stop_self() { raise(SIGSTOP); }

/// Forks a process that saves `tensors` to `path` and stops itself once `after_bytes` bytes
/// are written; returns its pid when it has stopped.
pid_t stopped_writer(const std::string& path, const TensorDict& tensors, uint64_t after_bytes) {
  const pid_t pid = fork();
  if (pid == 0) {
    io::testing::interrupt_writes_after(after_bytes, stop_self);
    try {
      save(path, tensors);
    } catch (...) {
      _exit(3);
    }
    _exit(0);
  }
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, WUNTRACED), pid);
  EXPECT_TRUE(WIFSTOPPED(status)) << "the writer did not stop: status " << status;
  return pid;
}

void kill_writer(pid_t pid) {
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TensorDict state(double value, int64_t n) {
  return {{"w", full({n}, value)}, {"step", full({}, value, DType::I64)}};
}

TEST(CheckpointCrash, AWriterKilledAtAnyPointLeavesThePreviousCheckpoint) {
  ScratchDir dir;
  const std::string path = checkpoint_path(dir.str(), 20);
  save(path, state(1, 1000), {{"step", "20"}});
  const std::string old_bytes = read_bytes(path);

  const TensorDict next = state(2, 250000);  // about 1 MB, many write() calls' worth
  save(dir.path("reference"), next);
  const uint64_t total = read_bytes(dir.path("reference")).size();
  std::filesystem::remove(dir.path("reference"));

  // In the length, in the header, in the data, and with every byte written but not renamed.
  for (uint64_t after : {uint64_t(0), uint64_t(5), uint64_t(60), total / 2, total - 1, total}) {
    SCOPED_TRACE("stopped after " + std::to_string(after) + " of " + std::to_string(total));
    const pid_t pid = stopped_writer(path, next, after);
    const std::string temp = dir.path(".step-20.safetensors.tmp." + std::to_string(pid));
    ASSERT_TRUE(std::filesystem::exists(temp));
    EXPECT_EQ(std::filesystem::file_size(temp), after);  // it stopped part-way, as asked
    kill_writer(pid);

    EXPECT_EQ(read_bytes(path), old_bytes);
    const Checkpoint c = load(path);
    EXPECT_EQ(c.tensors.at("w").to_vector<float>(), std::vector<float>(1000, 1.0f));
    EXPECT_EQ(c.tensors.at("step").item<int64_t>(), 1);
    EXPECT_EQ(latest_checkpoint(dir.str()), path);
    if (after < total) {
      EXPECT_THROW(load(temp), Error);  // torn: the loader refuses it too
    }
  }
  // A writer that runs to the end replaces the checkpoint.
  save(path, next);
  EXPECT_EQ(load(path).tensors.at("w").to_vector<float>(), std::vector<float>(250000, 2.0f));
}

TEST(CheckpointCrash, AKilledNextCheckpointIsNotTheLatest) {
  ScratchDir dir;
  save(checkpoint_path(dir.str(), 20), state(1, 10));
  const pid_t pid = stopped_writer(checkpoint_path(dir.str(), 40), state(2, 100000), 4096);
  kill_writer(pid);
  const std::string temp = ".step-40.safetensors.tmp." + std::to_string(pid);
  EXPECT_EQ(dir.list(), (std::vector<std::string>{temp, "step-20.safetensors"}));
  EXPECT_EQ(latest_checkpoint(dir.str()), checkpoint_path(dir.str(), 20));
}

}  // namespace
}  // namespace lt
