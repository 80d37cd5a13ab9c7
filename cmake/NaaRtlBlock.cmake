# NaaRtlBlock: registers one RTL block folder rtl/<block>/ (docs/rtl/add-a-kernel.md).
#
#   naa_rtl_block(NAME <block>
#                 SOURCES <file.sv> ...          in rtl/<block>/, packages first (required)
#                 [WIDTHS <W> ...]               stream widths (bytes per beat) to Verilate; none =
#                                                one Verilation without a W parameter
#                 [LINT_WIDTHS <W> ...]          widths that are linted but not Verilated
#                 [REJECT_WIDTHS <W>:<msg> ...]  widths elaboration must reject with <msg>
#                 [VARIANTS <name>=<DEFINE> ...] the block again with +define+<DEFINE>
#                 [OPTIMIZE <-Os|-O2|-O3>]       C++ optimisation of the Verilated code (naa_verilate)
#                 [KERNEL])                      a kernel (docs/rtl/kernel-shell.md): <block> has the
#                                                AXI4-Stream/ap_ctrl_hs kernel ports and a W
#                                                parameter; it is Verilated and linted inside the
#                                                kernel shell (rtl/kernel_shell), whose adapter is
#                                                KernelVerilated
#
# The folder holds, by convention (one name per role, so nothing else needs listing):
#   <block>.sv (+ <block>_pkg.sv)          the RTL; rtl/prim/*.sv are added to every block
#   <block>.vlt                            lint waivers, each with a reason (may be empty)
#   include/naa/rtl/<block>.hpp            port contract, model, lockstep pair (installed)
#   <block>_model.cpp                      the C++ cycle model: part of naa::rtl_models
#   include/naa/rtl/<block>_rtl.hpp        factory make_<block>_rtl() of the Verilated block
#   include/naa/rtl/verilated/<block>_adapter.hpp, <block>_rtl.cpp   the Verilator adapter
#   <block>_<variant>_rtl.cpp              the factory of each variant
# except a KERNEL, whose factories and their headers (make_<block>[_<variant>]_rtl) are generated
# from rtl/kernel_shell/kernel_rtl.{hpp,cpp}.in: every kernel has the same adapter.
#   README.md                              the block's page
#   <block>_sva.sv                         optional: a checker of the port contract (SVA) and its
#                                          `bind`; simulation and lint only, never synthesis
#
# and this function creates:
#   - naa_rtl_<block>_w<W>_v (or naa_rtl_<block>_v): one naa_verilate() per width, class
#     V<block>_w<W> (V<block>); a variant is V<block>_<variant>[_w<W>] in naa_rtl_<block>_<variant>*
#   - naa::rtl_<block> (and naa::rtl_<block>_<variant>): the adapter library over them, linked
#     into naa::rtl_blocks (every block; variants are linked by name where needed). Its sources
#     include the generated "<block>_verilations.hpp" (namespace naa::rtl::verilated::<block>_gen,
#     `using All = Verilations<...>`): the widths listed here, nowhere else.
#   - the block's model source and headers in naa::rtl_models;
#   - lines in <build>/rtl/lint_manifest.txt, read by rtl/common/lint.sh (CTest rtl_lint).
#   - one line `synth|<block>|<top module>|<W>|<sources>` in the same manifest, read by
#     scripts/synth.sh: the block itself (never a simulation wrapper) at W = 64, its
#     sources without variant defines (docs/rtl/synthesis.md).
#
# Needs (rtl/CMakeLists.txt): targets naa_rtl_models, naa_rtl_session and naa_rtl_blocks, and
# NAA_RTL_PRIM_SOURCES.

set(NAA_RTL_LINT_MANIFEST ${CMAKE_BINARY_DIR}/rtl/lint_manifest.txt CACHE INTERNAL
    "rtl/common/lint.sh reads it")
file(WRITE ${NAA_RTL_LINT_MANIFEST}
  "# label|top|W|define|waiver|sources (written by naa_rtl_block, read by rtl/common/lint.sh)\n")

# naa_kernel_shell_source(<out var> <kernel module> <parameter override> <default W>): writes the
# kernel shell (rtl/kernel_shell/naa_kernel_shell.sv.in) around <kernel module> into the build
# tree and returns its path. NAA_KERNEL_SHELL_SOURCES: what the shell needs besides it.
set(NAA_KERNEL_SHELL_DIR ${CMAKE_CURRENT_LIST_DIR}/../rtl/kernel_shell CACHE INTERNAL "")
set(NAA_KERNEL_SHELL_SOURCES ${NAA_KERNEL_SHELL_DIR}/naa_ap_ctrl_assert.sv CACHE INTERNAL "")
# The kernel port contract as SVA (docs/rtl/README.md "Assertions"): the checker every built-in
# kernel's bind file instantiates. Not part of the shell a plug-in gets.
set(NAA_KERNEL_SVA_SOURCE ${NAA_KERNEL_SHELL_DIR}/naa_kernel_sva.sv CACHE INTERNAL "")
function(naa_kernel_shell_source out kernel params width)
  set(NAA_KERNEL_TOP ${kernel})
  set(NAA_KERNEL_PARAMS "${params}")
  set(NAA_KERNEL_WIDTH ${width})
  set(file ${CMAKE_CURRENT_BINARY_DIR}/${kernel}_shell/naa_kernel_shell.sv)
  configure_file(${NAA_KERNEL_SHELL_DIR}/naa_kernel_shell.sv.in ${file} @ONLY)
  set(${out} ${file} PARENT_SCOPE)
endfunction()

# _naa_rtl_synth_line(<block> <top> <W or ""> <sources>): the block's line for scripts/synth.sh.
# Synthesis is at W = 64 (issue 24 item 4), the width the timing goal is stated for.
set(NAA_RTL_SYNTH_WIDTH 64)
function(_naa_rtl_synth_line block top w sources)
  list(JOIN sources " " srcs)
  file(APPEND ${NAA_RTL_LINT_MANIFEST} "synth|${block}|${top}|${w}|${srcs}\n")
endfunction()

# _naa_rtl_lint_line(<label> <top> <W or ""> <define or ""> <waiver> <sources> [REJECT <msg>])
function(_naa_rtl_lint_line label top w define waiver sources)
  list(JOIN sources " " srcs)
  set(kind lint)
  if(ARGN)
    list(GET ARGN 0 kind)
    list(GET ARGN 1 msg)
    set(kind "reject:${msg}")
  endif()
  file(APPEND ${NAA_RTL_LINT_MANIFEST} "${kind}|${label}|${top}|${w}|${define}|${waiver}|${srcs}\n")
endfunction()

# _naa_rtl_verilations(<lib> <block> <prefix> <widths> <define>): Verilates <block> at every width
# into <lib>_w<W>_v, writes <lib>'s generated header and returns the targets in <lib>_VERILATED.
function(_naa_rtl_verilations lib block prefix widths define sources waiver optimize top)
  set(verilated "")
  set(includes "")
  set(entries "")
  set(defines "")
  if(define)
    # A seeded-bug variant: its runs must not count as coverage of the block (docs/rtl/coverage.md).
    set(defines DEFINES ${define} NO_COVERAGE)
  endif()
  if(widths)
    foreach(w IN LISTS widths)
      naa_verilate(${lib}_w${w}_v TOP_MODULE ${top} PREFIX ${prefix}_w${w} OPTIMIZE ${optimize}
        WAIVERS ${waiver} PARAMETERS W=${w} ${defines} SOURCES ${sources})
      list(APPEND verilated ${lib}_w${w}_v)
      string(APPEND includes "#include \"${prefix}_w${w}.h\"\n")
      list(APPEND entries "Verilation<${prefix}_w${w}, ${w}>")
    endforeach()
  else()
    naa_verilate(${lib}_v TOP_MODULE ${top} PREFIX ${prefix} OPTIMIZE ${optimize}
      WAIVERS ${waiver} ${defines} SOURCES ${sources})
    list(APPEND verilated ${lib}_v)
    string(APPEND includes "#include \"${prefix}.h\"\n")
    list(APPEND entries "Verilation<${prefix}, 0>")
  endif()
  list(JOIN entries ",\n                        " entries)
  string(REGEX REPLACE "^naa_rtl_" "" gen ${lib})
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${lib}.gen/${gen}_verilations.hpp
    "// Generated by naa_rtl_block() (cmake/NaaRtlBlock.cmake): the Verilations of ${gen}.\n"
    "#pragma once\n\n${includes}#include \"naa/rtl/verilated/verilations.hpp\"\n\n"
    "namespace naa::rtl::verilated::${gen}_gen {\n"
    "using All = Verilations<${entries}>;\n}  // namespace naa::rtl::verilated::${gen}_gen\n")
  set(${lib}_VERILATED ${verilated} PARENT_SCOPE)
endfunction()

# _naa_rtl_adapter(<lib> <source> <block dir> <verilated...>): the adapter library <lib>
# (alias naa::<lib without naa_>) over the given Verilated targets. Project code (warnings as
# errors in the dev preset); the Verilated code is not. Build-tree only: not installed.
function(_naa_rtl_adapter lib source dir)
  string(REGEX REPLACE "^naa_" "" alias ${lib})
  add_library(${lib} STATIC ${source})
  add_library(naa::${alias} ALIAS ${lib})
  target_include_directories(${lib} PUBLIC $<BUILD_INTERFACE:${dir}/include>
                             PRIVATE ${CMAKE_CURRENT_BINARY_DIR}/${lib}.gen)
  target_compile_features(${lib} PUBLIC cxx_std_20)
  target_link_libraries(${lib} PUBLIC naa::rtl_models naa::rtl_session PRIVATE ${ARGN})
  naa_project_target(${lib})
endfunction()

# _naa_kernel_factory(<lib> <block> <factory> <what>): a kernel's factory make_<factory>_rtl() and
# <factory>_rtl_widths() for the adapter library <lib>, generated (every kernel's is the same
# code over KernelVerilated): returns the source in <lib>_FACTORY_SOURCE and the folder of its
# header naa/rtl/<factory>_rtl.hpp in <lib>_FACTORY_INCLUDE.
function(_naa_kernel_factory lib block factory what)
  set(NAA_KERNEL_BLOCK ${block})
  set(NAA_KERNEL_FACTORY ${factory})
  set(NAA_KERNEL_WHAT "${what}")
  string(REGEX REPLACE "^naa_rtl_" "" NAA_KERNEL_GEN ${lib})
  string(REGEX REPLACE "^naa_" "" NAA_KERNEL_ALIAS ${lib})
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${lib}.gen)
  configure_file(${NAA_KERNEL_SHELL_DIR}/kernel_rtl.hpp.in
                 ${gen}/include/naa/rtl/${factory}_rtl.hpp @ONLY)
  configure_file(${NAA_KERNEL_SHELL_DIR}/kernel_rtl.cpp.in ${gen}/${factory}_rtl.cpp @ONLY)
  set(${lib}_FACTORY_SOURCE ${gen}/${factory}_rtl.cpp PARENT_SCOPE)
  set(${lib}_FACTORY_INCLUDE ${gen}/include PARENT_SCOPE)
endfunction()

function(naa_rtl_block)
  cmake_parse_arguments(PARSE_ARGV 0 ARG "KERNEL" "NAME;OPTIMIZE"
    "SOURCES;WIDTHS;LINT_WIDTHS;REJECT_WIDTHS;VARIANTS")
  if(ARG_UNPARSED_ARGUMENTS OR NOT ARG_NAME OR NOT ARG_SOURCES)
    message(FATAL_ERROR "naa_rtl_block(${ARG_NAME}): NAME and SOURCES are required; "
                        "unknown: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  set(block ${ARG_NAME})
  if(NOT ARG_OPTIMIZE)
    set(ARG_OPTIMIZE -Os)
  endif()
  set(dir ${CMAKE_CURRENT_SOURCE_DIR}/${block})
  set(waiver ${dir}/${block}.vlt)
  set(sources ${NAA_RTL_PRIM_SOURCES})
  foreach(s IN LISTS ARG_SOURCES)
    list(APPEND sources ${dir}/${s})
  endforeach()
  # Synthesis (scripts/synth.sh): the block's own module and sources (with rtl/prim, which only
  # an RTL build lists), at NAA_RTL_SYNTH_WIDTH if the block has a width parameter.
  if(NAA_BUILD_RTL)
    set(synth_w "")
    if(ARG_WIDTHS OR ARG_LINT_WIDTHS)
      set(synth_w ${NAA_RTL_SYNTH_WIDTH})
    endif()
    _naa_rtl_synth_line(${block} ${block} "${synth_w}" "${sources}")
  endif()
  # A kernel is Verilated (and linted) inside the kernel shell, generated for it.
  set(top ${block})
  if(ARG_KERNEL)
    naa_kernel_shell_source(shell ${block} "#(.W(W))" 64)
    list(APPEND sources ${NAA_KERNEL_SHELL_SOURCES} ${shell})
    set(top naa_kernel_shell)
  endif()
  # Simulation-only assertions (docs/rtl/README.md "Assertions"): <block>_sva.sv, if present, binds
  # a checker of the block's port contract to it (kernels: with naa_kernel_sva.sv). Verilated
  # (--assert) and linted with the block, never in its synth| line above.
  if(EXISTS ${dir}/${block}_sva.sv)
    if(ARG_KERNEL)
      list(APPEND sources ${NAA_KERNEL_SVA_SOURCE})
    endif()
    list(APPEND sources ${dir}/${block}_sva.sv)
  endif()
  # A kernel's factory is generated (_naa_kernel_factory); another block has its adapter.
  set(adapter ${dir}/${block}_rtl.cpp)
  if(ARG_KERNEL)
    set(adapter "")
  endif()
  foreach(f IN ITEMS ${waiver} ${dir}/${block}_model.cpp ${adapter}
                     ${dir}/include/naa/rtl/${block}.hpp ${dir}/README.md)
    if(NOT EXISTS ${f})
      message(FATAL_ERROR "naa_rtl_block(${block}): missing ${f} (see cmake/NaaRtlBlock.cmake)")
    endif()
  endforeach()

  # The C++ cycle model: part of naa::rtl_models, its header installed with the others.
  target_sources(naa_rtl_models PRIVATE ${dir}/${block}_model.cpp)
  target_include_directories(naa_rtl_models PUBLIC $<BUILD_INTERFACE:${dir}/include>)
  install(FILES ${dir}/include/naa/rtl/${block}.hpp DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/naa/rtl)

  if(NOT NAA_BUILD_RTL)
    return()  # the model only (see rtl/CMakeLists.txt)
  endif()

  # Which widths are Verilated, for tests that must know independently of naa-sim's own mode
  # logic which blocks have RTL at a run's width (testbench/support/naa_sim.cpp, lockstep check).
  string(REPLACE ";" "," widths_csv "${ARG_WIDTHS}")
  set_property(GLOBAL APPEND PROPERTY NAA_RTL_BLOCK_WIDTHS "${block}:${widths_csv}")

  # The Verilated block and its adapter, then each variant.
  _naa_rtl_verilations(naa_rtl_${block} ${block} V${block} "${ARG_WIDTHS}" "" "${sources}"
                       ${waiver} ${ARG_OPTIMIZE} ${top})
  if(ARG_KERNEL)
    _naa_kernel_factory(naa_rtl_${block} ${block} ${block}
                        "the Verilated ${block} (rtl/${block}/${block}.sv)")
    set(adapter ${naa_rtl_${block}_FACTORY_SOURCE})
  endif()
  _naa_rtl_adapter(naa_rtl_${block} ${adapter} ${dir} ${naa_rtl_${block}_VERILATED})
  if(ARG_KERNEL)
    target_include_directories(naa_rtl_${block} PUBLIC
                               $<BUILD_INTERFACE:${naa_rtl_${block}_FACTORY_INCLUDE}>)
  endif()
  target_link_libraries(naa_rtl_blocks INTERFACE naa_rtl_${block})
  set(variants "")
  foreach(v IN LISTS ARG_VARIANTS)
    if(NOT v MATCHES "^([a-z0-9_]+)=([A-Za-z_][A-Za-z0-9_]*)$")
      message(FATAL_ERROR "naa_rtl_block(${block}): VARIANTS '${v}' is not <name>=<DEFINE>")
    endif()
    set(name ${CMAKE_MATCH_1})
    set(define ${CMAKE_MATCH_2})
    list(APPEND variants "${define}")
    set(lib naa_rtl_${block}_${name})
    _naa_rtl_verilations(${lib} ${block} V${block}_${name} "${ARG_WIDTHS}" ${define}
                         "${sources}" ${waiver} ${ARG_OPTIMIZE} ${top})
    set(adapter ${dir}/${block}_${name}_rtl.cpp)
    if(ARG_KERNEL)
      _naa_kernel_factory(${lib} ${block} ${block}_${name}
        "the ${name} variant of ${block} (+define+${define}; rtl/${block}/${block}.sv says what it \
breaks, to prove that the kernel testbench and lockstep catch it)")
      set(adapter ${${lib}_FACTORY_SOURCE})
    endif()
    _naa_rtl_adapter(${lib} ${adapter} ${dir} ${${lib}_VERILATED})
    if(ARG_KERNEL)
      target_include_directories(${lib} PUBLIC $<BUILD_INTERFACE:${${lib}_FACTORY_INCLUDE}>)
    endif()
  endforeach()

  # Lint (rtl/common/lint.sh): every width, Verilated or not, and every variant.
  set(lint_widths ${ARG_LINT_WIDTHS} ${ARG_WIDTHS})
  list(SORT lint_widths COMPARE NATURAL)
  foreach(define IN ITEMS "" ${variants})
    set(suffix "")
    if(define)
      set(suffix " ${define}")
    endif()
    if(lint_widths)
      foreach(w IN LISTS lint_widths)
        _naa_rtl_lint_line("${block} W=${w}${suffix}" ${top} "${w}" "${define}" ${waiver}
                           "${sources}")
      endforeach()
    else()
      _naa_rtl_lint_line("${block}${suffix}" ${top} "" "${define}" ${waiver} "${sources}")
    endif()
  endforeach()
  foreach(r IN LISTS ARG_REJECT_WIDTHS)
    if(NOT r MATCHES "^([0-9]+):(.+)$")
      message(FATAL_ERROR "naa_rtl_block(${block}): REJECT_WIDTHS '${r}' is not <W>:<message>")
    endif()
    _naa_rtl_lint_line("${block} W=${CMAKE_MATCH_1}" ${top} "${CMAKE_MATCH_1}" "" ${waiver}
                       "${sources}" REJECT "${CMAKE_MATCH_2}")
  endforeach()
endfunction()
