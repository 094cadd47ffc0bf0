// SPDX-License-Identifier: Apache-2.0
// The training dataset (cbg/train/dataset.hpp) on the host: class_names labels relabelled to class
// indices in a derived pool that views the caller's features, the eval set likewise, an unknown
// label refused naming its row, and the learn set quantized once and handed to the backend as the
// quantizer makes it on its own.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/data/pool.hpp"
#include "cbg/quantize/quantizer.hpp"
#include "cbg/train/dataset.hpp"
#include "cbg/train/params.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

namespace {

std::shared_ptr<cbg::context> host_context() {
  cbg::context_options o;
  o.device = cbg::cpu_device;
  return cbg::context::create(o);
}

// Two float features (column-major) and a label column.
struct labelled_pool {
  std::vector<float> x, label;
  std::unique_ptr<cbg::test::fake_tensor> tx, tl;
  std::unique_ptr<cbg::pool> pool;
};

std::unique_ptr<labelled_pool> make_pool(const std::shared_ptr<cbg::context>& ctx, std::vector<float> label) {
  auto p = std::make_unique<labelled_pool>();
  const auto rows = static_cast<std::int64_t>(label.size());
  p->label = std::move(label);
  for (std::int64_t r = 0; r < 2 * rows; ++r) p->x.push_back(static_cast<float>((r * 7) % 11) - 3.f);
  p->tx = std::make_unique<cbg::test::fake_tensor>(
      p->x.data(), cbg::test::dl_float(32), std::vector<std::int64_t>{rows, 2}, std::vector<std::int64_t>{1, rows});
  p->tl = std::make_unique<cbg::test::fake_tensor>(p->label.data(), cbg::test::dl_float(32),
                                                   std::vector<std::int64_t>{rows});
  cbg::pool_inputs in;
  in.features = p->tx->as_borrowed();
  in.label = p->tl->as_borrowed();
  in.feature_names = {"a", "b"};
  p->pool = std::make_unique<cbg::pool>(cbg::pool::build(ctx, std::move(in)));
  return p;
}

std::vector<double> labels_of(const cbg::pool& p) {
  std::vector<double> v;
  const cbg::column_view c = cbg::column_of(*p.label(), 0);
  for (std::int64_t r = 0; r < c.size; ++r) v.push_back(c.value(r));
  return v;
}

cbg::train::train_params multiclass_params(std::vector<double> class_values) {
  cbg::train::train_params p;
  p.loss.kind = cbg::train::loss_kind::multiclass;
  p.border_count = 8;
  p.class_values = std::move(class_values);
  return p;
}

}  // namespace

TEST_CASE("dataset: class_names labels become class indices in views of the caller's features", "[train]") {
  const auto ctx = host_context();
  const auto learn = make_pool(ctx, {30, 10, 20, 20, 30, 10, 10, 30});
  const auto eval = make_pool(ctx, {20, 30, 10});
  cbg::train::dataset data(*learn->pool, eval->pool.get(), multiclass_params({10, 20, 30}));

  CHECK(labels_of(data.labelled_learn()) == std::vector<double>{2, 0, 1, 1, 2, 0, 0, 2});
  REQUIRE(data.labelled_eval() != nullptr);
  CHECK(labels_of(*data.labelled_eval()) == std::vector<double>{1, 2, 0});
  // No categorical features: the backends read the relabelled pools, whose features are the caller's.
  CHECK(&data.learn() == &data.labelled_learn());
  CHECK(data.categorical() == nullptr);
  REQUIRE(data.learn().num_features() == 2);
  CHECK(data.learn().features()[1].data == learn->pool->features()[1].data);
  CHECK(data.learn().feature_name(1) == "b");
  CHECK(data.learn().device() == -1);
  // The caller's labels are untouched.
  CHECK(labels_of(*learn->pool) == std::vector<double>{30, 10, 20, 20, 30, 10, 10, 30});
}

TEST_CASE("dataset: a label outside class_names is refused naming its row", "[train]") {
  const auto ctx = host_context();
  const auto learn = make_pool(ctx, {10, 20, 25, 10});
  try {
    cbg::train::dataset data(*learn->pool, nullptr, multiclass_params({10, 20}));
    FAIL("no error");
  } catch (const cbg::error& e) {
    CHECK(e.code() == cbg::status::bad_data);
    CHECK(std::string(e.what()).find("learn label 25 of row 2 is not one of class_names") != std::string::npos);
  }
}

TEST_CASE("dataset: the learn set is quantized once and handed to the backend", "[train]") {
  const auto ctx = host_context();
  const auto learn = make_pool(ctx, {0, 1, 1, 0, 1, 0, 0, 1, 1, 1});
  cbg::train::train_params p;
  p.border_count = 8;
  cbg::train::dataset data(*learn->pool, nullptr, p);
  cbg::train::backend_inputs in = data.take_backend_inputs();
  CHECK(in.learn == learn->pool.get());  // nothing to derive: the caller's pool itself
  CHECK(in.eval == nullptr);
  CHECK(in.device_quantized == nullptr);
  REQUIRE(in.host_quantized != nullptr);
  cbg::quantize::options o;
  o.border_count = 8;
  const cbg::quantize::host_quantized direct = cbg::quantize::quantize_host(*learn->pool, o);
  CHECK(in.host_quantized->rows == direct.rows);
  CHECK(in.host_quantized->features == direct.features);
  CHECK(in.host_quantized->borders == direct.borders);
  CHECK(in.host_quantized->border_count == direct.border_count);
  CHECK(in.host_quantized->index == direct.index);
}
