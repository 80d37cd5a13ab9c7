/* Drop-in for the NAAICE host library's naaice_ap2.h: programs written against the NAAICE
 * middleware API include "naaice_ap2.h" and compile unchanged with -I<include>/naa/host/compat.
 * Everything is declared in naa/host/naa.h. */
#ifndef NAAICE_AP2_C_H
#define NAAICE_AP2_C_H
/* The reference header reaches these through naaice.h; its example programs rely on them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "naa/host/naa.h"
#endif
