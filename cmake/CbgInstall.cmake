# SPDX-License-Identifier: Apache-2.0
# Install rules: libcbgpu.so (+ SONAME links), the C headers, cbgpu-bench, a CMake package
# (cbgpuConfig.cmake + version file, imported target cbgpu::cbgpu) and cbgpu.pc.
include(CMakePackageConfigHelpers)

set(CBG_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/cbgpu")

install(TARGETS cbgpu EXPORT cbgpuTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES capi/include/cbgpu/cbgpu.h capi/include/cbgpu/cbgpu_export.h
              "${CMAKE_CURRENT_BINARY_DIR}/generated/cbgpu/cbgpu_dlpack.h"
              "${CMAKE_CURRENT_BINARY_DIR}/generated/cbgpu/cbgpu_version.h"
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/cbgpu)
install(EXPORT cbgpuTargets NAMESPACE cbgpu:: DESTINATION ${CBG_INSTALL_CMAKEDIR})

configure_package_config_file(cmake/cbgpuConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/cbgpuConfig.cmake" INSTALL_DESTINATION ${CBG_INSTALL_CMAKEDIR})
# 0.x: minor versions may change the ABI, so only the same minor is compatible.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(_cbg_compat SameMinorVersion)
else()
  set(_cbg_compat SameMajorVersion)
endif()
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/cbgpuConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${_cbg_compat})
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/cbgpuConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/cbgpuConfigVersion.cmake"
        DESTINATION ${CBG_INSTALL_CMAKEDIR})

file(RELATIVE_PATH CBG_PC_RELATIVE_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" CBG_PC_RELATIVE_PREFIX "${CBG_PC_RELATIVE_PREFIX}")
configure_file(cmake/cbgpu.pc.in "${CMAKE_CURRENT_BINARY_DIR}/cbgpu.pc" @ONLY)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/cbgpu.pc" DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# A build-tree package, so examples can be built against a build without installing.
export(EXPORT cbgpuTargets NAMESPACE cbgpu:: FILE "${CMAKE_CURRENT_BINARY_DIR}/cbgpuTargets.cmake")
