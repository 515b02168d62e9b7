// A file written so that a crash at any moment leaves either the old file or the new one at its
// path, never a torn one.
#pragma once
#include <cstdint>
#include <string>

namespace lt::io {

/// The bytes go to a temporary file in the same directory, ".NAME.tmp.PID" (a hidden name that
/// no checkpoint scan takes); commit() fsyncs it, renames it over the path (atomic on POSIX) and
/// fsyncs the directory so the rename itself survives a power loss. Destroyed without commit()
/// (an error), it removes the temporary file. One writer per path at a time.
class AtomicFile {
 public:
  /// Creates the temporary file; throws lt::Error when it cannot.
  explicit AtomicFile(std::string path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* data, uint64_t n);
  void commit();
  const std::string& temp_path() const { return temp_; }

 private:
  void close_fd();
  std::string path_, dir_, temp_;
  int fd_ = -1;
  uint64_t written_ = 0;
  bool committed_ = false;
};

}  // namespace lt::io
