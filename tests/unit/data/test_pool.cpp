// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/data/value_checks.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

using cbg::status;
using cbg::test::dl_float;
using cbg::test::dl_int;
using cbg::test::fake_tensor;

namespace {

std::shared_ptr<cbg::context> cpu_context() {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  return cbg::context::create(o);
}

status build_status(std::shared_ptr<cbg::context> ctx, cbg::pool_inputs in) {
  try {
    (void)cbg::pool::build(std::move(ctx), std::move(in));
    return status::ok;
  } catch (const cbg::error& e) {
    return e.code();
  }
}

}  // namespace

TEST_CASE("a pool over a row-major matrix exposes strided columns without copying", "[data]") {
  std::vector<float> x(5 * 3);
  std::iota(x.begin(), x.end(), 0.0f);
  std::vector<double> y = {0, 1, 0, 1, 1};
  std::vector<float> w = {1, 2, 3, 4, 5};
  fake_tensor features(x.data(), dl_float(32), {5, 3});
  fake_tensor label(y.data(), dl_float(64), {5});
  fake_tensor weight(w.data(), dl_float(32), {5});
  {
    cbg::pool_inputs in;
    in.features = features.as_versioned();
    in.label = label.as_legacy();
    in.weight = weight.as_borrowed();
    in.feature_names = {"a", "b", "c"};
    cbg::pool p = cbg::pool::build(cpu_context(), std::move(in));
    CHECK(p.num_rows() == 5);
    CHECK(p.num_features() == 3);
    CHECK(p.device() == -1);
    CHECK(p.feature_name(2) == "c");
    CHECK(cbg::pool::dims_of(p.label()) == 1);
    CHECK(p.weight().has_value());
    CHECK_FALSE(p.baseline().has_value());
    const cbg::column_view& col1 = p.features()[1];
    CHECK(col1.data == x.data() + 1);  // a view into the caller's memory
    CHECK(col1.stride == 3);
    for (int i = 0; i < 5; ++i) CHECK(col1.value(i) == x[static_cast<std::size_t>(i * 3 + 1)]);
    CHECK(features.deleter_calls == 0);
  }
  CHECK(features.deleter_calls == 1);
  CHECK(label.deleter_calls == 1);
  CHECK(weight.deleter_calls == 0);  // borrowed
}

TEST_CASE("a pool from per-column tensors of different dtypes", "[data]") {
  std::vector<std::int32_t> c0 = {3, 1, 2, 3};
  std::vector<double> c1 = {0.5, 1.5, NAN, 2.5};
  std::vector<std::uint8_t> c2 = {1, 0, 1, 1};
  fake_tensor t0(c0.data(), dl_int(32), {4});
  fake_tensor t1(c1.data(), dl_float(64), {4});
  fake_tensor t2(c2.data(), cbg::test::dl_uint(8), {4});
  std::vector<float> baseline(8);
  fake_tensor b(baseline.data(), dl_float(32), {4, 2});
  cbg::pool_inputs in;
  in.columns = {t0.as_versioned(), t1.as_versioned(), t2.as_versioned()};
  in.baseline = b.as_versioned();
  in.cat_features = {0, 2};
  {
    cbg::pool p = cbg::pool::build(cpu_context(), std::move(in));
    CHECK(p.num_features() == 3);
    CHECK(p.num_categorical() == 2);
    CHECK(p.is_categorical(0));
    CHECK_FALSE(p.is_categorical(1));
    CHECK(cbg::pool::dims_of(p.baseline()) == 2);
    CHECK(p.features()[0].value(0) == 3.0);
    CHECK(std::isnan(p.features()[1].value(2)));
    CHECK(p.feature_name(1).empty());
  }
  CHECK(t0.deleter_calls + t1.deleter_calls + t2.deleter_calls + b.deleter_calls == 4);
}

TEST_CASE("every failure still deletes every consumed tensor exactly once", "[data]") {
  std::vector<float> x(12), y(5), f(4);
  fake_tensor features(x.data(), dl_float(32), {4, 3});
  fake_tensor label(y.data(), dl_float(32), {5});  // 5 rows vs 4: a shape error
  cbg::pool_inputs in;
  in.features = features.as_versioned();
  in.label = label.as_versioned();
  CHECK(build_status(cpu_context(), std::move(in)) == status::shape);
  CHECK(features.deleter_calls == 1);
  CHECK(label.deleter_calls == 1);
}

TEST_CASE("pool input errors map to distinct codes", "[data]") {
  std::vector<float> x(12);
  std::vector<std::int64_t> codes(4);
  auto matrix = [&](fake_tensor& t) {
    cbg::pool_inputs in;
    in.features = t.as_borrowed();
    return in;
  };
  fake_tensor m(x.data(), dl_float(32), {4, 3});
  SECTION("categorical index out of range / twice / float") {
    auto in = matrix(m);
    in.cat_features = {3};
    CHECK(build_status(cpu_context(), in) == status::invalid_argument);
    in.cat_features = {1, 1};
    CHECK(build_status(cpu_context(), in) == status::invalid_argument);
    in.cat_features = {0};
    CHECK(build_status(cpu_context(), in) == status::dtype);
  }
  SECTION("names count") {
    auto in = matrix(m);
    in.feature_names = {"only one"};
    CHECK(build_status(cpu_context(), in) == status::invalid_argument);
  }
  SECTION("no features, or both forms") {
    CHECK(build_status(cpu_context(), cbg::pool_inputs{}) == status::invalid_argument);
    fake_tensor c(codes.data(), dl_int(64), {4});
    auto in = matrix(m);
    in.columns = {c.as_borrowed()};
    CHECK(build_status(cpu_context(), in) == status::invalid_argument);
  }
  SECTION("ragged columns") {
    fake_tensor a(codes.data(), dl_int(64), {4});
    fake_tensor b(codes.data(), dl_int(64), {3});
    cbg::pool_inputs in;
    in.columns = {a.as_borrowed(), b.as_borrowed()};
    CHECK(build_status(cpu_context(), in) == status::shape);
  }
  SECTION("a 1-D feature matrix, a 2-D weight") {
    fake_tensor v(x.data(), dl_float(32), {12});
    CHECK(build_status(cpu_context(), matrix(v)) == status::shape);
    fake_tensor w(x.data(), dl_float(32), {4, 3});
    auto in = matrix(m);
    in.weight = w.as_borrowed();
    CHECK(build_status(cpu_context(), in) == status::shape);
  }
  SECTION("GPU memory on a CPU context") {
    fake_tensor d(x.data(), dl_float(32), {4, 3}, {}, DLDevice{kDLCUDA, 0});
    CHECK(build_status(cpu_context(), matrix(d)) == status::device);
  }
}

TEST_CASE("labels, weights and baselines must hold valid values", "[data]") {
  std::vector<float> x(8, 0.0f);
  fake_tensor m(x.data(), dl_float(32), {4, 2});
  auto with = [&](cbg::tensor_ref cbg::pool_inputs::*slot, fake_tensor& t) {
    cbg::pool_inputs in;
    in.features = m.as_borrowed();
    in.*slot = t.as_borrowed();
    return build_status(cpu_context(), in);
  };
  std::vector<double> inf_label = {0, 1, INFINITY, 0};
  std::vector<float> negative_weight = {1, 1, -0.5f, 1};
  std::vector<float> negative_zero_weight = {1, -0.0f, 0, 1};
  std::vector<std::int32_t> negative_int_label = {-1, 0, 1, 2};
  std::vector<float> nan_baseline = {0, 0, 0, 0, 0, 0, 0, NAN};  // [4, 2], second column
  fake_tensor a(inf_label.data(), dl_float(64), {4});
  fake_tensor b(negative_weight.data(), dl_float(32), {4});
  fake_tensor c(negative_zero_weight.data(), dl_float(32), {4});
  fake_tensor d(negative_int_label.data(), dl_int(32), {4});
  fake_tensor e(nan_baseline.data(), dl_float(32), {4, 2});
  CHECK(with(&cbg::pool_inputs::label, a) == status::bad_data);
  CHECK(with(&cbg::pool_inputs::weight, b) == status::bad_data);
  CHECK(with(&cbg::pool_inputs::weight, c) == status::ok);  // -0.0 is not negative
  std::vector<float> zero_weight = {0, -0.0f, 0, 0};
  fake_tensor z(zero_weight.data(), dl_float(32), {4});
  CHECK(with(&cbg::pool_inputs::weight, z) == status::bad_data);  // all zero: refused, as CatBoost does
  CHECK(with(&cbg::pool_inputs::label, d) == status::ok);         // negative labels are fine
  CHECK(with(&cbg::pool_inputs::baseline, e) == status::bad_data);
}

TEST_CASE("value checks count NaN, infinities and negatives (host reference)", "[data]") {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {1.0, NAN, -inf, inf, -0.0, -3.0, 0.0, NAN};
  cbg::column_view c{v.data(), cbg::dtype::float64, cbg::memory_kind::host, -1, static_cast<std::int64_t>(v.size()), 1};
  CHECK(cbg::count_values_host(c) == cbg::value_counts{2, 2, 1, 1});
  c.size = 4;
  c.stride = 2;  // 1.0, -inf, -0.0, 0.0
  CHECK(cbg::count_values_host(c) == cbg::value_counts{0, 1, 0, 1});
}
