# SPDX-License-Identifier: Apache-2.0
# Runs `cbgpu-bench bench --json` on a small dataset and checks the record it writes.
#   cmake -DBENCH=<cbgpu-bench> -DJSON=<output file> -P bench_json.cmake
cmake_minimum_required(VERSION 3.19)

file(REMOVE "${JSON}")
execute_process(COMMAND "${BENCH}" bench --rows 1000 --features 5 --seed 3 --json "${JSON}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
set(report "exit code ${rc}\n--- stdout ---\n${out}\n--- stderr ---\n${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cbgpu-bench bench failed\n${report}")
endif()
if(NOT EXISTS "${JSON}")
  message(FATAL_ERROR "no JSON record at ${JSON}\n${report}")
endif()
file(READ "${JSON}" json)

# Reads `path...` of the record into `var`, failing the test where it is missing.
macro(get var)
  string(JSON ${var} ERROR_VARIABLE _error GET "${json}" ${ARGN})
  if(_error)
    message(FATAL_ERROR "record: ${_error}\n${json}")
  endif()
endmacro()
# Fails the test unless `actual` equals `expected`.
function(expect what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "record: ${what} is '${actual}', expected '${expected}'\n${json}")
  endif()
endfunction()

get(rows dataset rows)
expect("dataset.rows" "${rows}" 1000)
get(features dataset features)
expect("dataset.features" "${features}" 5)
get(pool_rows pool rows)
expect("pool.rows" "${pool_rows}" 1000)
get(pool_features pool features)
expect("pool.features" "${pool_features}" 5)
get(version library version)
get(device_count library device_count)
get(pool_ms phases_ms pool)
get(h2d copy_stats h2d_bytes)
get(context_device device context_device)
if(context_device GREATER_EQUAL 0)
  # On a GPU the features (1000 x 5 float32) and the label were copied to the device.
  math(EXPR uploaded "1000 * 5 * 4 + 1000 * 4")
  if(h2d LESS uploaded)
    message(FATAL_ERROR "record: h2d_bytes ${h2d} < ${uploaded} on CUDA device ${context_device}")
  endif()
  get(pool_device pool device)
  expect("pool.device" "${pool_device}" "${context_device}")
endif()
get(given tensors given_to_library)
get(released tensors released_by_library)
expect("tensors.released_by_library" "${released}" "${given}")

# Training ran: the default iterations, a model with as many trees, a time per iteration.
get(iterations training iterations)
expect("training.iterations" "${iterations}" 100)
get(trees training trees)
expect("training.trees" "${trees}" 100)
get(per_iteration training ms_per_iteration_median)
get(train_ms phases_ms train)

# Prediction ran: the evaluator's learn Logloss is training's (the record says so only when they
# agree to 1e-9), and the 250 held-out rows (1000 / 4) are predicted better than by a constant 0.5.
get(matches prediction learn_metric_matches_training)
expect("prediction.learn_metric_matches_training" "${matches}" "ON")  # CMake reads JSON true as ON
get(held_out_rows prediction held_out_rows)
expect("prediction.held_out_rows" "${held_out_rows}" 250)
get(held_out_logloss prediction held_out_metrics Logloss)
if(NOT held_out_logloss GREATER 0 OR NOT held_out_logloss LESS 0.6931)
  message(FATAL_ERROR "record: held-out Logloss ${held_out_logloss} is not in (0, ln 2)\n${json}")
endif()
get(predict_ms phases_ms predict)
string(JSON n LENGTH "${json}" not_implemented)
expect("not_implemented entries" "${n}" 0)
get(complete complete)
expect("complete" "${complete}" "ON")

# The console says the same, plainly.
if(NOT out MATCHES "check      learn Logloss from the evaluator [0-9.]+, from training [0-9.]+: the same")
  message(FATAL_ERROR "stdout does not show the learn metric check\n${report}")
endif()
if(device_count EQUAL 0 AND NOT out MATCHES "no GPU visible: using the host reference path")
  message(FATAL_ERROR "no GPU is visible, but stdout does not say so\n${report}")
endif()
message(STATUS "bench record ok: ${rows} x ${features}, held-out Logloss ${held_out_logloss}")
