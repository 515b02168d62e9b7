// The trainers' CSV log (--log-csv): one row per logged step ("train") and one per evaluation
// ("eval"), with a fixed header; fields that do not apply to a row are empty.
#pragma once
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace lt::examples {

struct CsvRow {
  std::string kind;  ///< "train" or "eval"
  int64_t step = 0;
  int64_t epoch = 0;  ///< 1-based
  std::optional<double> loss = {};
  std::optional<double> lr = {};
  std::optional<double> samples_per_s = {};
  std::optional<double> ms_per_step = {};
  std::optional<double> data_wait_ms = {};  ///< per step, waiting on the data loader
  std::optional<double> peak_mb = {};
  std::optional<double> eval_loss = {};
  std::optional<double> eval_acc = {};
  std::optional<double> eval_top5 = {};
};

class CsvLog {
 public:
  static constexpr const char* kHeader =
      "kind,step,epoch,loss,lr,samples_per_s,ms_per_step,data_wait_ms,peak_mb,eval_loss,eval_acc,"
      "eval_top5";

  /// No file: rows are dropped. `append` keeps an existing file's rows (a resumed run); a new or
  /// empty file gets the header. An unwritable path throws lt::InputError naming it.
  CsvLog(const std::string& path, bool append);
  ~CsvLog();
  CsvLog(const CsvLog&) = delete;
  CsvLog& operator=(const CsvLog&) = delete;

  void write(const CsvRow& row);

 private:
  std::FILE* file_ = nullptr;
};

}  // namespace lt::examples
