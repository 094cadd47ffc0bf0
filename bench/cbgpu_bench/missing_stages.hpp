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

inline constexpr std::array<missing_stage, 4> missing_stages{{
    {"train", 7, "no model was trained"},
    {"save_model", 7, "no model file was written: model files exist, but no model was trained"},
    {"predict", 7, "no predictions were made: they need a trained model (issue #7) and the GPU "
                   "evaluator (issue #6)"},
    {"metric", 7, "no quality metric was computed: it needs a trained model (issue #7) and the GPU "
                  "evaluator (issue #6)"},
}};

}  // namespace cbgpu_bench
