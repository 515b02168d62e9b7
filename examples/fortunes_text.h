// Byte-level text for char_gpt: the plain-text fortune files of Debian's `fortunes` package
// (/usr/share/games/fortunes), split into training and validation text by whole fortunes, and cut
// into fixed-length windows of next-byte prediction.
#pragma once
#include <cstdint>
#include <string>

#include "lt/data.h"

namespace lt::examples {

struct FortuneSplit {
  std::string train, validation;  ///< fortunes joined, each followed by "%\n" as in the files
  int64_t train_fortunes = 0, validation_fortunes = 0;
  int64_t files = 0;
};

/// Reads every plain-text fortune file in `dir` (not the `.dat` indexes or the `.u8` links), in
/// name order, splits them at lines holding only "%", shuffles the fortunes with `seed` and puts
/// the last `validation_fraction` of them into the validation text. Throws lt::InputError naming
/// the directory when it holds no fortunes.
FortuneSplit load_fortunes(const std::string& dir, uint64_t seed,
                           double validation_fraction = 0.1);

/// Windows of next-byte prediction: `images` [N, context] are bytes [i*context, (i+1)*context)
/// of `text` and `labels` [N, context] the bytes one further on, both I64, for the N =
/// (size - 1) / context windows that fit.
data::TensorDataset byte_windows(const std::string& text, int64_t context);

/// Entropy of the byte frequencies of `text`, in nats per byte: the loss of the best model that
/// ignores context, which char_gpt's validation loss is compared with.
double unigram_entropy(const std::string& text);

}  // namespace lt::examples
