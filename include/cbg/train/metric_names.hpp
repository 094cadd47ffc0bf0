// SPDX-License-Identifier: Apache-2.0
// CatBoost's metric names and the metric parameters every metric takes (use_weights, hints, and
// TotalF1's average, AUC's type).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cbg/train/metric.hpp"

namespace cbg::train {

// The metric of a CatBoost name; none for an unknown one.
std::optional<metric_kind> metric_kind_of(std::string_view name);
// CatBoost's name of a metric kind.
const char* metric_kind_name(metric_kind k) noexcept;
// Whether `name` is one of CatBoost's metrics (or, for _loss, of its losses) that cbgpu does not
// implement: refused as not implemented, where unknown names are invalid arguments.
bool is_unimplemented_catboost_metric(std::string_view name) noexcept;
bool is_unimplemented_catboost_loss(std::string_view name) noexcept;
// Every supported name, comma separated (for messages and docs).
std::string supported_metric_names();

// CatBoost's default of use_weights (false only for AUC).
bool default_use_weights(metric_kind k) noexcept;
// Whether CatBoost skips the metric on the learn set unless hints=skip_train~false (AUC, NormalizedGini).
bool default_skip_train(metric_kind k) noexcept;

// Applies the metric parameter key=value that is not specific to one loss (use_weights, hints,
// average, type) to the spec. Returns false for a key it does not know; throws invalid_argument
// (naming `what` and `text`) for a known key with a bad value. skip_train receives the hint.
bool apply_metric_parameter(metric_spec& spec, std::optional<bool>& skip_train, const std::string& key,
                            const std::string& value, const std::string& what, const std::string& text);

}  // namespace cbg::train
