# SPDX-License-Identifier: Apache-2.0
# The Python wheel's copy of the library (scikit-build-core, pyproject.toml): cbgpu/lib/libcbgpu.so
# inside the package, in the install component "python" (the only one a wheel takes). One plain file:
# wheels cannot hold the SONAME links, and the package loads the library by its path.
if(CBGPU_PREBUILT_LIBRARY_PATH)
  file(REAL_PATH "${CBGPU_PREBUILT_LIBRARY_PATH}" _cbg_prebuilt)
  if(NOT EXISTS "${_cbg_prebuilt}")
    message(FATAL_ERROR "CBGPU_PREBUILT_LIBRARY: ${CBGPU_PREBUILT_LIBRARY_PATH} does not exist; build the "
                        "library first (scripts/build.sh ci) or leave the option out to build it here")
  endif()
  message(STATUS "cbgpu ${PROJECT_VERSION}: packaging the prebuilt ${_cbg_prebuilt}")
  install(FILES "${_cbg_prebuilt}" DESTINATION cbgpu/lib RENAME libcbgpu.so COMPONENT python)
else()
  install(FILES "$<TARGET_FILE:cbgpu>" DESTINATION cbgpu/lib RENAME libcbgpu.so COMPONENT python)
endif()
