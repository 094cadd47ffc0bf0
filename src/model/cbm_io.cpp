// SPDX-License-Identifier: Apache-2.0
// The binary .cbm format (catboost-model-format.md §2): "CBM1", ui32 core size, the core
// flatbuffer (root TModelCore), then the model parts named in ModelPartIds. The only part cbgpu
// reads is "static_provider_v1": ui32 table count, then per table a ui32 size and a flatbuffer
// whose root is TCtrValueTable.
#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "cbg/core/error.hpp"
#include "cbg/model/io.hpp"
#include "cbm_generated.h"  // flatc output: build tree, or the checked-in copy

namespace cbg::model {

namespace {

namespace fb = cbg::fbs;

[[noreturn]] void malformed(const std::string& what) { CBG_FAIL(status::format, "malformed .cbm: " + what); }
[[noreturn]] void unsupported(const std::string& what) {
  CBG_FAIL(status::unsupported, "unsupported CatBoost model: " + what);
}

std::uint32_t le32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) | (std::uint32_t{p[3]} << 24);
}
std::uint64_t le64(const std::uint8_t* p) { return std::uint64_t{le32(p)} | (std::uint64_t{le32(p + 4)} << 32); }
void put32(std::vector<std::uint8_t>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
}
void put64(std::vector<std::uint8_t>& out, std::uint64_t v) {
  put32(out, static_cast<std::uint32_t>(v));
  put32(out, static_cast<std::uint32_t>(v >> 32));
}

// Flatbuffers read scalars in place: keep each buffer 8-byte aligned (doubles) by copying it.
struct aligned_bytes {
  std::vector<std::uint64_t> words;
  std::size_t size = 0;
  aligned_bytes(const std::uint8_t* p, std::size_t n) : words((n + 7) / 8), size(n) {
    if (n != 0) std::memcpy(words.data(), p, n);
  }
  [[nodiscard]] const std::uint8_t* data() const { return reinterpret_cast<const std::uint8_t*>(words.data()); }
};

// A bounded cursor over the file.
struct reader {
  const std::uint8_t* p;
  std::size_t size;
  std::size_t pos = 0;
  [[nodiscard]] std::size_t left() const { return size - pos; }
  std::uint32_t u32(const char* what) {
    if (left() < 4) malformed(fmt::format("truncated at byte {} (reading {})", pos, what));
    const std::uint32_t v = le32(p + pos);
    pos += 4;
    return v;
  }
  // Arcadia SaveSize: ui32, or 0xFFFFFFFF followed by a ui64.
  std::uint64_t size_prefix(const char* what) {
    const std::uint32_t v = u32(what);
    if (v != 0xFFFFFFFFu) return v;
    if (left() < 8) malformed(fmt::format("truncated at byte {} (reading {})", pos, what));
    const std::uint64_t big = le64(p + pos);
    pos += 8;
    return big;
  }
};

float canonical(float v) { return v == 0.f ? 0.f : v; }  // -0 -> +0, as CatBoost does for CTR floats

// Copies a scalar vector bytewise: the verifier checks a vector's 4-byte length alignment only, so
// the doubles of a crafted buffer may sit at an address that is not 8-aligned.
template <class T>
std::vector<T> vec(const flatbuffers::Vector<T>* v) {
  if (v == nullptr) return {};
  std::vector<T> out(v->size());
  if (!out.empty()) std::memcpy(out.data(), v->Data(), out.size() * sizeof(T));
  return out;  // little-endian hosts only (as flatbuffers' own scalar reads)
}
std::string str(const flatbuffers::String* s) { return s == nullptr ? std::string{} : s->str(); }

projection read_projection(const fb::TFeatureCombination* c) {
  projection p;
  if (c == nullptr) return p;
  p.cat_features = vec(c->CatFeatures());
  if (const auto* fs = c->FloatSplits())
    for (const fb::TFloatSplit* s : *fs) p.float_splits.push_back({s->Index(), canonical(s->Border())});
  if (const auto* os = c->OneHotSplits())
    for (const fb::TOneHotSplit* s : *os) p.one_hot_splits.push_back({s->Index(), s->Value()});
  return p;
}

ctr_base read_base(const fb::TModelCtrBase* b, const char* where) {
  if (b == nullptr) malformed(std::string(where) + " without a CTR base");
  ctr_base out;
  out.proj = read_projection(b->FeatureCombination());
  const auto t = static_cast<int>(b->CtrType());
  if (t < 0 || t >= ctr_type_count) malformed(fmt::format("{} has unknown CTR type {}", where, t));
  out.type = static_cast<ctr_type>(t);
  out.target_border_classifier_idx = b->TargetBorderClassifierIdx();
  return out;
}

ctr_table read_ctr_table(const std::uint8_t* p, std::size_t n, std::size_t which) {
  const aligned_bytes buf(p, n);
  flatbuffers::Verifier verifier(buf.data(), buf.size, 64, 1000000);
  if (!verifier.VerifyBuffer<fb::TCtrValueTable>(nullptr))
    malformed(fmt::format("CTR table {} failed flatbuffers verification", which));
  const auto* t = flatbuffers::GetRoot<fb::TCtrValueTable>(buf.data());
  ctr_table out;
  out.base = read_base(t->ModelCtrBase(), "a CTR table");
  out.counter_denominator = t->CounterDenominator();
  out.target_classes_count = t->TargetClassesCount();
  const auto* raw = t->IndexHashRaw();
  const std::size_t raw_size = raw == nullptr ? 0 : raw->size();
  if (raw_size % 12 != 0)
    malformed(fmt::format("CTR table {}: hash index of {} bytes is not 12-byte buckets", which, raw_size));
  const std::size_t buckets = raw_size / 12;
  out.bucket_hashes.resize(buckets);
  out.bucket_indices.resize(buckets);
  for (std::size_t b = 0; b < buckets; ++b) {
    out.bucket_hashes[b] = le64(raw->data() + 12 * b);
    out.bucket_indices[b] = le32(raw->data() + 12 * b + 8);
  }
  const auto* blob = t->CTRBlob();
  const std::size_t blob_size = blob == nullptr ? 0 : blob->size();
  const bool mean =
      out.base.type == ctr_type::binarized_target_mean_value || out.base.type == ctr_type::float_target_mean_value;
  if (blob_size % (mean ? 8 : 4) != 0) malformed(fmt::format("CTR table {}: blob of {} bytes", which, blob_size));
  if (mean) {
    out.means.resize(blob_size / 8);
    for (std::size_t i = 0; i < out.means.size(); ++i) {
      std::uint32_t bits = le32(blob->data() + 8 * i);
      std::memcpy(&out.means[i].sum, &bits, 4);
      out.means[i].count = static_cast<std::int32_t>(le32(blob->data() + 8 * i + 4));
    }
  } else {
    out.counts.resize(blob_size / 4);
    for (std::size_t i = 0; i < out.counts.size(); ++i)
      out.counts[i] = static_cast<std::int32_t>(le32(blob->data() + 4 * i));
  }
  return out;
}

// ---- writing -----------------------------------------------------------------------------------

flatbuffers::Offset<fb::TModelCtrBase> write_base(flatbuffers::FlatBufferBuilder& b, const ctr_base& base) {
  std::vector<fb::TFloatSplit> fs;
  for (const auto& s : base.proj.float_splits) fs.emplace_back(s.float_index, s.border);
  std::vector<fb::TOneHotSplit> os;
  for (const auto& s : base.proj.one_hot_splits) os.emplace_back(s.cat_index, s.value);
  const auto comb = fb::CreateTFeatureCombination(b, b.CreateVector(base.proj.cat_features),
                                                  b.CreateVectorOfStructs(fs), b.CreateVectorOfStructs(os));
  return fb::CreateTModelCtrBase(b, comb, static_cast<fb::ECtrType>(base.type), base.target_border_classifier_idx);
}

std::vector<std::uint8_t> write_ctr_table(const ctr_table& t) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<std::uint8_t> raw;
  raw.reserve(12 * t.bucket_hashes.size());
  for (std::size_t i = 0; i < t.bucket_hashes.size(); ++i) {
    put64(raw, t.bucket_hashes[i]);
    put32(raw, t.bucket_indices[i]);
  }
  std::vector<std::uint8_t> blob;
  for (const auto& m : t.means) {
    std::uint32_t bits = 0;
    std::memcpy(&bits, &m.sum, 4);
    put32(blob, bits);
    put32(blob, static_cast<std::uint32_t>(m.count));
  }
  for (std::int32_t c : t.counts) put32(blob, static_cast<std::uint32_t>(c));
  const auto base = write_base(b, t.base);
  const auto raw_off = b.CreateVector(raw);
  const auto blob_off = b.CreateVector(blob);
  b.Finish(fb::CreateTCtrValueTable(b, base, raw_off, blob_off, t.counter_denominator, t.target_classes_count));
  return {b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize()};
}

// One TRepackedBin per tree split (catboost-model-format.md §2.8); CatBoost recomputes them on
// load, but writes them, so we do too.
std::vector<fb::TRepackedBin> repacked_bins(const model& m) {
  const auto features = binary_features(m);
  std::vector<fb::TRepackedBin> per_binary;
  per_binary.reserve(features.size());
  std::size_t bucket_base = 0;
  auto groups = [](std::size_t n) { return (n + 253) / 254; };
  auto add_group = [&](std::size_t n, bool one_hot) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t bucket = bucket_base + j / 254;
      if (bucket > 0xFFFF) unsupported("more than 65536 byte-buckets of binary features");
      const auto split_idx = static_cast<std::uint8_t>(j % 254 + 1);
      if (one_hot)
        per_binary.emplace_back(static_cast<std::uint16_t>(bucket), static_cast<std::uint8_t>(~split_idx), 0xFF);
      else
        per_binary.emplace_back(static_cast<std::uint16_t>(bucket), 0, split_idx);
    }
    bucket_base += groups(n);
  };
  for (const auto& f : m.float_features) add_group(f.borders.size(), false);
  for (const auto& f : m.one_hot_features) add_group(f.values.size(), true);
  for (const auto& f : m.ctr_features) add_group(f.borders.size(), false);
  std::vector<fb::TRepackedBin> out;
  out.reserve(m.tree_splits.size());
  for (std::int32_t s : m.tree_splits) out.push_back(per_binary.at(static_cast<std::size_t>(s)));
  return out;
}

}  // namespace

model read_cbm(const void* data, std::size_t size) {
  CBG_EXPECTS(data != nullptr || size == 0, status::null_pointer, "model bytes are NULL");
  reader in{static_cast<const std::uint8_t*>(data), size};
  if (size < 4 || std::memcmp(in.p, "CBM1", 4) != 0) malformed("missing the CBM1 magic");
  in.pos = 4;
  const std::uint64_t core_size = in.size_prefix("the core size");
  if (core_size > in.left())
    malformed(fmt::format("core flatbuffer of {} bytes declared, {} present", core_size, in.left()));
  const aligned_bytes core_buf(in.p + in.pos, static_cast<std::size_t>(core_size));
  in.pos += static_cast<std::size_t>(core_size);

  flatbuffers::Verifier verifier(core_buf.data(), core_buf.size, 64, 256000000);
  if (!fb::VerifyTModelCoreBuffer(verifier)) malformed("core flatbuffer failed verification");
  const fb::TModelCore* core = fb::GetTModelCore(core_buf.data());
  if (core->FormatVersion() == nullptr || core->FormatVersion()->string_view() != cbm_format_version)
    malformed(fmt::format("format version '{}' (expected '{}')", str(core->FormatVersion()), cbm_format_version));
  const fb::TModelTrees* trees = core->ModelTrees();
  if (trees == nullptr) malformed("no ModelTrees");

  if ((trees->NonSymmetricStepNodes() != nullptr && trees->NonSymmetricStepNodes()->size() != 0) ||
      (trees->NonSymmetricNodeIdToLeafId() != nullptr && trees->NonSymmetricNodeIdToLeafId()->size() != 0))
    unsupported("non-symmetric trees (grow_policy Depthwise/Lossguide); only oblivious trees are supported");
  if (trees->TextFeatures() != nullptr && trees->TextFeatures()->size() != 0) unsupported("text features");
  if (trees->EmbeddingFeatures() != nullptr && trees->EmbeddingFeatures()->size() != 0)
    unsupported("embedding features");
  if (trees->EstimatedFeatures() != nullptr && trees->EstimatedFeatures()->size() != 0)
    unsupported("estimated features (from text or embeddings)");

  model m;
  m.approx_dimension = trees->ApproxDimension();
  // Checked before the bias is sized from it (validate() checks the rest).
  if (m.approx_dimension < 1 || m.approx_dimension > max_approx_dimension)
    malformed(fmt::format("approx dimension {} out of range 1..{}", m.approx_dimension, max_approx_dimension));
  m.tree_splits = vec(trees->TreeSplits());
  m.tree_sizes = vec(trees->TreeSizes());
  m.tree_start_offsets = vec(trees->TreeStartOffsets());
  m.leaf_values = vec(trees->LeafValues());
  m.leaf_weights = vec(trees->LeafWeights());
  if (const auto* v = trees->FloatFeatures()) {
    for (const fb::TFloatFeature* f : *v) {
      float_feature out;
      out.has_nans = f->HasNans();
      out.index = f->Index();
      out.flat_index = f->FlatIndex();
      out.borders = vec(f->Borders());
      out.name = str(f->FeatureId());
      const auto t = static_cast<int>(f->NanValueTreatment());
      if (t < 0 || t > 2) malformed(fmt::format("float feature {}: NaN treatment {}", out.index, t));
      out.nan_value_treatment = static_cast<nan_treatment>(t);
      m.float_features.push_back(std::move(out));
    }
  }
  if (const auto* v = trees->CatFeatures()) {
    for (const fb::TCatFeature* f : *v)
      m.cat_features.push_back({f->Index(), f->FlatIndex(), str(f->FeatureId()), f->UsedInModel()});
  }
  if (const auto* v = trees->OneHotFeatures()) {
    for (const fb::TOneHotFeature* f : *v) {
      one_hot_feature out;
      out.cat_index = f->Index();
      out.values = vec(f->Values());
      if (const auto* sv = f->StringValues())
        for (const flatbuffers::String* s : *sv) out.string_values.push_back(str(s));
      m.one_hot_features.push_back(std::move(out));
    }
  }
  if (const auto* v = trees->CtrFeatures()) {
    for (const fb::TCtrFeature* f : *v) {
      const fb::TModelCtr* c = f->Ctr();
      if (c == nullptr) malformed("a CTR feature without its CTR");
      ctr_feature out;
      out.ctr.base = read_base(c->Base(), "a CTR feature");
      out.ctr.target_border_idx = c->TargetBorderIdx();
      out.ctr.prior_num = canonical(c->PriorNum());
      out.ctr.prior_denom = canonical(c->PriorDenom());
      out.ctr.shift = canonical(c->Shift());
      out.ctr.scale = canonical(c->Scale());
      out.borders = vec(f->Borders());
      m.ctr_features.push_back(std::move(out));
    }
  }
  m.scale = trees->Scale();
  if (trees->MultiBias() != nullptr && trees->MultiBias()->size() != 0) {
    m.bias = vec(trees->MultiBias());
  } else {
    if (m.approx_dimension != 1 && trees->Bias() != 0.0) malformed("a scalar Bias with approx dimension > 1");
    m.bias.assign(static_cast<std::size_t>(std::max(m.approx_dimension, 1)), trees->Bias());
  }
  if (const auto* info = core->InfoMap())
    for (const fb::TKeyValue* kv : *info) m.info.emplace_back(str(kv->Key()), str(kv->Value()));

  if (const auto* parts = core->ModelPartIds()) {
    for (const flatbuffers::String* id : *parts) {
      if (id->string_view() != cbm_ctr_part_id)
        unsupported(fmt::format("model part '{}' (text or embedding processing); only '{}' is supported", id->str(),
                                cbm_ctr_part_id));
      const std::uint64_t count = in.size_prefix("the CTR table count");
      if (count > in.left() / 4) malformed(fmt::format("{} CTR tables declared in {} bytes", count, in.left()));
      for (std::uint64_t i = 0; i < count; ++i) {
        const std::uint64_t n = in.size_prefix("a CTR table size");
        if (n > in.left()) malformed(fmt::format("CTR table {} of {} bytes declared, {} present", i, n, in.left()));
        m.ctr_tables.push_back(read_ctr_table(in.p + in.pos, static_cast<std::size_t>(n), i));
        in.pos += static_cast<std::size_t>(n);
      }
    }
  }
  validate(m);
  return m;
}

std::vector<std::uint8_t> write_cbm(const model& m) {
  validate(m);
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::TFloatFeature>> floats;
  for (const auto& f : m.float_features) {
    floats.push_back(fb::CreateTFloatFeature(b, f.has_nans, f.index, f.flat_index, b.CreateVector(f.borders),
                                             f.name.empty() ? 0 : b.CreateString(f.name),
                                             static_cast<fb::ENanValueTreatment>(f.nan_value_treatment)));
  }
  std::vector<flatbuffers::Offset<fb::TCatFeature>> cats;
  for (const auto& f : m.cat_features)
    cats.push_back(
        fb::CreateTCatFeature(b, f.index, f.flat_index, f.name.empty() ? 0 : b.CreateString(f.name), f.used_in_model));
  std::vector<flatbuffers::Offset<fb::TOneHotFeature>> one_hots;
  for (const auto& f : m.one_hot_features) {
    flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> sv = 0;
    if (!f.string_values.empty()) sv = b.CreateVectorOfStrings(f.string_values);
    one_hots.push_back(fb::CreateTOneHotFeature(b, f.cat_index, b.CreateVector(f.values), sv));
  }
  std::vector<flatbuffers::Offset<fb::TCtrFeature>> ctrs;
  for (const auto& f : m.ctr_features) {
    const auto base = write_base(b, f.ctr.base);
    const auto ctr = fb::CreateTModelCtr(b, base, f.ctr.target_border_idx, canonical(f.ctr.prior_num),
                                         canonical(f.ctr.prior_denom), canonical(f.ctr.shift), canonical(f.ctr.scale));
    ctrs.push_back(fb::CreateTCtrFeature(b, ctr, b.CreateVector(f.borders)));
  }
  const auto bins = repacked_bins(m);
  const auto trees = fb::CreateTModelTrees(
      b, m.approx_dimension, b.CreateVector(m.tree_splits), b.CreateVector(m.tree_sizes),
      b.CreateVector(m.tree_start_offsets), b.CreateVector(cats), b.CreateVector(floats), b.CreateVector(one_hots),
      b.CreateVector(ctrs), b.CreateVector(m.leaf_values), b.CreateVector(m.leaf_weights), 0, 0,
      b.CreateVector(std::vector<flatbuffers::Offset<fb::TTextFeature>>{}), 0, m.scale, 0.0, b.CreateVector(m.bias),
      b.CreateVectorOfStructs(bins), b.CreateVector(std::vector<flatbuffers::Offset<fb::TEmbeddingFeature>>{}));
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TKeyValue>>> info = 0;
  if (!m.info.empty()) {
    std::vector<flatbuffers::Offset<fb::TKeyValue>> kvs;
    for (const auto& [k, v] : m.info) kvs.push_back(fb::CreateTKeyValue(b, b.CreateString(k), b.CreateString(v)));
    info = b.CreateVector(kvs);
  }
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> parts = 0;
  if (!m.ctr_tables.empty()) parts = b.CreateVectorOfStrings(std::vector<std::string>{std::string(cbm_ctr_part_id)});
  const auto version = b.CreateString(cbm_format_version.data(), cbm_format_version.size());
  b.Finish(fb::CreateTModelCore(b, version, trees, info, parts));

  std::vector<std::uint8_t> out{'C', 'B', 'M', '1'};
  if (b.GetSize() >= 0xFFFFFFFFu) unsupported("a core flatbuffer of 4 GiB or more");
  put32(out, static_cast<std::uint32_t>(b.GetSize()));
  out.insert(out.end(), b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
  if (!m.ctr_tables.empty()) {
    // Tables sorted by their base, as current CatBoost writes them.
    std::vector<std::size_t> order(m.ctr_tables.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(),
              [&](std::size_t a, std::size_t c) { return m.ctr_tables[a].base < m.ctr_tables[c].base; });
    put32(out, static_cast<std::uint32_t>(m.ctr_tables.size()));
    for (std::size_t i : order) {
      const auto table = write_ctr_table(m.ctr_tables[i]);
      put32(out, static_cast<std::uint32_t>(table.size()));
      out.insert(out.end(), table.begin(), table.end());
    }
  }
  return out;
}

}  // namespace cbg::model
