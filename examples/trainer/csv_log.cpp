#include "examples/trainer/csv_log.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "lt/tensor.h"

namespace lt::examples {

CsvLog::CsvLog(const std::string& path, bool append) {
  if (path.empty()) return;
  std::error_code ec;
  const bool has_rows = append && std::filesystem::file_size(path, ec) > 0 && !ec;
  file_ = std::fopen(path.c_str(), has_rows ? "a" : "w");
  if (!file_)
    throw InputError(fmt::format("--log-csv: cannot write {}: {}", path, std::strerror(errno)));
  if (!has_rows) fmt::print(file_, "{}\n", kHeader);
  std::fflush(file_);
}

CsvLog::~CsvLog() {
  if (file_) std::fclose(file_);
}

void CsvLog::write(const CsvRow& r) {
  if (!file_) return;
  // 9 significant digits: every f32 value reads back exactly.
  auto f = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.9g}", *v) : std::string();
  };
  fmt::print(file_, "{},{},{},{},{},{},{},{},{},{},{},{}\n", r.kind, r.step, r.epoch, f(r.loss),
             f(r.lr), f(r.samples_per_s), f(r.ms_per_step), f(r.data_wait_ms), f(r.peak_mb),
             f(r.eval_loss), f(r.eval_acc), f(r.eval_top5));
  std::fflush(file_);  // a crashed or killed run keeps its rows
}

}  // namespace lt::examples
