// SPDX-License-Identifier: Apache-2.0
// Model IO and the host evaluator: hash vectors, a hand-built model evaluated by hand, .cbm and JSON
// round trips, and malformed input (truncated, corrupted, wrong shapes, huge sizes).
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/model/hash.hpp"
#include "cbg/model/host_evaluator.hpp"
#include "cbg/model/io.hpp"
#include "src/model/json_number.hpp"
#include "support/catch.hpp"

namespace cm = cbg::model;
using cbg::status;

namespace {

std::uint32_t h(const std::string& s) { return cm::cat_hash(s.data(), s.size()); }

std::uint64_t single_cat_key(std::uint32_t hash) { return cm::projection_add_cat(0, hash); }

// A small model touching every split kind: float (NaN as true), one-hot, a Counter CTR; a depth-0
// tree; a bias.
cm::model hand_model() {
  cm::model m;
  m.float_features.push_back({true, 0, 0, {0.5f}, "f0", cm::nan_treatment::as_true});
  m.float_features.push_back({false, 1, 2, {-1.f, 1.f}, "f1", cm::nan_treatment::as_is});
  m.cat_features.push_back({0, 1, "c0", true});
  m.one_hot_features.push_back({0, {static_cast<std::int32_t>(h("a")), static_cast<std::int32_t>(h("b"))}, {"a", "b"}});
  cm::ctr_feature ctr;
  ctr.ctr.base.proj.cat_features = {0};
  ctr.ctr.base.type = cm::ctr_type::counter;
  ctr.borders = {0.4f};
  m.ctr_features.push_back(ctr);
  cm::ctr_table table;
  table.base = ctr.ctr.base;
  table.counts = {3, 1};
  table.counter_denominator = 4;
  cm::build_ctr_buckets({single_cat_key(h("a")), single_cat_key(h("b"))}, table);
  m.ctr_tables.push_back(table);
  // binary features: 0 f0>0.5, 1 f1>-1, 2 f1>1, 3 c0=="a", 4 c0=="b", 5 ctr>0.4
  m.tree_splits = {0, 3, 5};
  m.tree_sizes = {2, 1, 0};
  m.tree_start_offsets = {0, 2, 3};
  m.leaf_values = {1, 2, 3, 4, 10, 20, 100};
  m.leaf_weights = {1, 1, 1, 1, 2, 2, 4};
  m.bias = {0.5};
  m.info = {{"params", R"({"loss_function":{"type":"RMSE"}})"}, {"note", "hand made"}};
  return m;
}

std::vector<double> predict(const cm::model& m, const std::vector<float>& floats,
                            const std::vector<std::uint32_t>& cats,
                            cm::prediction_type type = cm::prediction_type::raw_formula_val, std::size_t begin = 0,
                            std::size_t end = std::numeric_limits<std::size_t>::max()) {
  cm::host_rows rows;
  rows.n_rows = cats.size() / std::max<std::size_t>(m.cat_features.size(), 1);
  rows.floats = floats.data();
  rows.float_row_stride = m.float_features.size();
  rows.cat_hashes = cats.data();
  rows.cat_row_stride = m.cat_features.size();
  const std::size_t cols = cm::prediction_columns(m, type);
  std::vector<double> out(rows.n_rows * cols);
  cm::predict_host(m, rows, type, begin, std::min(end, m.tree_count()), out.data(), out.size());
  return out;
}

status code_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const cbg::error& e) {
    return e.code();
  }
  return status::ok;
}

}  // namespace

TEST_CASE("CatBoost's categorical hash: CityHash64 v1.0 vectors of every length class", "[model]") {
  CHECK(h("Female") == 2180403013u);
  CHECK(h("Male") == 3003638534u);
  CHECK(h("0") == 2856682258u);
  CHECK(h("1") == 1121341681u);
  CHECK(static_cast<std::int32_t>(h("777")) == -571044564);
  CHECK(h("?") == 2718302539u);
  CHECK(h("") == 797982799u);
  CHECK(h("a") == 3489901818u);
  CHECK(h("abc") == 978243121u);
  CHECK(h("Married-civ-spouse") == 2275057210u);
  CHECK(h("Married-spouse-absent") == 261588508u);
  CHECK(h("\xD0\x9C\xD0\xBE\xD1\x81\xD0\xBA\xD0\xB2\xD0\xB0") == 3664231542u);  // "Москва"
  const std::string x33(33, 'x'), y64(64, 'y'), z65(65, 'z');
  CHECK(cm::city_hash64(x33.data(), x33.size()) == 9498923847066961975ull);
  CHECK(cm::city_hash64(y64.data(), y64.size()) == 14597941181382302230ull);
  CHECK(cm::city_hash64(z65.data(), z65.size()) == 8897417500330900799ull);
  const std::string fox = "The quick brown fox jumps over the lazy dog";
  CHECK(cm::city_hash64(fox.data(), fox.size()) == 16697807905646383735ull);
  CHECK(cm::cat_hash_int(777) == h("777"));
  CHECK(cm::cat_hash_int(-5) == h("-5"));
  CHECK(cm::cat_hash_int(std::numeric_limits<std::int64_t>::min()) == h("-9223372036854775808"));
}

TEST_CASE("CTR projection hash sign-extends categorical hashes", "[model]") {
  CHECK(single_cat_key(h("Federal-gov")) == 15379737126276794113ull);
  CHECK(single_cat_key(h("?")) == 14256903225472974739ull);
  CHECK(single_cat_key(h("Private")) == 8864790892067322495ull);
  CHECK(single_cat_key(h("Married-spouse-absent")) == 13686716744772876732ull);
  CHECK(single_cat_key(h("Black")) == 619730330622847022ull);
}

TEST_CASE("host evaluator: a hand-built model evaluated by hand", "[model]") {
  const cm::model m = hand_model();
  cm::validate(m);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // row 0: f0 NaN (AsTrue: +inf), c0 "a" (one-hot a, counter 3/(4+1) = 0.6 > 0.4): 4 + 20 + 100 + 0.5
  // row 1: f0 0.1, c0 unseen (no one-hot, counter 0/(4+1)): 1 + 10 + 100 + 0.5
  // row 2: f0 0.7, c0 "b" (one-hot b is not in a tree, counter 1/5 = 0.2): 2 + 10 + 100 + 0.5
  const std::vector<float> floats = {nan, 0.f, 0.1f, 5.f, 0.7f, -3.f};
  const std::vector<std::uint32_t> cats = {h("a"), h("zzz"), h("b")};
  CHECK(predict(m, floats, cats) == std::vector<double>{124.5, 111.5, 112.5});
  // tree ranges: no bias unless the range starts at tree 0
  CHECK(predict(m, floats, cats, cm::prediction_type::raw_formula_val, 1, 2) == std::vector<double>{20, 10, 10});
  CHECK(predict(m, floats, cats, cm::prediction_type::raw_formula_val, 0, 1) == std::vector<double>{4.5, 1.5, 2.5});
  const auto expo = predict(m, floats, cats, cm::prediction_type::exponent, 1, 2);
  CHECK(expo[0] == cm::fast_exp(20.0));  // CatBoost's fast exponent
  cm::host_rows rows{3, floats.data(), 2, cats.data(), 1};
  std::vector<std::uint32_t> leaves(9);
  cm::leaf_indexes_host(m, rows, 0, 3, leaves.data(), leaves.size());
  CHECK(leaves == std::vector<std::uint32_t>{3, 1, 0, 0, 0, 0, 1, 0, 0});
  // NaN with HasNans false stays NaN: every comparison false
  cm::model no_nans = m;
  no_nans.float_features[0].has_nans = false;
  CHECK(predict(no_nans, {nan, 0.f}, {h("zzz")}) == std::vector<double>{111.5});
  // binary classification semantics
  cm::model bin = m;
  bin.info = {{"params", R"({"loss_function":{"type":"Logloss"}})"}, {"class_params", R"({"class_names":[0,1]})"}};
  CHECK(cm::prediction_columns(bin, cm::prediction_type::probability) == 2);
  CHECK(cm::semantics(bin).class_names == std::vector<std::string>{"0", "1"});
  const auto p = predict(bin, {0.f, 0.f}, {h("zzz")}, cm::prediction_type::probability, 0, 1);
  CHECK(p[1] == 1.0 / (1.0 + std::exp(-1.5)));
  CHECK(p[0] == 1.0 - p[1]);
  CHECK(code_of([&] { cm::prediction_columns(bin, cm::prediction_type::rmse_with_uncertainty); }) ==
        status::unsupported);
  CHECK(code_of([&] { predict(m, floats, cats, cm::prediction_type::raw_formula_val, 2, 1); }) ==
        status::invalid_argument);
}

TEST_CASE(".cbm and JSON round trips keep the model", "[model]") {
  const cm::model m = hand_model();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> floats = {nan, 0.f, 0.1f, 5.f, 0.7f, -3.f};
  const std::vector<std::uint32_t> cats = {h("a"), h("zzz"), h("b")};
  const auto expected = predict(m, floats, cats);

  const auto cbm = cm::write_cbm(m);
  REQUIRE(cbm.size() > 8);
  CHECK(std::memcmp(cbm.data(), "CBM1", 4) == 0);
  const cm::model from_cbm = cm::read_cbm(cbm.data(), cbm.size());
  CHECK(predict(from_cbm, floats, cats) == expected);
  CHECK(from_cbm.info == m.info);
  CHECK(from_cbm.leaf_weights == m.leaf_weights);
  CHECK(from_cbm.one_hot_features[0].string_values == m.one_hot_features[0].string_values);
  CHECK(cm::write_cbm(from_cbm) == cbm);  // byte-stable

  const std::string json = cm::write_json(m);
  const cm::model from_json = cm::read_json(json);
  CHECK(predict(from_json, floats, cats) == expected);
  CHECK(from_json.float_features[1].name == "f1");
  CHECK(cm::write_json(from_json) == json);
  // The depth-0 tree is written as CatBoost writes it (and read back above).
  CHECK(json.find("\"splits\": null") != std::string::npos);
  CHECK(json.find("\"splits\": []") == std::string::npos);
  CHECK(predict(cm::read_cbm(cm::write_cbm(from_json).data(), cm::write_cbm(from_json).size()), floats, cats) ==
        expected);
}

TEST_CASE(".cbm reader: truncated, corrupted and oversized input is a clean error", "[model]") {
  const auto good = cm::write_cbm(hand_model());
  // every proper prefix
  for (std::size_t n = 0; n < good.size(); ++n) {
    const status s = code_of([&] { cm::read_cbm(good.data(), n); });
    INFO("prefix " << n);
    CHECK(s == status::format);
  }
  // wrong magic
  auto bad = good;
  bad[3] = '2';
  CHECK(code_of([&] { cm::read_cbm(bad.data(), bad.size()); }) == status::format);
  // huge declared core size (plain and the 0xFFFFFFFF + ui64 form)
  const std::uint8_t huge[] = {'C', 'B', 'M', '1', 0xF0, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0};
  CHECK(code_of([&] { cm::read_cbm(huge, sizeof(huge)); }) == status::format);
  const std::uint8_t huge64[] = {'C',  'B',  'M',  '1',  0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0,    0,    0,    0};
  CHECK(code_of([&] { cm::read_cbm(huge64, sizeof(huge64)); }) == status::format);
  // huge CTR table count after a valid core
  std::uint32_t core_size = 0;
  std::memcpy(&core_size, good.data() + 4, 4);
  bad.assign(good.begin(), good.begin() + 8 + core_size);
  for (int i = 0; i < 4; ++i) bad.push_back(0xFF);
  bad.push_back(0xFF);
  CHECK(code_of([&] { cm::read_cbm(bad.data(), bad.size()); }) == status::format);
  // random single and multi byte corruption: never anything but a clean error or a valid model
  std::mt19937 rng(42);
  const std::vector<float> floats = {0.f, 1.f};
  const std::vector<std::uint32_t> cats = {h("a")};
  for (int iter = 0; iter < 3000; ++iter) {
    bad = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bad[rng() % bad.size()] = static_cast<std::uint8_t>(rng());
    try {
      const cm::model m = cm::read_cbm(bad.data(), bad.size());
      std::vector<float> fl(m.float_features.size(), 0.5f);
      std::vector<std::uint32_t> ca(m.cat_features.size(), h("a"));
      cm::host_rows rows{1, fl.data(), fl.size(), ca.data(), ca.size()};
      std::vector<double> out(m.approx_dimension);
      cm::predict_host(m, rows, cm::prediction_type::raw_formula_val, 0, m.tree_count(), out.data(), out.size());
    } catch (const cbg::error& e) {
      INFO(e.what());
      CHECK((e.code() == status::format || e.code() == status::unsupported));
    }
  }
}

TEST_CASE("JSON reader: wrong shapes are a clean CBG_ERR_FORMAT", "[model]") {
  const std::string good = cm::write_json(hand_model());
  const std::vector<std::string> bad_docs = {
      "",
      "not json",
      "[]",
      "{}",
      "null",
      R"({"features_info": {}})",
      R"({"features_info": {}, "oblivious_trees": 5})",
      R"({"features_info": [], "oblivious_trees": []})",
      R"({"features_info": {"float_features": [{"feature_index": 1e300, "flat_feature_index": 0}]}, "oblivious_trees": []})",
      R"({"features_info": {"float_features": [{"feature_index": 0, "flat_feature_index": 0, "borders": [2, 1]}]}, "oblivious_trees": []})",
      R"({"features_info": {}, "oblivious_trees": [{"splits": [{"split_index": 0}], "leaf_values": [1, 2]}]})",
      R"({"features_info": {}, "oblivious_trees": [{"splits": [], "leaf_values": []}]})",
      R"({"features_info": {}, "oblivious_trees": [{"splits": [], "leaf_values": [1]}], "scale_and_bias": [1]})",
      R"({"features_info": {}, "oblivious_trees": [{"splits": [], "leaf_values": [1]}], "scale_and_bias": [1, [1, 2]]})",
      R"({"features_info": {}, "oblivious_trees": [], "ctr_data": {"x": {}}})",
      R"({"features_info": {"categorical_features": [{"feature_index": 0, "flat_feature_index": 0}]}, "oblivious_trees": [],
          "ctr_data": {"{\"identifier\":[{\"cat_feature_index\":0,\"combination_element\":\"cat_feature_value\"}],\"type\":\"Counter\"}":
             {"counter_denominator": 1, "hash_map": ["12x", 1], "hash_stride": 2}}})",
      std::string(100000, '[') + std::string(100000, ']'),
  };
  for (const auto& doc : bad_docs) {
    INFO(doc.substr(0, 200));
    CHECK(code_of([&] { cm::read_json(doc); }) == status::format);
  }
  CHECK(code_of([&] { cm::read_json(R"({"features_info": {}, "trees": []})"); }) == status::unsupported);
  CHECK(code_of([&] { cm::read_json(R"({"features_info": {"text_features": [{}]}, "oblivious_trees": []})"); }) ==
        status::unsupported);
  // every prefix of a valid document (short of the whole value: the trailing newline is whitespace)
  for (std::size_t n = 0; n + 1 < good.size(); n += 7) {
    INFO("prefix " << n);
    CHECK(code_of([&] { cm::read_json(good.substr(0, n)); }) == status::format);
  }
}

TEST_CASE("model files: IO errors name the file", "[model]") {
  try {
    cm::load_model_file("/nonexistent/dir/model.cbm", cm::file_format::cbm);
    FAIL("no error");
  } catch (const cbg::error& e) {
    CHECK(e.code() == status::io);
    CHECK(std::string(e.what()).find("/nonexistent/dir/model.cbm") != std::string::npos);
  }
  CHECK(code_of([&] { cm::save_model_file(hand_model(), "/nonexistent/dir/m.json", cm::file_format::json); }) ==
        status::io);
}

TEST_CASE("JSON numbers as CatBoost writes them: 17 digits, an exact tie rounded away from zero", "[model]") {
  using cbg::model::json_number_text;
  // Seen in CatBoost's own JSON: the float border -2.77573394775390625 (a tie at the 17th digit).
  CHECK(json_number_text(-2.77573394775390625) == "-2.7757339477539063");
  CHECK(json_number_text(2.77573394775390625) == "2.7757339477539063");
  CHECK(json_number_text(0.5) == "0.5");
  CHECK(json_number_text(0.1) == "0.10000000000000001");
  CHECK(json_number_text(-0.038269989192485809) == "-0.038269989192485809");
  CHECK(json_number_text(1e20) == "1e+20");
  CHECK(json_number_text(2.5e-5) == "2.5000000000000001e-05");
  CHECK(json_number_text(0.0) == "0");
  CHECK(json_number_text(123456.0) == "123456");
  // Every text reads back as the same double, in at most 17 significant digits; without a tie it is printf's.
  std::mt19937_64 rng(11);
  for (int i = 0; i < 20000; ++i) {
    const double d = i % 2 == 0
                         ? static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(rng()) & 0xbfffffffu))
                         : std::bit_cast<double>(rng() & 0xbfefffffffffffffULL);
    if (!std::isfinite(d)) continue;
    const std::string text = json_number_text(d);
    REQUIRE(std::strtod(text.c_str(), nullptr) == d);
    char buf[48];
    std::snprintf(buf, sizeof(buf), "%.17g", d);
    char exact[64];
    std::snprintf(exact, sizeof(exact), "%.40e", d);
    const std::string e(exact + (d < 0 ? 1 : 0));
    const bool maybe_tie = e[18] == '5' && e.find_first_not_of('0', 19) == e.find('e');
    if (!maybe_tie) REQUIRE(text == buf);
  }
}
