#include "ir/result_type.h"

#include <optional>

namespace lt {
namespace {

int category(DType t) { return t == DType::Bool ? 0 : is_integer(t) ? 1 : 2; }

/// c10's combine_categories: the higher priority's dtype, unless the lower one is of a higher
/// category, which then promotes with it.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower || category(*higher) >= category(*lower)) return higher;
  return promote_types(*higher, *lower);
}

}  // namespace

DType result_type(std::span<const PromotionOperand> operands) {
  std::optional<DType> by_rank[3];
  for (const PromotionOperand& o : operands) {
    DType t = o.dtype;
    if (o.rank == PromotionRank::Number && is_float(t)) t = kDefaultFloat;
    std::optional<DType>& r = by_rank[static_cast<int>(o.rank)];
    r = r ? promote_types(*r, t) : t;
  }
  const std::optional<DType> t = combine(by_rank[0], combine(by_rank[1], by_rank[2]));
  return t ? *t : kDefaultFloat;
}

}  // namespace lt
