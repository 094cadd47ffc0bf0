// SPDX-License-Identifier: Apache-2.0
// CUB and Thrust are compiled inside the namespace cbg_cccl (THRUST_CUB_WRAPPED_NAMESPACE) so their
// symbols cannot collide with another copy in the process (PyTorch, cuDF, XGBoost). Inside namespace
// cbg, `cub::` and `thrust::` name the wrapped copies through these aliases.
#pragma once

#include <cub/config.cuh>
#include <thrust/version.h>

#ifndef THRUST_CUB_WRAPPED_NAMESPACE
#error "kernels must be compiled with THRUST_CUB_WRAPPED_NAMESPACE=cbg_cccl (see cmake/CbgDependencies.cmake)"
#endif

namespace cbg {
namespace cub = CUB_NS_QUALIFIER;
namespace thrust = THRUST_NS_QUALIFIER;
}  // namespace cbg
