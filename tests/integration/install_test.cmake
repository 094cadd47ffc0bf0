# SPDX-License-Identifier: Apache-2.0
# Installs the build tree into a scratch prefix and uses it as a consumer would: runs the installed
# cbgpu-bench (its RPATH must find libcbgpu.so), builds examples/ as a fresh CMake project with
# find_package(cbgpu), runs the example, and checks cbgpu.pc with pkg-config where there is one.
#   cmake -DBUILD_DIR=... -DPREFIX=... -DWORK_DIR=... -DEXAMPLES_DIR=... -DLIBDIR=lib -DBINDIR=bin
#         [-DCONFIG=...] [-DGENERATOR=Ninja] [-DMAKE_PROGRAM=...] [-DC_COMPILER=...] [-DCXX_COMPILER=...]
#         [-DEXTRA_C_FLAGS=...] -P install_test.cmake
cmake_minimum_required(VERSION 3.19)

# Runs a command; fails the test with its output unless it exits 0. Output goes to `out_var`.
function(run out_var)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(JOIN " " shown ${ARGN})
    message(FATAL_ERROR "failed (exit code ${rc}): ${shown}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
  endif()
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${PREFIX}" "${WORK_DIR}")

# 1. Install.
set(config_args)
if(CONFIG)
  set(config_args --config "${CONFIG}")
endif()
run(out "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}" ${config_args})
foreach(f include/cbgpu/cbgpu.h include/cbgpu/cbgpu_export.h include/cbgpu/cbgpu_version.h
          ${LIBDIR}/libcbgpu.so ${LIBDIR}/cmake/cbgpu/cbgpuConfig.cmake
          ${LIBDIR}/cmake/cbgpu/cbgpuConfigVersion.cmake ${LIBDIR}/pkgconfig/cbgpu.pc
          ${BINDIR}/cbgpu-bench)
  if(NOT EXISTS "${PREFIX}/${f}")
    message(FATAL_ERROR "not installed: ${PREFIX}/${f}")
  endif()
endforeach()

# 2. The installed tool finds the installed library through its RPATH alone.
run(out "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${PREFIX}/${BINDIR}/cbgpu-bench" version)
if(NOT out MATCHES "\"version\"")
  message(FATAL_ERROR "installed cbgpu-bench version printed no build info:\n${out}")
endif()

# 3. examples/ as a fresh project against the prefix.
set(configure_args -S "${EXAMPLES_DIR}" -B "${WORK_DIR}/examples" -DCMAKE_BUILD_TYPE=Release
                   "-DCMAKE_PREFIX_PATH=${PREFIX}")
if(GENERATOR)
  list(APPEND configure_args -G "${GENERATOR}")
endif()
if(MAKE_PROGRAM)
  list(APPEND configure_args "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(C_COMPILER)
  list(APPEND configure_args "-DCMAKE_C_COMPILER=${C_COMPILER}")
endif()
if(CXX_COMPILER)
  list(APPEND configure_args "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
endif()
if(EXTRA_C_FLAGS)
  list(APPEND configure_args "-DCMAKE_C_FLAGS=${EXTRA_C_FLAGS}" "-DCMAKE_CXX_FLAGS=${EXTRA_C_FLAGS}"
       "-DCMAKE_EXE_LINKER_FLAGS=${EXTRA_C_FLAGS}")
endif()
run(out "${CMAKE_COMMAND}" ${configure_args})
# It must have found this prefix, not another cbgpu on the machine.
file(STRINGS "${WORK_DIR}/examples/CMakeCache.txt" found_dir REGEX "^cbgpu_DIR:")
file(REAL_PATH "${PREFIX}" real_prefix)
string(FIND "${found_dir}" "${real_prefix}" at)
if(at EQUAL -1)
  string(FIND "${found_dir}" "${PREFIX}" at)
endif()
if(at EQUAL -1)
  message(FATAL_ERROR "find_package(cbgpu) found ${found_dir}, not the package in ${PREFIX}")
endif()
run(out "${CMAKE_COMMAND}" --build "${WORK_DIR}/examples")
run(out "${WORK_DIR}/examples/pool_from_host")
message(STATUS "pool_from_host:\n${out}")
# train_and_predict: the host part always, the device part where a GPU is visible (else "skipped").
run(out "${WORK_DIR}/examples/train_and_predict")
if(NOT out MATCHES "host part: ok" OR NOT out MATCHES "device part: (ok|skipped)")
  message(FATAL_ERROR "train_and_predict printed unexpected results:\n${out}")
endif()
message(STATUS "train_and_predict:\n${out}")
run(out "${WORK_DIR}/examples/quickstart")
if(NOT out MATCHES "refused as expected: cbg_train: .*no_such_parameter" OR NOT out MATCHES "\nOK\n")
  message(FATAL_ERROR "quickstart printed unexpected results:\n${out}")
endif()
message(STATUS "quickstart:\n${out}")
run(out "${CMAKE_COMMAND}" -E env --unset=LD_LIBRARY_PATH "${WORK_DIR}/examples/dlopen_client"
    "${PREFIX}/${LIBDIR}/libcbgpu.so")
if(NOT out MATCHES "feature 1: 2 borders")
  message(FATAL_ERROR "dlopen_client printed unexpected borders:\n${out}")
endif()
message(STATUS "dlopen_client:\n${out}")

# 4. pkg-config, where installed: the flags must point into the prefix.
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
if(NOT PKG_CONFIG)
  message(STATUS "pkg-config not found: cbgpu.pc was installed but not checked")
  return()
endif()
set(ENV{PKG_CONFIG_PATH} "${PREFIX}/${LIBDIR}/pkgconfig")
run(flags "${PKG_CONFIG}" --cflags --libs cbgpu)
string(STRIP "${flags}" flags)
separate_arguments(flag_list UNIX_COMMAND "${flags}")
set(include_ok FALSE)
set(lib_ok FALSE)
foreach(flag IN LISTS flag_list)
  # (CMAKE_MATCH_1 is read in a second if(): ${} expands before MATCHES runs.)
  if(flag MATCHES "^-I(.+)$")
    if(EXISTS "${CMAKE_MATCH_1}/cbgpu/cbgpu.h")
      set(include_ok TRUE)
    endif()
  elseif(flag MATCHES "^-L(.+)$")
    if(EXISTS "${CMAKE_MATCH_1}/libcbgpu.so")
      set(lib_ok TRUE)
    endif()
  endif()
endforeach()
if(NOT include_ok OR NOT lib_ok OR NOT flags MATCHES "-lcbgpu")
  file(READ "${PREFIX}/${LIBDIR}/pkgconfig/cbgpu.pc" pc)
  message(FATAL_ERROR "pkg-config --cflags --libs cbgpu gave '${flags}', which does not point at "
                      "the headers and library installed in ${PREFIX} (is the prefix in cbgpu.pc "
                      "fixed at configure time rather than relative to \${pcfiledir}?)\n${pc}")
endif()
message(STATUS "pkg-config: ${flags}")
