// SPDX-License-Identifier: Apache-2.0
// The pipeline stages that do not exist yet, with the issue that adds each. Commands print these
// instead of pretending: no metric, model file or prediction is ever made up.
#pragma once

#include <array>

namespace cbgpu_bench {

struct missing_stage {
  const char* stage;  // machine-readable name, used in the JSON record
  int issue;          // the issue that must land first
  const char* what;   // what did not happen because of it
};

inline constexpr std::array<missing_stage, 2> missing_stages{{
    {"predict", 6, "no predictions were made on the GPU: they need the GPU evaluator (issue #6)"},
    {"metric", 6, "no held-out metric was computed: it needs GPU predictions (issue #6); the learn "
                  "metric comes from training"},
}};

}  // namespace cbgpu_bench
