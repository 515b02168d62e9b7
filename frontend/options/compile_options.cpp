// lt::CompileOptions: the typed face of eight settings (LT_OPT_LEVEL, LT_EPILOGUES,
// LT_CHANNELS_LAST, LT_WIDE_GEMM_RESULTS, LT_VERIFY, LT_CACHE_DIR, LT_BUCKET_FIRST_KB and
// LT_BUCKET_KB), so that code setting them goes through the same validation as the environment.
#include "frontend/options/store.h"
#include "lt/lazy.h"
#include "lt/options.h"

namespace lt {

CompileOptions compile_options() {
  using options::Setting;
  init();
  CompileOptions o;
  o.opt_level = static_cast<int>(options::number(Setting::OptLevel));
  o.epilogues = options::enabled(Setting::Epilogues);
  o.channels_last = options::enabled(Setting::ChannelsLast);
  o.wide_gemm_results = options::enabled(Setting::WideGemmResults);
  o.verify = options::enabled(Setting::Verify);
  o.disk_cache = !options::text(Setting::CacheDir).empty();
  o.bucket_first_kb = options::number(Setting::BucketFirstKb);
  o.bucket_kb = options::number(Setting::BucketKb);
  return o;
}

void set_compile_options(const CompileOptions& o) {
  using options::Setting;
  const CompileOptions now = compile_options();
  // Only what changes is set, so that the rest keeps its source in options_report().
  if (o.opt_level != now.opt_level) options::set_number(Setting::OptLevel, o.opt_level);
  if (o.epilogues != now.epilogues) options::set_number(Setting::Epilogues, o.epilogues);
  if (o.channels_last != now.channels_last)
    options::set_number(Setting::ChannelsLast, o.channels_last);
  if (o.wide_gemm_results != now.wide_gemm_results)
    options::set_number(Setting::WideGemmResults, o.wide_gemm_results);
  if (o.verify != now.verify) options::set_number(Setting::Verify, o.verify);
  if (o.bucket_first_kb != now.bucket_first_kb)
    options::set_number(Setting::BucketFirstKb, o.bucket_first_kb);
  if (o.bucket_kb != now.bucket_kb) options::set_number(Setting::BucketKb, o.bucket_kb);
  if (o.disk_cache != now.disk_cache) {
    options::SettingValue dir = options::default_value(Setting::CacheDir);
    if (!o.disk_cache) dir.text.clear();
    dir.source = options::Source::Code;
    options::set(Setting::CacheDir, std::move(dir));
  }
}

}  // namespace lt
