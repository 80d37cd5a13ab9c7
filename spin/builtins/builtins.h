/* Shared by the built-in handlers in C (spin/builtins, docs/spin.md "Built-in handlers"). */
#ifndef NAA_SPIN_BUILTINS_H
#define NAA_SPIN_BUILTINS_H

#include <naa/spin.h>

/* The call's result region: the first region that is an OUTPUT, not internal and not a streamed
 * input (sim/src/handlers.cpp result_region, the C++ built-ins' rule). -1 if there is none. */
static inline int naa_builtin_result_region(void) {
  for (uint32_t i = 0; i < NAA_SPIN_ENV->num_regions; ++i) {
    const uint32_t f = NAA_SPIN_ENV->regions[i].flags;
    if ((f & NAA_SPIN_REGION_INTERNAL) != 0 || (f & NAA_SPIN_REGION_OUTPUT) == 0) continue;
    if ((f & NAA_SPIN_REGION_STREAM) != 0 && (f & NAA_SPIN_REGION_INPUT) != 0) continue;
    return (int)i;
  }
  return -1;
}

static inline uint32_t naa_builtin_load_le32(const uint8_t* p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#endif
