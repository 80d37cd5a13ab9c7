/* An image without NAA_SPIN_HANDLERS: naa-sim --handler must refuse it. */
#include <stdint.h>
int naa_spin_info(int x);
int naa_spin_info(int x) {
  return x + 1;
}
