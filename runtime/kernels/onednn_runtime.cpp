#include "runtime/kernels/onednn_runtime.h"

#include <omp.h>

#include <memory>
#include <new>

namespace lt::rt::onednn {

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

dnnl::stream& thread_stream() {
  thread_local dnnl::stream stream(cpu_engine());
  return stream;
}

void use_one_omp_thread() {
  thread_local const bool set = (omp_set_num_threads(1), true);
  (void)set;
}

void* scratchpad(size_t bytes) {
  struct AlignedDelete {
    void operator()(char* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  thread_local std::unique_ptr<char[], AlignedDelete> buf;
  thread_local size_t size = 0;
  if (bytes > size) {
    buf.reset(static_cast<char*>(::operator new[](bytes, std::align_val_t(64))));
    size = bytes;
  }
  return buf.get();
}

}  // namespace lt::rt::onednn
