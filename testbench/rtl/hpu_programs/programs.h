/* The programs of programs.c, for the host-side oracle. */
#pragma once
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
uint32_t hpu_prog_arith(uint32_t* buf, uint32_t n, uint32_t seed);
uint32_t hpu_prog_crc32(uint32_t* buf, uint32_t n, uint32_t seed);
uint32_t hpu_prog_sort(uint32_t* buf, uint32_t n, uint32_t seed);
uint32_t hpu_prog_bytes(uint32_t* buf, uint32_t n, uint32_t seed);
uint32_t hpu_prog_recursion(uint32_t* buf, uint32_t n, uint32_t seed);
uint32_t hpu_prog_mul64(uint32_t* buf, uint32_t n, uint32_t seed);
#ifdef __cplusplus
}
#endif
