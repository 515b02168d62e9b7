// Optimizer options as checkpoint metadata: numbers that read back exactly (frontend-internal).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "lt/serialize.h"

namespace lt::optim {

/// The shortest text that reads back as the same double.
std::string number_text(double v);
std::string bool_text(bool v);
/// Comma-separated numbers.
std::string numbers_text(const std::vector<double>& v);

/// Reading a group's options; errors (lt::Error) name the option and the bad text.
double read_number(const StringDict& text, const std::string& name);
bool read_bool(const StringDict& text, const std::string& name);
/// Exactly `count` comma-separated numbers; count 0 accepts any number of them.
std::vector<double> read_numbers(const StringDict& text, const std::string& name, size_t count = 0);

}  // namespace lt::optim
