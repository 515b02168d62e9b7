// The check behind fuzz_idx: bytes given to the IDX reader (frontend/data/idx.h) as a file are
// either read as an array that matches its header or rejected with lt::Error. A plain (not
// gzipped) file is also read by an independent few-line reader here, and both must agree:
// same verdict, same dims, same bytes.
#pragma once
#include <string_view>

namespace lt::fuzz {

/// Reads `bytes` as an IDX file, whole and limited to its first item; true when the whole file
/// read, false when rejected with lt::Error. Throws CheckFailure on a bug.
bool check_idx(std::string_view bytes);

}  // namespace lt::fuzz
