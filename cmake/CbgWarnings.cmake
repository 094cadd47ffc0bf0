# SPDX-License-Identifier: Apache-2.0
option(CBGPU_WERROR "Treat compiler warnings as errors" OFF)

# The warnings of the C++ code, for the host side of .cu files too (nvcc hands that to the same host
# compiler through -Xcompiler), and nvcc's own warnings; all errors with CBGPU_WERROR (the ci preset).
# -Wpedantic is the one exception for .cu files: the host compiler then flags the line markers of
# the code nvcc generates ("style of line directive is a GCC extension"), not ours.
function(cbg_set_warnings target)
  set(_warnings -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wno-sign-conversion)
  if(CBGPU_WERROR)
    list(APPEND _warnings -Werror)
  endif()
  set(_cuda_host ${_warnings})
  list(REMOVE_ITEM _cuda_host -Wpedantic)
  list(JOIN _cuda_host "," _host_warnings)
  target_compile_options(${target} PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:${_warnings}>"
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=${_host_warnings}>")
  if(CBGPU_WERROR)
    target_compile_options(${target} PRIVATE "$<$<COMPILE_LANGUAGE:CUDA>:SHELL:--Werror all-warnings>")
  endif()
endfunction()
