# NaaHandler: naa_add_handler(), a sPIN handler image for the NAA's HPU cores from C sources
# (docs/spin.md). find_package(naa) includes it; the naa project itself too (spin/CMakeLists.txt).
#
#   naa_add_handler(<target> SOURCES <file.c>... [COMPILE_OPTIONS <flag>...])
#
# builds <build dir>/<target>.elf with Debian's clang-14 and lld for riscv32 (rv32im, ilp32,
# freestanding, -O2), linked by the kit's naa_spin.ld at 0x10000 with naa_spin_rt.c (memcpy,
# memset, memmove). The target's property NAA_HANDLER_IMAGE is the image's path: give it to
# `naa-sim --handler`. Needs NAA_SPIN_KIT_DIR (naa_spin.ld, naa_spin_rt.c) and
# NAA_SPIN_INCLUDE_DIR (naa/spin.h), which naaConfig.cmake sets.

function(naa_add_handler target)
  cmake_parse_arguments(ARG "" "" "SOURCES;COMPILE_OPTIONS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_SOURCES)
    message(FATAL_ERROR "naa_add_handler(${target} SOURCES <file.c>... [COMPILE_OPTIONS ...]): "
                        "bad arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  find_program(NAA_HANDLER_CC NAMES clang-14 clang)
  find_program(NAA_HANDLER_LLD NAMES ld.lld-14 ld.lld)
  if(NOT NAA_HANDLER_CC OR NOT NAA_HANDLER_LLD)
    message(FATAL_ERROR "naa_add_handler(${target}): needs clang and lld for riscv32 "
                        "(apt-get install clang-14 lld-14)")
  endif()
  # One object per source, each with the headers it includes as its depfile (an edited header
  # rebuilds the image), then one link.
  set(flags --target=riscv32-unknown-elf -march=rv32im -mabi=ilp32 -O2 -ffreestanding -nostdlib -mno-relax
            -Wall -Wextra -I${NAA_SPIN_INCLUDE_DIR} ${ARG_COMPILE_OPTIONS})
  set(objdir ${CMAKE_CURRENT_BINARY_DIR}/${target}.dir)
  set(objects "")
  set(n 0)
  foreach(s IN LISTS ARG_SOURCES ITEMS ${NAA_SPIN_KIT_DIR}/naa_spin_rt.c)
    get_filename_component(abs ${s} ABSOLUTE)
    get_filename_component(name ${s} NAME_WE)
    set(obj ${objdir}/${n}_${name}.o)
    math(EXPR n "${n} + 1")
    add_custom_command(OUTPUT ${obj}
      COMMAND ${CMAKE_COMMAND} -E make_directory ${objdir}
      COMMAND ${NAA_HANDLER_CC} ${flags} -MD -MF ${obj}.d -c ${abs} -o ${obj}
      DEPENDS ${abs} DEPFILE ${obj}.d
      COMMENT "naa_add_handler: ${target}: ${name}.c" VERBATIM)
    list(APPEND objects ${obj})
  endforeach()
  set(image ${CMAKE_CURRENT_BINARY_DIR}/${target}.elf)
  add_custom_command(OUTPUT ${image}
    COMMAND ${NAA_HANDLER_CC} --target=riscv32-unknown-elf -march=rv32im -mabi=ilp32 -nostdlib
            -fuse-ld=lld -mno-relax -Wl,-T,${NAA_SPIN_KIT_DIR}/naa_spin.ld -Wl,--gc-sections
            ${objects} -o ${image}
    DEPENDS ${objects} ${NAA_SPIN_KIT_DIR}/naa_spin.ld
    COMMENT "naa_add_handler: ${target}.elf (riscv32 rv32im)" VERBATIM)
  add_custom_target(${target} ALL DEPENDS ${image})
  set_target_properties(${target} PROPERTIES NAA_HANDLER_IMAGE ${image})
endfunction()
