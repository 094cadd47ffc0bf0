# SPDX-License-Identifier: Apache-2.0
# Finds the dependencies and gathers them into one interface target, cbg::deps.
#
# fmt and spdlog are used header-only and compiled into the library with hidden visibility, so
# libcbgpu.so needs neither at run time and exports none of their symbols. CUB/Thrust are wrapped in
# the cbg_cccl namespace so they cannot collide with another copy in the process.

find_package(CUDAToolkit REQUIRED)
find_package(Threads REQUIRED)
find_package(fmt REQUIRED)
find_package(spdlog REQUIRED)
# A header-only dependency: its CMake package, or (machines without the package) its header alone,
# found on CMAKE_INCLUDE_PATH / CMAKE_PREFIX_PATH.
function(cbg_find_header_only target package header debian_package)
  find_package(${package} CONFIG QUIET)
  if(NOT TARGET ${target})
    find_path(CBG_${package}_INCLUDE ${header})
    if(NOT CBG_${package}_INCLUDE)
      message(FATAL_ERROR "${package} not found: apt-get install ${debian_package}, or point "
                          "CMAKE_INCLUDE_PATH at a directory holding ${header}")
    endif()
    add_library(${target} INTERFACE IMPORTED GLOBAL)
    target_include_directories(${target} INTERFACE "${CBG_${package}_INCLUDE}")
  endif()
endfunction()

cbg_find_header_only(nlohmann_json::nlohmann_json nlohmann_json nlohmann/json.hpp nlohmann-json3-dev)

add_library(cbg_deps INTERFACE)
add_library(cbg::deps ALIAS cbg_deps)

# fmt: header-only (FMT_HEADER_ONLY), no libfmt.so at run time.
target_link_libraries(cbg_deps INTERFACE fmt::fmt-header-only)

# spdlog: its own header-only target drags in the shared fmt, so take its include path only.
get_target_property(_cbg_spdlog_inc spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(cbg_deps SYSTEM INTERFACE ${_cbg_spdlog_inc})
target_compile_definitions(cbg_deps INTERFACE SPDLOG_FMT_EXTERNAL)

target_link_libraries(cbg_deps INTERFACE nlohmann_json::nlohmann_json Threads::Threads ${CMAKE_DL_LIBS})

# DLPack: Debian's package (0.6) when present; otherwise include/cbg/tensor/dlpack.hpp declares the
# structs from the DLPack 1.x specification (the GPU machines have no dlpack package).
find_package(dlpack CONFIG QUIET)
if(TARGET dlpack::dlpack)
  target_link_libraries(cbg_deps INTERFACE dlpack::dlpack)
  set(CBG_DLPACK_SOURCE "system package ${dlpack_VERSION}")
else()
  target_compile_definitions(cbg_deps INTERFACE CBG_NO_SYSTEM_DLPACK)
  set(CBG_DLPACK_SOURCE "declared from the DLPack 1.x specification")
endif()
message(STATUS "cbgpu: DLPack ${CBG_DLPACK_SOURCE}")

# flatbuffers (.cbm model files): only the header-only runtime (flatbuffers/flatbuffers.h, 2.0.8, as
# Debian's libflatbuffers-dev), found on the system or on CMAKE_INCLUDE_PATH; nothing is linked.
# flatc, when present, regenerates the schema's header at build time (see CMakeLists.txt).
find_path(CBG_FLATBUFFERS_INCLUDE flatbuffers/flatbuffers.h)
if(NOT CBG_FLATBUFFERS_INCLUDE)
  message(FATAL_ERROR "flatbuffers not found: apt-get install libflatbuffers-dev, or point "
                      "CMAKE_INCLUDE_PATH at a directory holding flatbuffers/flatbuffers.h (2.0.8)")
endif()
target_include_directories(cbg_deps SYSTEM INTERFACE "${CBG_FLATBUFFERS_INCLUDE}")
find_program(CBG_FLATC flatc)
message(STATUS "cbgpu: flatbuffers headers in ${CBG_FLATBUFFERS_INCLUDE}; flatc: ${CBG_FLATC}")

# CUDA runtime and CCCL. CUDA 13 keeps CCCL under include/cccl, which older CMake does not add.
if(CBGPU_STATIC_CUDART)
  target_link_libraries(cbg_deps INTERFACE CUDA::cudart_static)
else()
  target_link_libraries(cbg_deps INTERFACE CUDA::cudart)
endif()
foreach(_dir IN LISTS CUDAToolkit_INCLUDE_DIRS)
  if(EXISTS "${_dir}/cccl")
    target_include_directories(cbg_deps SYSTEM INTERFACE "${_dir}/cccl")
  endif()
endforeach()
target_include_directories(cbg_deps SYSTEM INTERFACE ${CUDAToolkit_INCLUDE_DIRS})
target_compile_definitions(cbg_deps INTERFACE THRUST_CUB_WRAPPED_NAMESPACE=cbg_cccl)
# nvcc: C++20 host code with lambdas in device code and constexpr host functions in kernels.
target_compile_options(cbg_deps INTERFACE
  $<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda --expt-relaxed-constexpr>)

# Host sanitizers (the dev preset): C and C++ only; nvcc-compiled objects stay uninstrumented.
if(CBGPU_SANITIZE)
  set(_cbg_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_options(cbg_deps INTERFACE $<$<COMPILE_LANGUAGE:C,CXX>:${_cbg_san}>)
  target_link_options(cbg_deps INTERFACE -fsanitize=address,undefined)
endif()
