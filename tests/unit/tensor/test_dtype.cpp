// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdint>
#include <limits>

#include "cbg/tensor/dtype.hpp"
#include "support/catch.hpp"

using cbg::dtype;

TEST_CASE("binary16 decodes exactly, subnormals and specials included", "[tensor]") {
  CHECK(cbg::half_bits_to_float(0x3c00) == 1.0f);
  CHECK(cbg::half_bits_to_float(0xc000) == -2.0f);
  CHECK(cbg::half_bits_to_float(0x7bff) == 65504.0f);                  // largest normal
  CHECK(cbg::half_bits_to_float(0x0400) == std::ldexp(1.0f, -14));     // smallest normal
  CHECK(cbg::half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));     // smallest subnormal
  CHECK(cbg::half_bits_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(cbg::half_bits_to_float(0x3555) == 0x1.554p-2f);
  CHECK(std::isinf(cbg::half_bits_to_float(0x7c00)));
  CHECK(cbg::half_bits_to_float(0xfc00) < 0);
  CHECK(std::isnan(cbg::half_bits_to_float(0x7e00)));
  const float negative_zero = cbg::half_bits_to_float(0x8000);
  CHECK(negative_zero == 0.0f);
  CHECK(std::signbit(negative_zero));
}

TEST_CASE("load_as_double reads every dtype with strides", "[tensor]") {
  const std::int8_t i8[] = {-7, 0, 5};
  const std::uint16_t u16[] = {65535, 1, 2};
  const std::int64_t i64[] = {-(std::int64_t{1} << 40), 3, 4};
  const std::uint64_t u64[] = {std::numeric_limits<std::uint64_t>::max(), 0, 9};
  const float f32[] = {1.5f, -2.25f, 3.0f, 4.0f};
  const double f64[] = {0.1, 0.2};
  const bool b[] = {true, false, true};
  const std::uint16_t f16[] = {0x3c00, 0x0000, 0xc000};
  CHECK(cbg::load_as_double(i8, dtype::int8, 0, 1) == -7.0);
  CHECK(cbg::load_as_double(u16, dtype::uint16, 0, 1) == 65535.0);
  CHECK(cbg::load_as_double(i64, dtype::int64, 0, 1) == -1099511627776.0);
  CHECK(cbg::load_as_double(u64, dtype::uint64, 0, 1) == 18446744073709551615.0);
  CHECK(cbg::load_as_double(f32, dtype::float32, 1, 2) == 3.0);  // stride 2: element 2
  CHECK(cbg::load_as_double(f64, dtype::float64, 1, 1) == 0.2);
  CHECK(cbg::load_as_double(b, dtype::boolean, 1, 1) == 0.0);
  CHECK(cbg::load_as_double(b, dtype::boolean, 2, 1) == 1.0);
  CHECK(cbg::load_as_double(f16, dtype::float16, 1, 2) == -2.0);
}

TEST_CASE("dtype sizes and names", "[tensor]") {
  CHECK(cbg::size_of(dtype::float16) == 2);
  CHECK(cbg::size_of(dtype::uint64) == 8);
  CHECK(cbg::size_of(dtype::boolean) == 1);
  CHECK(cbg::name_of(dtype::int32) == "int32");
  CHECK(cbg::is_integral(dtype::uint8));
  CHECK_FALSE(cbg::is_integral(dtype::float32));
  CHECK_FALSE(cbg::is_integral(dtype::boolean));
}
