# The installed package: find_package(naa) gives naa::protocol and naa::impair (and naa::sim,
# naa::host when built); pkg-config files naa-protocol.pc etc. describe the same libraries for
# non-CMake users.
include(CMakePackageConfigHelpers)
set(NAA_HAS_SIM FALSE)
set(NAA_HAS_HOST FALSE)
if(TARGET naa_sim)
  set(NAA_HAS_SIM TRUE)
endif()
if(TARGET naa_host)
  set(NAA_HAS_HOST TRUE)
endif()
set(NAA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/naa)
install(EXPORT naaTargets NAMESPACE naa:: DESTINATION ${NAA_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/naaConfig.cmake.in
  ${PROJECT_BINARY_DIR}/naaConfig.cmake INSTALL_DESTINATION ${NAA_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/naaConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/naaConfig.cmake ${PROJECT_BINARY_DIR}/naaConfigVersion.cmake
  DESTINATION ${NAA_CMAKE_DIR})

# naa_pkgconfig(<name> <library> <description> <requires> <extra libs> [<extra cflags>])
function(naa_pkgconfig name lib description requires extra_libs)
  set(PC_EXTRA_CFLAGS "${ARGN}")
  set(PC_NAME ${name})
  set(PC_LIB ${lib})
  set(PC_DESCRIPTION ${description})
  set(PC_REQUIRES ${requires})
  set(PC_EXTRA_LIBS ${extra_libs})
  # The .pc file finds its prefix relative to itself (lib/pkgconfig or lib/<triplet>/pkgconfig).
  file(RELATIVE_PATH PC_PREFIX_REL "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/naa.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/${name}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endfunction()

naa_pkgconfig(naa-protocol naa_protocol "naa wire formats: RoCEv2, ICRC, IB CM, MRSP" "" "")
naa_pkgconfig(naa-impair naa_impair "naa network impairment model (loss, dup, reorder, corrupt)"
              "" "")
if(NAA_HAS_SIM)
  # Debian's SystemC is built as C++17: C++20 users of systemc.h must say so (STYLE.md).
  # naa_sim runs the blocks' golden models from naa_rtl_models (rtl/).
  naa_pkgconfig(naa-sim naa_sim "naa simulated NAA (SystemC model)" "naa-protocol naa-impair systemc"
                "-lnaa_rtl_models -pthread" "-DSC_CPLUSPLUS=201703L -DSYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1")
endif()
if(NAA_HAS_HOST)
  # A static naa_host built with the Verbs backend needs rdma-core at link time too.
  get_target_property(host_libs naa_host LINK_LIBRARIES)
  set(host_extra "-pthread")
  if("rdmacm" IN_LIST host_libs)
    set(host_extra "-lrdmacm -libverbs -pthread")
  endif()
  naa_pkgconfig(naa-host naa_host "naa host library (UdpRoce and Verbs transports, Session, C API)"
                "naa-protocol naa-impair" "${host_extra}")
  # naaice.pc: for C programs written against the NAAICE library (cmake/naaice.pc.in).
  set(PC_EXTRA_LIBS "${host_extra}")
  file(RELATIVE_PATH PC_PREFIX_REL "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/naaice.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/naaice.pc
                 @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/naaice.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()
