// naa-sim's replacement of the global allocation functions: the same allocations, counted in
// naa::sim::heap_stats (exact live and peak heap bytes, as malloc_usable_size reports them).
// Not in sanitizer builds: their runtime replaces operator new itself.
#include <malloc.h>

#include <cstdlib>
#include <new>

#include "naa/sim/heap_stats.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define NAA_HEAP_ACCOUNTING 0
#endif
#endif
#if !defined(NAA_HEAP_ACCOUNTING) && (defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__))
#define NAA_HEAP_ACCOUNTING 0
#endif
#ifndef NAA_HEAP_ACCOUNTING
#define NAA_HEAP_ACCOUNTING 1
#endif

#if NAA_HEAP_ACCOUNTING
namespace {

namespace hs = naa::sim::heap_stats;

void* counted(void* p) noexcept {
  if (p != nullptr) hs::on_alloc(::malloc_usable_size(p));
  return p;
}

void* allocate(std::size_t n, std::size_t align) noexcept {
  if (n == 0) n = 1;
  if (align <= alignof(std::max_align_t)) return counted(std::malloc(n));
  return counted(std::aligned_alloc(align, (n + align - 1) / align * align));
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
  for (;;) {
    if (void* p = allocate(n, align)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

void release(void* p) noexcept {
  if (p == nullptr) return;
  hs::on_free(::malloc_usable_size(p));
  std::free(p);
}

// Registers at static initialisation; allocations before it are counted all the same.
const bool kInstalled = (hs::installed(), true);

}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n, 0);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, 0);
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  release(p);
}
void operator delete[](void* p) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  release(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  release(p);
}
#endif  // NAA_HEAP_ACCOUNTING
