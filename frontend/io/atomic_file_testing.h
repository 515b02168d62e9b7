// Test-only control of AtomicFile (not part of the public API): the checkpoint crash test stops
// a writer part-way and kills it.
#pragma once
#include <cstdint>

namespace lt::io::testing {

/// The next AtomicFile that reaches `after_bytes` written bytes calls `stop()` once, before it
/// writes more (or, when that is all its bytes, before commit() syncs and renames).
void interrupt_writes_after(uint64_t after_bytes, void (*stop)());

}  // namespace lt::io::testing
