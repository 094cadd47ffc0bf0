// SPDX-License-Identifier: Apache-2.0
// Reading and writing CatBoost model files: the binary `.cbm` (CBM1 framing, core flatbuffer,
// `static_provider_v1` CTR part) and CatBoost's JSON (`save_model(format='json')`).
//
// Readers never trust their input: every size is checked against the bytes present before
// anything is allocated, the flatbuffers are verified, and the result passes validate(). Errors
// are cbg::error with CBG_ERR_FORMAT (malformed bytes), CBG_ERR_UNSUPPORTED (a valid model part
// cbgpu does not evaluate: non-symmetric trees, text, embedding or estimated features) or
// CBG_ERR_IO (files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cbg/model/model.hpp"

namespace cbg::model {

enum class file_format : std::int32_t { cbm = 0, json = 1 };

model read_cbm(const void* data, std::size_t size);
std::vector<std::uint8_t> write_cbm(const model& m);

model read_json(std::string_view text);
std::string write_json(const model& m);

// Either format; with `format` unknown (detect = true) the CBM1 magic decides.
model read_model(const void* data, std::size_t size, file_format format);
std::vector<std::uint8_t> write_model(const model& m, file_format format);

model load_model_file(const std::string& path, file_format format);
void save_model_file(const model& m, const std::string& path, file_format format);

// The format string CatBoost requires in TModelCore.FormatVersion (the typo is part of the format).
inline constexpr std::string_view cbm_format_version = "FlabuffersModel_v1";
inline constexpr std::string_view cbm_ctr_part_id = "static_provider_v1";

// The most outputs per object a model may have (its approx dimension), checked by validate() and by
// the readers before anything is sized from it.
inline constexpr int max_approx_dimension = 1 << 16;

}  // namespace cbg::model
