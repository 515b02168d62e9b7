// The on-disk object cache: compiled kernels as files in one folder (the frontend's
// LT_CACHE_DIR), keyed by the caller's graph hash plus what compiled them (LLVM version, CPU,
// features), so that a second run of a trainer compiles nothing. LLVM stays out of this header:
// the cache is handed out as a pointer.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace llvm {
class ObjectCache;
}  // namespace llvm

namespace lt::codegen {

/// Process-wide counts, for lt::metrics. A corrupt entry counts as corrupt and as a miss.
struct ObjectCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t writes = 0;
  uint64_t corrupt = 0;
  uint64_t write_errors = 0;
};
ObjectCacheStats object_cache_stats();

/// The module identifier that opts a module into the cache under `key` (letters, digits, '.',
/// '_' and '-'; anything else is hashed). Modules with other identifiers are never cached.
std::string object_cache_module_id(std::string_view key);

/// An llvm::ObjectCache over files in `dir`, one per key: <key>-<compiler hash>.o, where the
/// compiler hash covers `compiler_id` (LLVM version, triple, CPU, features, code model) and the
/// file format version. Entries are written atomically (temp file + rename) with a header
/// (magic, version, compiler hash, size, FNV-1a 64 checksum); a bad entry is reported once to
/// stderr, removed and treated as a miss. One instance is used by one thread at a time; several
/// processes may share the folder.
std::unique_ptr<llvm::ObjectCache> make_disk_object_cache(std::string dir,
                                                          std::string_view compiler_id);

/// The file the disk cache `cache` keeps the module with identifier `module_id` in; empty when
/// `cache` is not a disk cache or the identifier is not cacheable.
std::string object_cache_entry(const llvm::ObjectCache& cache, std::string_view module_id);

/// Writes `bytes`, a whole entry file as another process's cache wrote it, to `path`
/// atomically (replicas on another host receive rank 0's compiled objects this way). The
/// entry's header is checked when it is read, as any entry's. "" or what went wrong.
std::string install_object_cache_entry(const std::string& path, std::string_view bytes);

}  // namespace lt::codegen
