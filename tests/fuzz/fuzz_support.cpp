// Linked into every harness: the memory limit of a fuzz run. Under ASan a failed operator
// new does not throw std::bad_alloc, it kills the process; so operator new is replaced
// here to throw above kMaxAllocation, as on a machine with little memory. A reader may
// try to allocate what a file declares (an out-of-memory error is allowed); only a crash,
// an escaped exception or a broken message is a finding. malloc (getline) returns null
// instead (allocator_may_return_null).
#include <cstdlib>
#include <new>

namespace {
constexpr std::size_t kMaxAllocation = std::size_t(256) << 20;

void* allocate(std::size_t size) {
  void* p = size <= kMaxAllocation ? std::malloc(size ? size : 1) : nullptr;
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace

extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }

// Every unaligned form, so that new and delete always pair through malloc and free.
void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return allocate(size);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void* operator new[](std::size_t size, const std::nothrow_t& tag) noexcept { return operator new(size, tag); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
