# Per-target build settings for project code. Warnings and sanitizers are applied per target so
# that generated code (Verilator output) and third-party headers are never built with -Werror.

# naa_project_target(<target>): warnings (as errors when NAA_WARNINGS_AS_ERRORS) and sanitizers.
function(naa_project_target tgt)
  target_compile_options(${tgt} PRIVATE
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wsign-conversion -Wcast-align
    -Wimplicit-fallthrough
    # C++ only (a target may have C sources too: testbench/rtl's HPU programs)
    $<$<COMPILE_LANGUAGE:CXX>:-Wnon-virtual-dtor -Wold-style-cast -Woverloaded-virtual>
    # Not -Wnull-dereference: at -O2 GCC 12 reports it inside Boost.Asio headers after inlining
    # (scheduler.ipp), where system-header suppression does not apply.
    $<$<BOOL:${NAA_WARNINGS_AS_ERRORS}>:-Werror>)
  naa_sanitize(${tgt})
endfunction()

# naa_sanitize(<target>): sanitizers only (used for targets whose warnings we do not own).
# In a directory that sets NAA_SANITIZE_LINK_ONLY (sim/ and rtl/ under ThreadSanitizer: SystemC's
# coroutines, sim/CMakeLists.txt) targets are compiled without instrumentation; their programs
# still link the sanitizer runtime, which the instrumented libraries they link (protocol, impair,
# host) need.
function(naa_sanitize tgt)
  if(NAA_SANITIZE)
    if(NOT NAA_SANITIZE_LINK_ONLY)
      target_compile_options(${tgt} PRIVATE -fsanitize=${NAA_SANITIZE} -fno-omit-frame-pointer
                                            -fno-sanitize-recover=all)
    endif()
    target_link_options(${tgt} PRIVATE -fsanitize=${NAA_SANITIZE})
    if(NAA_SANITIZE MATCHES "thread" AND NOT NAA_SANITIZE_LINK_ONLY)
      # GCC warns (-Wtsan) that TSan does not model the atomic_thread_fence of Asio's
      # std_fenced_block around every handler call. No happens-before edge is lost: Asio hands
      # handlers between threads through its scheduler's and reactor's mutexes, which TSan sees.
      target_compile_options(${tgt} PRIVATE -Wno-tsan)
    endif()
  endif()
endfunction()

# naa_add_library(<name> ALIAS <ns::name> SOURCES ...): a project library with public headers in
# <dir>/include, installed and exported as part of the naa CMake package.
function(naa_add_library name)
  cmake_parse_arguments(ARG "" "ALIAS;EXPORT_NAME" "SOURCES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "naa_add_library: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  add_library(${name} STATIC ${ARG_SOURCES})
  add_library(${ARG_ALIAS} ALIAS ${name})
  set_target_properties(${name} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME} OUTPUT_NAME ${name})
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${name} PUBLIC cxx_std_20)
  naa_project_target(${name})
  install(TARGETS ${name} EXPORT naaTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endfunction()

# naa_add_program(<name> SOURCES ... LIBS ...): a program in <build>/bin, installed.
function(naa_add_program name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "naa_add_program: unknown arguments ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS})
  naa_project_target(${name})
  install(TARGETS ${name} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endfunction()
