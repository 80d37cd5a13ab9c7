/* Drop-in for the NAAICE host library's naaice_ap2.h: programs written against the NAAICE
 * middleware API include "naaice_ap2.h" and compile unchanged with -I<include>/naa/host/compat
 * (pkg-config naaice). Like the reference's, it includes naaice.h (the low-level API: MAX_MRS,
 * the state enum, ...); the middleware itself is declared in naa/host/naa.h. */
#ifndef NAAICE_AP2_C_H
#define NAAICE_AP2_C_H
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "naa/host/naa.h"
#include "naaice.h"
#endif
