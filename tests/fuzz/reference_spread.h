// The reference side of fuzz_ir_compile's comparison. Fuzzed graphs come without the error bounds
// that the random-graph generator derives while drawing (tests/support/random_graph.h), so they
// are measured instead: the interpreter runs the graph once as is and a few more times with
// every value that compiled code may compute differently perturbed by a few ulps (the outputs of
// transcendentals, float sums, library and nn ops; their inputs too, scaled by how many elements
// one output element combines). How far a result element moves under that perturbation tells how
// sensitive it is to the rounding differences compiled code may have.
//
// The comparison then follows the random-graph test's rules: integers and bools exactly, NaN and
// inf at the same places, a value computed by exactly rounded ops only (+ - * /, max, min, casts,
// comparisons, where, views, creation ops) bit for bit up to the sign of zero, any other float
// element within 8x its spread plus 64 ulps of its own magnitude. An element whose class (NaN,
// inf, finite, or an integer's value) changes under perturbation sits on an edge where either
// answer is right, and is not compared.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/buffer.h"
#include "tests/fuzz/input_rng.h"

namespace lt::fuzz {

struct ReferenceRun {
  std::vector<std::shared_ptr<rt::Buffer>> results;  // the interpreter's, on the graph as is
  std::vector<bool> exact;                    // per result: computed by exactly rounded ops only
  std::vector<std::vector<double>> spread;    // per result, per element: largest |moved - ref|
  std::vector<std::vector<uint8_t>> unstable;  // per result, per element: class changed
};

/// Runs g with the interpreter on `params`, then `runs` more times perturbed (data from rng).
/// Throws lt::Error when the interpreter rejects the data (an id out of range, a division by 0).
ReferenceRun run_reference(const ir::Graph& g, std::span<const std::shared_ptr<rt::Buffer>> params,
                           InputRng& rng, int runs = 3);

/// Empty when `got` matches result i of `ref` by the rules above; else the first mismatch and
/// how many elements differ.
std::string compare_result(const ir::Graph& g, const ReferenceRun& ref, size_t i,
                           const rt::Buffer& got);

}  // namespace lt::fuzz
