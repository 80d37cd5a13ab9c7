# NaaVerilator: Verilator 5.006 (Debian 12) integration for rtl/ (docs/rtl/plug-in-your-rtl.md).
#
#   naa_verilate(<target>
#                TOP_MODULE <module>          the top module (required)
#                SOURCES <file.sv|.v> ...     packages first, then modules (required)
#                [PREFIX <class>]             C++ class name, default V<module>; must be unique
#                                             per target when one module is Verilated twice
#                [WAIVERS <file.vlt> ...]     lint waiver files (rtl/<block>/<block>.vlt)
#                [PARAMETERS <NAME=VALUE> ...]  top-level parameter overrides (-G)
#                [DEFINES <NAME[=VALUE]> ...]   preprocessor defines (+define+)
#                [INCLUDE_DIRS <dir> ...]       `include / module search directories
#                [OPTIMIZE <-Os|-O2|-O3>]       the C++ optimisation of the generated fast path
#                                               (default -Os; -O2 for a block clocked per beat in
#                                               naa-sim's hot path, docs/performance.md)
#                [VERILATOR_ARGS <arg> ...]     anything else for verilator, except the options
#                                               this function owns (see _naa_verilator_owned)
#                [NO_COVERAGE])                 left out of NAA_RTL_COVERAGE (a seeded-bug variant:
#                                               its runs must not count as covering the design)
#
# creates <target>, a static library holding the Verilated C++ of <module> (C++ mode, --cc),
# with FST tracing compiled in (a harness switches it on at run time: traceEverOn + a
# VerilatedFstC). Link it PRIVATE into an adapter library; its include directories (the generated
# headers, Verilator's headers) reach consumers as SYSTEM includes.
#
# Why a wrapper and not verilate() directly:
# - verilate() ignores what it does not know. Debian 5.006 accepts TRACE and TRACE_FST but not
#   TRACE_VCD, and `verilate(t SOURCES a.sv TRACE_VCD)` quietly Verilates without tracing
#   (TRACE_VCD becomes a "source"). naa_verilate() rejects unknown keywords, keywords that ended
#   up inside a value list, and values of the wrong shape, with a message.
# - The Verilator runtime (verilated.cpp, verilated_threads.cpp, verilated_fst_c.cpp) is compiled
#   once into naa_verilator_runtime instead of once per Verilated block, which saves minutes on a
#   small machine and keeps one copy of its global state in every program.
# - Project warnings (naa_project_target, -Werror in the dev preset) never reach generated code:
#   <target> gets sanitizers only. Adapters get the project warnings and see Verilator's headers as
#   system headers.
# - Verilator 5.006 reports an elaboration-time $fatal/$error (our parameter checks) as a warning
#   (USERFATAL/USERERROR) that -Wno-fatal would turn into a silent pass; -Wno-fatal is refused.
#
# Options always passed: --cc --trace-fst --assert (SystemVerilog assertions are checked: the
# stream port rules of rtl/prim/naa_stream_assert.sv; a failed one stops the simulation, see
# RtlSessionOptions::fatal_assertions) --x-assign fast --x-initial unique (flops without reset
# start at values the harness chooses at run time, so a block that relies on an unreset flop
# diverges from its model). Generated code is compiled -Os (Verilator's own default for the fast
# path): small and quick to build, whatever the build type; its fast path also with -mpopcnt when
# the build machine has POPCNT (NAA_RTL_POPCNT, below) and with -fno-semantic-interposition, and
# as one translation unit (naa_verilate(), below).
#
# Coverage (docs/rtl/coverage.md): when the variable NAA_RTL_COVERAGE is true (the option of the
# same name, preset `coverage`; naa_add_kernel(... COVERAGE) for a plug-in), every Verilation
# without NO_COVERAGE also gets --coverage (line, toggle and user/cover points) and the runtime
# gets verilated_cov.cpp with VM_COVERAGE=1; RtlSession writes the counts (rtl_session.cpp).
# Off, nothing changes: no coverage code is generated or compiled.

find_package(verilator REQUIRED HINTS $ENV{VERILATOR_ROOT} /usr/share/verilator)

# The POPCNT instruction for the Verilated code's fast path when the build machine has it
# (x86-64 CPUs since 2008; issue 31): the CRC matrices of crc32 and icrc_check are rows of XOR
# reductions, which Verilator writes as __builtin_parity*, a popcnt and an and with it against
# ~8 instructions without. Measured with callgrind (naa-cosim --fn crc32 --in gen:4M --blocks=rtl):
# crc32 2,350 -> 2,118 and icrc_check 2,894 -> 2,558 instructions per cycle, rx_parser unchanged.
# Off on another architecture or a CPU without it (the check runs a program on the build
# machine), and with -DNAA_RTL_POPCNT=OFF for binaries that must run on an older x86-64 CPU.
option(NAA_RTL_POPCNT "Compile Verilated code with -mpopcnt when the build machine has POPCNT" ON)
set(_naa_verilated_isa_flags "")
if(NAA_RTL_POPCNT)
  include(CheckCXXSourceRuns)
  set(CMAKE_REQUIRED_FLAGS -mpopcnt)
  check_cxx_source_runs("int main() { __builtin_cpu_init(); return __builtin_cpu_supports(\"popcnt\") ? 0 : 1; }"
                        NAA_RTL_HAVE_POPCNT)
  unset(CMAKE_REQUIRED_FLAGS)
  if(NAA_RTL_HAVE_POPCNT)
    set(_naa_verilated_isa_flags -mpopcnt)
  endif()
endif()
# -fno-semantic-interposition: the project compiles with -fPIC (CMAKE_POSITION_INDEPENDENT_CODE),
# under which gcc calls every global function of the generated code through its symbol, never
# inlined, in case another library replaced it; nothing does (a model links into one program or
# plug-in).
# With it gcc inlines a model's region and trigger functions within a file (issue 31, callgrind
# of naa-cosim --fn crc32 --in gen:4M --blocks=rtl: crc32 1,889 -> 1,867, icrc_check 2,355 ->
# 2,338, rx_parser 1,754 -> 1,725 instructions per cycle). Only a code generation choice.
set(_naa_verilated_fast_flags ${_naa_verilated_isa_flags} -fno-semantic-interposition)

# Keywords of verilate() and of naa_verilate(), and known misspellings: none of them may appear as
# a value (that is how a typo or an unsupported option would otherwise be swallowed).
set(_NAA_VERILATE_KEYWORDS
  TOP_MODULE PREFIX OPTIMIZE SOURCES WAIVERS PARAMETERS DEFINES INCLUDE_DIRS VERILATOR_ARGS
  TRACE TRACE_VCD TRACE_FST TRACE_STRUCTS TRACE_THREADS SYSTEMC COVERAGE THREADS DIRECTORY
  OPT_SLOW OPT_FAST OPT_GLOBAL NO_COVERAGE)

# Verilator options this function owns (given through its keywords or always set).
set(_naa_verilator_owned
  "^--cc$" "^--sc$" "^--lint-only$" "^--trace" "^--prefix" "^--Mdir" "^--top" "^--make"
  "^-Wno-fatal$" "^-G" "^\\+define\\+" "^-D" "^--x-assign" "^--x-initial" "^--build$" "^--exe$"
  "^--timing$" "^--assert$" "^--no-assert$" "^--coverage")

function(_naa_verilator_runtime global_sources ldlibs)
  # Under coverage the runtime always has verilated_cov.cpp (a NO_COVERAGE block's list lacks it).
  set(cov_src "${VERILATOR_ROOT}/include/verilated_cov.cpp")
  list(REMOVE_ITEM global_sources "${cov_src}")
  if(TARGET naa_verilator_runtime)
    get_target_property(have naa_verilator_runtime NAA_VERILATOR_GLOBAL_SOURCES)
    if(NOT "${have}" STREQUAL "${global_sources}")
      message(FATAL_ERROR "naa_verilate: a block needs Verilator runtime sources "
                          "'${global_sources}' but naa_verilator_runtime has '${have}'")
    endif()
    get_target_property(cov naa_verilator_runtime NAA_RTL_COVERAGE)
    if(NAA_RTL_COVERAGE AND NOT cov)
      message(FATAL_ERROR "naa_verilate: coverage is on for this block, but the Verilator "
                          "runtime was made without it: set NAA_RTL_COVERAGE for every block")
    endif()
    return()
  endif()
  set(vm_coverage 0)
  set(cov "")
  if(NAA_RTL_COVERAGE)
    set(vm_coverage 1)
    set(cov "${cov_src}")
  endif()
  add_library(naa_verilator_runtime STATIC ${global_sources} ${cov})
  set_target_properties(naa_verilator_runtime PROPERTIES
    SYSTEM ON NAA_VERILATOR_GLOBAL_SOURCES "${global_sources}" NAA_RTL_COVERAGE ${vm_coverage})
  target_include_directories(naa_verilator_runtime PUBLIC
    ${VERILATOR_ROOT}/include ${VERILATOR_ROOT}/include/vltstd)
  target_compile_definitions(naa_verilator_runtime PRIVATE
    VM_COVERAGE=${vm_coverage} VM_SC=0 VM_TRACE=1 VM_TRACE_VCD=0 VM_TRACE_FST=1)
  target_link_libraries(naa_verilator_runtime PUBLIC ${ldlibs} ${VERILATOR_MT_CFLAGS})
  naa_sanitize(naa_verilator_runtime)
endfunction()

function(naa_verilate target)
  cmake_parse_arguments(PARSE_ARGV 1 ARG "NO_COVERAGE"
    "TOP_MODULE;PREFIX;OPTIMIZE"
    "SOURCES;WAIVERS;PARAMETERS;DEFINES;INCLUDE_DIRS;VERILATOR_ARGS")

  set(errors "")
  if(ARG_UNPARSED_ARGUMENTS)
    list(APPEND errors "unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(ARG_KEYWORDS_MISSING_VALUES)
    list(APPEND errors "keywords without a value: ${ARG_KEYWORDS_MISSING_VALUES}")
  endif()
  if(NOT ARG_TOP_MODULE)
    list(APPEND errors "TOP_MODULE is required")
  endif()
  if(NOT ARG_SOURCES)
    list(APPEND errors "SOURCES is required")
  endif()
  foreach(kw IN ITEMS SOURCES WAIVERS PARAMETERS DEFINES INCLUDE_DIRS VERILATOR_ARGS)
    foreach(v IN LISTS ARG_${kw})
      if(v IN_LIST _NAA_VERILATE_KEYWORDS)
        list(APPEND errors "'${v}' is not an option of naa_verilate() (it ended up in ${kw}); "
                           "tracing is always FST, switched on at run time")
      endif()
    endforeach()
  endforeach()
  foreach(src IN LISTS ARG_SOURCES)
    get_filename_component(abs "${src}" ABSOLUTE)
    if(NOT src MATCHES "\\.(sv|v|svh|vh)$" OR NOT EXISTS "${abs}")
      list(APPEND errors "SOURCES: '${src}' is not an existing .sv/.v file")
    endif()
  endforeach()
  foreach(vlt IN LISTS ARG_WAIVERS)
    get_filename_component(abs "${vlt}" ABSOLUTE)
    if(NOT vlt MATCHES "\\.vlt$" OR NOT EXISTS "${abs}")
      list(APPEND errors "WAIVERS: '${vlt}' is not an existing .vlt file")
    endif()
  endforeach()
  foreach(p IN LISTS ARG_PARAMETERS)
    if(NOT p MATCHES "^[A-Za-z_][A-Za-z0-9_]*=.+$")
      list(APPEND errors "PARAMETERS: '${p}' is not NAME=VALUE")
    endif()
  endforeach()
  foreach(d IN LISTS ARG_DEFINES)
    if(NOT d MATCHES "^[A-Za-z_][A-Za-z0-9_]*(=.*)?$")
      list(APPEND errors "DEFINES: '${d}' is not NAME or NAME=VALUE")
    endif()
  endforeach()
  foreach(a IN LISTS ARG_VERILATOR_ARGS)
    foreach(re IN LISTS _naa_verilator_owned)
      if(a MATCHES "${re}")
        list(APPEND errors "VERILATOR_ARGS: '${a}' is set by naa_verilate() itself or refused")
      endif()
    endforeach()
  endforeach()
  if(NOT ARG_OPTIMIZE)
    set(ARG_OPTIMIZE -Os)
  elseif(NOT ARG_OPTIMIZE MATCHES "^-O(s|2|3)$")
    list(APPEND errors "OPTIMIZE: '${ARG_OPTIMIZE}' is not -Os, -O2 or -O3")
  endif()
  if(TARGET ${target})
    list(APPEND errors "target '${target}' already exists (naa_verilate creates it)")
  endif()
  if(errors)
    list(JOIN errors "\n  " msg)
    message(FATAL_ERROR "naa_verilate(${target}):\n  ${msg}")
  endif()

  if(NOT ARG_PREFIX)
    set(ARG_PREFIX V${ARG_TOP_MODULE})
  endif()
  set(args --assert --x-assign fast --x-initial unique)
  foreach(p IN LISTS ARG_PARAMETERS)
    list(APPEND args -G${p})
  endforeach()
  foreach(d IN LISTS ARG_DEFINES)
    list(APPEND args +define+${d})
  endforeach()
  list(APPEND args ${ARG_VERILATOR_ARGS})
  set(coverage "")
  if(NAA_RTL_COVERAGE AND NOT ARG_NO_COVERAGE)
    set(coverage COVERAGE)  # verilate(): --coverage, and VM_COVERAGE=1 on the generated code
  endif()

  set(vdir ${CMAKE_CURRENT_BINARY_DIR}/${target}.verilator)
  add_library(${target} STATIC)
  # Generated code: sanitizers yes, project warnings never. Consumers see its headers as system.
  set_target_properties(${target} PROPERTIES SYSTEM ON)
  naa_sanitize(${target})
  verilate(${target}
    TOP_MODULE ${ARG_TOP_MODULE}
    PREFIX ${ARG_PREFIX}
    DIRECTORY ${vdir}
    TRACE_FST ${coverage}
    INCLUDE_DIRS ${ARG_INCLUDE_DIRS}
    OPT_FAST ${ARG_OPTIMIZE} ${_naa_verilated_fast_flags}
    SOURCES ${ARG_WAIVERS} ${ARG_SOURCES}
    VERILATOR_ARGS ${args})

  # Move the Verilator runtime out of the block and into the shared runtime library.
  include(${vdir}/${ARG_PREFIX}_copy.cmake)
  # The fast path (the model class, its eval and region functions) as one translation unit, as
  # Verilator's own Makefile flow compiles it (V<prefix>__ALL.cpp): Verilator splits it over
  # files by dependency set, and eval() then calls its trigger and region functions in other
  # files, never inlined (issue 31, callgrind of naa-cosim --fn crc32 --in gen:4M --blocks=rtl:
  # rx_parser 1,725 -> 1,651 instructions per cycle, docs/rtl/simulation-cost.md). The files stay
  # sources of the target (Verilator makes them) but are compiled through the one that includes
  # them, with the fast path's flags; the list follows V<prefix>.cmake, which CMake re-reads when
  # Verilator's file list changes.
  set(fast_sources ${${ARG_PREFIX}_CLASSES_FAST})
  set(fast_unity ${vdir}/${ARG_PREFIX}__fast_unity.cpp)
  set(text "// Generated by naa_verilate() (cmake/NaaVerilator.cmake): ${ARG_PREFIX}'s fast path.\n")
  foreach(f IN LISTS fast_sources)
    string(APPEND text "#include \"${f}\"\n")
  endforeach()
  file(CONFIGURE OUTPUT ${fast_unity} CONTENT "${text}" @ONLY)
  set_source_files_properties(${fast_sources} PROPERTIES HEADER_FILE_ONLY ON)
  target_sources(${target} PRIVATE ${fast_unity})
  list(JOIN _naa_verilated_fast_flags " " fast_flags)
  set_source_files_properties(${fast_unity} PROPERTIES COMPILE_FLAGS "${ARG_OPTIMIZE} ${fast_flags}")
  set(global ${${ARG_PREFIX}_GLOBAL})
  _naa_verilator_runtime("${global}" "${${ARG_PREFIX}_USER_LDLIBS}")
  get_target_property(srcs ${target} SOURCES)
  list(REMOVE_ITEM srcs ${global})
  set_property(TARGET ${target} PROPERTY SOURCES ${srcs})
  target_link_libraries(${target} PUBLIC naa_verilator_runtime)
endfunction()
