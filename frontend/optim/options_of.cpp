// OptimizerOf's options as text and their checks, from Options::fields()
// (frontend/optim/option_fields.h), for the library's five options types.
#include "frontend/optim/option_fields.h"
#include "lt/optim.h"

namespace lt::optim {

template <class Options>
void OptimizerOf<Options>::check(const Options& o) const {
  check_fields(o);
  check_together(o);
}

template <class Options>
void OptimizerOf<Options>::check_options(size_t group) const {
  check(options_[group]);
}

template <class Options>
StringDict OptimizerOf<Options>::options_text(size_t group) const {
  return fields_text(options_[group]);
}

template <class Options>
void OptimizerOf<Options>::set_options_text(size_t group, const StringDict& text) {
  const Options o = fields_from_text<Options>(text);
  check(o);
  options_[group] = o;
}

template class OptimizerOf<SGDOptions>;
template class OptimizerOf<AdamOptions>;
template class OptimizerOf<AdamWOptions>;
template class OptimizerOf<RMSpropOptions>;
template class OptimizerOf<AdagradOptions>;

}  // namespace lt::optim
