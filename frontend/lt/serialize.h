// Saving and loading named tensors in the safetensors format (docs/CHECKPOINTS.md), which
// Python's `safetensors` and other readers of the format open too.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lt/tensor.h"

namespace lt {

/// Named tensors, ordered by name.
using TensorDict = std::map<std::string, Tensor>;
/// The file's `__metadata__`: free-form strings (step, epoch, configuration...).
using StringDict = std::map<std::string, std::string>;

/// What a safetensors file holds. Loaded tensors are eager device data.
struct Checkpoint {
  TensorDict tensors;
  StringDict metadata;
};

/// Writes `tensors` and `metadata` to `path` atomically: a crash at any moment leaves the old
/// file or the new one at `path`, never a torn one. The tensors with pending lazy work are
/// materialized first, all in one graph (one sync, counted with reason "save").
void save(const std::string& path, const TensorDict& tensors, const StringDict& metadata = {},
          Loc loc = Loc::current());

/// Reads a safetensors file, checking all of it; a malformed file throws lt::Error naming the
/// file and the problem.
Checkpoint load(const std::string& path, Loc loc = Loc::current());

/// How a set of loaded tensors matched the tensors they were meant for.
struct LoadReport {
  struct Mismatch {
    std::string name;
    Shape expected;  ///< the target's shape
    Shape found;     ///< the source's shape
  };
  std::vector<std::string> missing;      ///< targets with no source tensor
  std::vector<std::string> unexpected;   ///< source tensors with no target
  std::vector<Mismatch> shape_mismatch;  ///< both present, shapes differ (target left as is)

  bool clean() const { return missing.empty() && unexpected.empty() && shape_mismatch.empty(); }
  /// One line per problem ("missing: fc.bias", ...); empty when clean.
  std::string str() const;
};

/// Copies each source tensor into the target of the same name (cast to the target's dtype, like
/// PyTorch's load_state_dict); targets are handles, so the caller's tensors see the new values.
/// Strict: any missing key, unexpected key or shape mismatch throws lt::Error listing them all
/// (after `what`, e.g. the file) and no target changes. Not strict: what matches is copied, the
/// rest reported. Sources with pending lazy work are materialized first, all in one graph.
LoadReport copy_state(const TensorDict& targets, const TensorDict& source, bool strict,
                      const std::string& what = "state", Loc loc = Loc::current());

/// load(path), then copy_state(targets, its tensors, strict).
LoadReport load_into(const std::string& path, const TensorDict& targets, bool strict = true,
                     Loc loc = Loc::current());

/// DIR/step-<N>.safetensors, the name trainers give the checkpoint of global step N.
std::string checkpoint_path(const std::string& dir, int64_t step);
/// The checkpoint of the highest step in `dir` (only names of the form step-<N>.safetensors:
/// a writer's temporary file is never taken), or nothing when there is none.
std::optional<std::string> latest_checkpoint(const std::string& dir);

}  // namespace lt
