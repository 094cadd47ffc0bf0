// SPDX-License-Identifier: Apache-2.0
// Model readers bounded by their input: a count a .cbm declares is checked against the bytes that
// exist (or its own range) before anything is sized from it.
#include <cstdint>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"
#include "src/model/fbs/cbm_generated.h"  // the checked-in copy (tested equal to flatc's output)
#include "support/catch.hpp"

namespace cm = cbg::model;
namespace fb = cbg::fbs;

namespace {

// "CBM1", the core size, then a core whose trees declare `approx_dimension` and nothing else.
std::vector<std::uint8_t> cbm_with_dimension(std::int32_t approx_dimension) {
  flatbuffers::FlatBufferBuilder b;
  fb::TModelTreesBuilder trees(b);
  trees.add_ApproxDimension(approx_dimension);
  const auto t = trees.Finish();
  const auto version = b.CreateString(std::string(cm::cbm_format_version));
  b.Finish(fb::CreateTModelCore(b, version, t));
  std::vector<std::uint8_t> out{'C', 'B', 'M', '1'};
  const auto size = static_cast<std::uint32_t>(b.GetSize());
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(size >> (8 * i)));
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  return out;
}

std::pair<cbg::status, std::string> read_outcome(const std::vector<std::uint8_t>& bytes) {
  try {
    (void)cm::read_model(bytes.data(), bytes.size(), cm::file_format::cbm);
  } catch (const cbg::error& e) {
    return {e.code(), e.what()};
  }
  return {cbg::status::ok, {}};
}

}  // namespace

TEST_CASE(".cbm: a huge declared approx dimension is refused before the bias is sized from it", "[model]") {
  // 2^31 - 1 outputs would be a 16 GiB bias vector.
  const auto [code, message] = read_outcome(cbm_with_dimension(0x7fffffff));
  CHECK(code == cbg::status::format);
  CHECK(message.find("approx dimension 2147483647") != std::string::npos);
  CHECK(read_outcome(cbm_with_dimension(-5)).first == cbg::status::format);
  CHECK(read_outcome(cbm_with_dimension(1)).first == cbg::status::ok);  // an empty model is fine
}

TEST_CASE(".cbm: declared sizes beyond the bytes present are refused", "[model]") {
  // A 64-bit core size (0xFFFFFFFF escape) of 2^60 bytes in a 16-byte file.
  std::vector<std::uint8_t> bytes{'C', 'B', 'M', '1', 0xff, 0xff, 0xff, 0xff};
  for (int i = 0; i < 8; ++i) bytes.push_back(i == 7 ? 0x10 : 0);
  const auto [code, message] = read_outcome(bytes);
  CHECK(code == cbg::status::format);
  CHECK(message.find("declared") != std::string::npos);
}
