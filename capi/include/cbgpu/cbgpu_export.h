/* SPDX-License-Identifier: Apache-2.0 */
/** @file cbgpu_export.h  Symbol visibility and deprecation markers of the C ABI. */
#ifndef CBGPU_CBGPU_EXPORT_H
#define CBGPU_CBGPU_EXPORT_H

#if defined(_WIN32)
#define CBG_API
#elif defined(__GNUC__) || defined(__clang__)
/* The library is built with hidden visibility; only declarations marked CBG_API are exported. */
#define CBG_API __attribute__((visibility("default")))
#else
#define CBG_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#define CBG_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define CBG_DEPRECATED(msg)
#endif

#endif /* CBGPU_CBGPU_EXPORT_H */
