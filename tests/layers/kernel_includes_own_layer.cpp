// SPDX-License-Identifier: Apache-2.0
// The control of the layers tests: with the kernels layer's include directories, the kernels' own
// headers and the core's public headers compile (so a failure of the others is the include's).
#include "cbg/train/boosting.hpp"
#include "kernels/train/boosting_launch.hpp"
