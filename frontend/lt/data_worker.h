// A thread that makes data while another thread steps (a data loader's worker, in C++ or the
// Python package's): its ops run eagerly whatever mode the stepping thread set, so a batch is
// data the step's graph reads, never ops traced into it, and they record no autograd history.
#pragma once
#include "lt/autograd.h"

namespace lt::data {

/// The calling thread is a data worker while this lives. set_mode(Mode::Lazy) on it throws;
/// set_mode(Mode::Eager) changes nothing.
class WorkerScope {
 public:
  WorkerScope();
  ~WorkerScope();
  WorkerScope(const WorkerScope&) = delete;
  WorkerScope& operator=(const WorkerScope&) = delete;

 private:
  NoGradGuard no_grad_;
};

}  // namespace lt::data
