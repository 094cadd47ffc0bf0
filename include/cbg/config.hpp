// SPDX-License-Identifier: Apache-2.0
// Compiler checks and the few macros every core header needs.
#pragma once

#if !defined(__cplusplus) || __cplusplus < 202002L
#error "cbgpu's C++ core needs C++20 (use the C header cbgpu/cbgpu.h from C)."
#endif

// Marks the per-element math that host reference paths and kernels share (design rule 1).
#if defined(__CUDACC__)
#define CBG_HOST_DEVICE __host__ __device__
#else
#define CBG_HOST_DEVICE
#endif

// Everything in the core has hidden visibility; only the C ABI exports symbols.
#define CBG_HIDDEN __attribute__((visibility("hidden")))
