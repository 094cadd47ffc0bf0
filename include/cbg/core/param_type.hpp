// SPDX-License-Identifier: Apache-2.0
// The JSON type of a training parameter's value, as CatBoost stores it in a model's flat_params:
// each parameter is defined once with its type (cbg/train/params.hpp, cbg/ctr/options.hpp), and
// values given as text ("6", "true", as command lines give them) are stored with that type.
#pragma once

#include <cstdint>

namespace cbg {

enum class param_type : std::uint8_t {
  text,          // a string
  integer,       // a JSON integer
  number,        // a JSON number
  boolean,       // true / false
  text_or_list,  // a string or a list of strings, kept as given
  verbosity,     // a boolean or an integer (CatBoost's verbose)
  number_list,   // a list of numbers
};

}  // namespace cbg
