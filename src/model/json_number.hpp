// SPDX-License-Identifier: Apache-2.0
// A double as CatBoost's JSON writer prints it: 17 significant digits in printf's %g layout, an exact
// tie at the 17th digit rounded away from zero (its double-conversion does; printf rounds ties to
// even). Internal (not installed).
#pragma once

#include <string>

namespace cbg::model {

// Finite values only (the caller writes null for the others).
std::string json_number_text(double d);

}  // namespace cbg::model
