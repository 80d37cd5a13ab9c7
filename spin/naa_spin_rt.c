/* What a freestanding handler image may still call (docs/spin.md "Images"): clang turns loops and
 * struct copies into memcpy/memset/memmove calls even with -ffreestanding. Weak, so a handler can
 * bring its own. Linked into every image by naa_add_handler(). */
#include <stddef.h>
#include <stdint.h>

__attribute__((weak)) void* memcpy(void* d, const void* s, size_t n) {
  uint8_t* p = (uint8_t*)d;
  const uint8_t* q = (const uint8_t*)s;
  while (n--)
    *p++ = *q++;
  return d;
}

__attribute__((weak)) void* memmove(void* d, const void* s, size_t n) {
  uint8_t* p = (uint8_t*)d;
  const uint8_t* q = (const uint8_t*)s;
  if (p < q) {
    while (n--)
      *p++ = *q++;
  } else {
    while (n--)
      p[n] = q[n];
  }
  return d;
}

__attribute__((weak)) void* memset(void* d, int c, size_t n) {
  uint8_t* p = (uint8_t*)d;
  while (n--)
    *p++ = (uint8_t)c;
  return d;
}
