// RecyclingAllocator: a freed block (or array of up to 4) is the next one of its type and length
// that its thread gets; longer arrays, and blocks freed on another thread, stay correct.
#include "ir/recycling_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

namespace lt {
namespace {

struct Payload {
  int64_t value[6] = {};
};

TEST(RecyclingAllocator, AFreedBlockIsTheNextOneOfItsTypeOnItsThread) {
  std::shared_ptr<Payload> a = make_recycled<Payload>();
  a->value[5] = 7;
  const void* first = a.get();
  a.reset();
  std::shared_ptr<Payload> b = make_recycled<Payload>();
  EXPECT_EQ(b.get(), first);
  EXPECT_EQ(b->value[5], 0);  // constructed anew
}

TEST(RecyclingAllocator, ShortArraysRecycleByLengthAndLongOnesStillWork) {
  RecyclingAllocator<Payload> alloc;
  Payload* three = alloc.allocate(3);
  alloc.deallocate(three, 3);
  Payload* two = alloc.allocate(2);
  EXPECT_NE(two, three);  // another length, another list
  EXPECT_EQ(alloc.allocate(3), three);
  alloc.deallocate(three, 3);
  alloc.deallocate(two, 2);
  RecycledVector<int64_t> v;
  for (int64_t i = 0; i < 1000; ++i) v.push_back(i);  // grows through lengths 1 to 1024
  EXPECT_EQ(v[999], 999);
}

TEST(RecyclingAllocator, BlocksFreedOnAnotherThreadServeThatThread) {
  std::vector<std::shared_ptr<Payload>> made;
  for (int i = 0; i < 100; ++i) made.push_back(make_recycled<Payload>());
  std::thread other([&] {
    made.clear();  // freed here: into this thread's list
    std::shared_ptr<Payload> p = make_recycled<Payload>();
    p->value[0] = 1;
  });  // at exit the thread's lists go back to malloc
  other.join();
  std::shared_ptr<Payload> q = make_recycled<Payload>();
  EXPECT_EQ(q->value[0], 0);
}

}  // namespace
}  // namespace lt
