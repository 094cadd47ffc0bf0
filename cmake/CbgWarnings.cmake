# SPDX-License-Identifier: Apache-2.0
option(CBGPU_WERROR "Treat compiler warnings as errors" OFF)

function(cbg_set_warnings target)
  set(_cxx -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(CBGPU_WERROR)
    list(APPEND _cxx -Werror)
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${_cxx}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>)
endfunction()
