# SPDX-License-Identifier: Apache-2.0
# Runs one command and checks its exit code and output (CTest's PASS_REGULAR_EXPRESSION ignores
# exit codes, hence this driver).
#   cmake -DEXPECT_RC=<code> [-DEXPECT_STDOUT=<regex>] [-DEXPECT_STDERR=<regex>]
#         [-DJSON_LINE_KEY=<key>] -DCMD_ARGC=<n> -DCMD_ARG0=<program> -DCMD_ARG1=<arg> ... -P expect_run.cmake
# The command comes as numbered variables: cmake reads some options (-i, ...) even after -P.
# JSON_LINE_KEY: some line of stdout must be a JSON object that has this key.
cmake_minimum_required(VERSION 3.19)

set(_command)
math(EXPR _last "${CMD_ARGC} - 1")
foreach(_i RANGE 0 ${_last})
  list(APPEND _command "${CMD_ARG${_i}}")
endforeach()

execute_process(COMMAND ${_command} RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
string(JOIN " " _shown ${_command})
set(_report "command: ${_shown}\nexit code: ${_rc}\n--- stdout ---\n${_out}\n--- stderr ---\n${_err}")

if(NOT "${_rc}" STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expected exit code ${EXPECT_RC}\n${_report}")
endif()
if(DEFINED EXPECT_STDOUT AND NOT _out MATCHES "${EXPECT_STDOUT}")
  message(FATAL_ERROR "stdout does not match '${EXPECT_STDOUT}'\n${_report}")
endif()
if(DEFINED EXPECT_STDERR AND NOT _err MATCHES "${EXPECT_STDERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_STDERR}'\n${_report}")
endif()
if(DEFINED JSON_LINE_KEY)
  set(_found FALSE)
  string(REPLACE "\n" ";" _lines "${_out}")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "^{")
      string(JSON _value ERROR_VARIABLE _json_error GET "${_line}" "${JSON_LINE_KEY}")
      if(NOT _json_error)
        set(_found TRUE)
      endif()
    endif()
  endforeach()
  if(NOT _found)
    message(FATAL_ERROR "no line of stdout is a JSON object with key '${JSON_LINE_KEY}'\n${_report}")
  endif()
endif()
message(STATUS "ok (exit code ${_rc}): ${_shown}")
