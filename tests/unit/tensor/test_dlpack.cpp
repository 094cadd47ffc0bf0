// SPDX-License-Identifier: Apache-2.0
// The DLPack accept/reject matrix, ownership (deleter exactly once) and the read-only flag.
#include <cstdint>
#include <string>
#include <vector>

#include "cbg/core/error.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "cbg/tensor/dlpack_import.hpp"
#include "support/catch.hpp"
#include "support/dlpack_fixtures.hpp"

using cbg::status;
using cbg::test::dl_float;
using cbg::test::dl_int;
using cbg::test::fake_tensor;

namespace {

cbg::import_rules host_rules(int min_rank = 0, int max_rank = 4) {
  return cbg::import_rules{"features", min_rank, max_rank, false, -1};
}

status import_status(const cbg::tensor_ref& ref, const cbg::import_rules& rules) {
  try {
    (void)cbg::import_tensor(ref, rules);
    return status::ok;
  } catch (const cbg::error& e) {
    return e.code();
  }
}

}  // namespace

TEST_CASE("NULL strides mean compact row-major; byte_offset is applied", "[tensor]") {
  std::vector<float> data(12);
  fake_tensor t(data.data(), dl_float(32), {3, 4});
  t.versioned.dl_tensor.byte_offset = 0;
  cbg::tensor_view v = cbg::import_tensor(t.as_versioned(), host_rules());
  CHECK(v.rank == 2);
  CHECK(v.shape[0] == 3);
  CHECK(v.strides[0] == 4);
  CHECK(v.strides[1] == 1);
  CHECK(v.is_row_major_compact());
  CHECK(v.memory == cbg::memory_kind::host);
  CHECK(v.type == cbg::dtype::float32);

  t.versioned.dl_tensor.byte_offset = 8;
  v = cbg::import_tensor(t.as_versioned(), host_rules());
  CHECK(v.data == data.data() + 2);
  CHECK(t.deleter_calls == 0);  // import_tensor alone never takes ownership
}

TEST_CASE("explicit strides are kept (column-major, sliced)", "[tensor]") {
  std::vector<double> data(20);
  fake_tensor f_order(data.data(), dl_float(64), {4, 5}, {1, 4});
  const cbg::tensor_view v = cbg::import_tensor(f_order.as_legacy(), host_rules());
  CHECK(v.strides[0] == 1);
  CHECK(v.strides[1] == 4);
  CHECK_FALSE(v.is_row_major_compact());
}

TEST_CASE("every supported dtype is accepted", "[tensor]") {
  std::vector<std::uint64_t> data(4);
  const std::vector<std::pair<DLDataType, cbg::dtype>> cases = {
      {dl_float(16), cbg::dtype::float16},
      {dl_float(32), cbg::dtype::float32},
      {dl_float(64), cbg::dtype::float64},
      {dl_int(8), cbg::dtype::int8},
      {dl_int(16), cbg::dtype::int16},
      {dl_int(32), cbg::dtype::int32},
      {dl_int(64), cbg::dtype::int64},
      {cbg::test::dl_uint(8), cbg::dtype::uint8},
      {cbg::test::dl_uint(16), cbg::dtype::uint16},
      {cbg::test::dl_uint(32), cbg::dtype::uint32},
      {cbg::test::dl_uint(64), cbg::dtype::uint64},
      {DLDataType{cbg::dlpack::code_bool, 8, 1}, cbg::dtype::boolean}};
  for (const auto& [dl, expected] : cases) {
    fake_tensor t(data.data(), dl, {4});
    CHECK(cbg::import_tensor(t.as_versioned(), host_rules()).type == expected);
  }
}

TEST_CASE("the reject matrix gives a distinct code for each kind of problem", "[tensor]") {
  std::vector<float> data(16);
  SECTION("unsupported dtypes") {
    for (const DLDataType dl :
         {DLDataType{kDLBfloat, 16, 1}, DLDataType{kDLComplex, 64, 1}, DLDataType{kDLFloat, 32, 2},
          DLDataType{kDLFloat, 8, 1}, DLDataType{kDLInt, 4, 1}, DLDataType{kDLOpaqueHandle, 64, 1}}) {
      fake_tensor t(data.data(), dl, {4});
      CHECK(import_status(t.as_versioned(), host_rules()) == status::dtype);
    }
  }
  SECTION("devices") {
    fake_tensor cuda(data.data(), dl_float(32), {4}, {}, DLDevice{kDLCUDA, 0});
    CHECK(import_status(cuda.as_versioned(), host_rules()) == status::device);  // CPU context
    CHECK(import_status(cuda.as_versioned(), cbg::import_rules{"x", 0, 4, false, 0}) == status::ok);
    CHECK(import_status(cuda.as_versioned(), cbg::import_rules{"x", 0, 4, false, 1}) ==
          status::device);  // another GPU than the context's
    fake_tensor managed(data.data(), dl_float(32), {4}, {}, DLDevice{kDLCUDAManaged, 0});
    CHECK(import_status(managed.as_versioned(), host_rules()) == status::device);
    fake_tensor pinned(data.data(), dl_float(32), {4}, {}, DLDevice{kDLCUDAHost, 0});
    CHECK(import_status(pinned.as_versioned(), host_rules()) == status::ok);
    fake_tensor opencl(data.data(), dl_float(32), {4}, {}, DLDevice{kDLOpenCL, 0});
    CHECK(import_status(opencl.as_versioned(), host_rules()) == status::device);
  }
  SECTION("shapes and strides") {
    fake_tensor negative_stride(data.data(), dl_float(32), {4}, {-1});
    CHECK(import_status(negative_stride.as_versioned(), host_rules()) == status::shape);
    fake_tensor negative_extent(data.data(), dl_float(32), {-4});
    CHECK(import_status(negative_extent.as_versioned(), host_rules()) == status::shape);
    fake_tensor rank3(data.data(), dl_float(32), {2, 2, 2});
    CHECK(import_status(rank3.as_versioned(), host_rules(1, 2)) == status::shape);
    fake_tensor misaligned(reinterpret_cast<char*>(data.data()) + 2, dl_float(32), {2});
    CHECK(import_status(misaligned.as_versioned(), host_rules()) == status::shape);
  }
  SECTION("null pointers") {
    fake_tensor null_data(nullptr, dl_float(32), {4});
    CHECK(import_status(null_data.as_versioned(), host_rules()) == status::null_pointer);
    fake_tensor empty(nullptr, dl_float(32), {0});
    CHECK(import_status(empty.as_versioned(), host_rules()) == status::ok);  // zero-size may be NULL
    CHECK(import_status(cbg::tensor_ref{cbg::tensor_ref_kind::dlpack_versioned, nullptr}, host_rules()) ==
          status::null_pointer);
  }
  SECTION("unknown kind") {
    CHECK(import_status(cbg::tensor_ref{static_cast<cbg::tensor_ref_kind>(9), data.data()}, host_rules()) ==
          status::invalid_argument);
  }
  SECTION("version") {
    fake_tensor t(data.data(), dl_float(32), {4});
    t.versioned.version = {2, 0};
    CHECK(import_status(t.as_versioned(), host_rules()) == status::dlpack_version);
    t.versioned.version = {1, 7};  // newer minor: fine
    CHECK(import_status(t.as_versioned(), host_rules()) == status::ok);
  }
}

TEST_CASE("the read-only flag is recorded and refused for outputs", "[tensor]") {
  std::vector<float> data(4);
  fake_tensor t(data.data(), dl_float(32), {4});
  t.versioned.flags = cbg::dlpack::flag_read_only;
  CHECK(cbg::import_tensor(t.as_versioned(), host_rules()).read_only);
  try {
    (void)cbg::import_mutable_tensor(t.as_versioned(), host_rules());
    FAIL("a read-only tensor was accepted as output");
  } catch (const cbg::error& e) {
    CHECK(e.code() == status::read_only);
    CHECK(std::string(e.what()).find("read-only") != std::string::npos);
  }
  t.versioned.flags = 0;
  CHECK(cbg::import_mutable_tensor(t.as_versioned(), host_rules()).data == data.data());
}

TEST_CASE("dlpack_owner calls the deleter exactly once", "[tensor]") {
  std::vector<float> data(4);
  fake_tensor versioned(data.data(), dl_float(32), {4});
  fake_tensor legacy(data.data(), dl_float(32), {4});
  fake_tensor borrowed(data.data(), dl_float(32), {4});
  {
    cbg::dlpack_owner a(versioned.as_versioned());
    cbg::dlpack_owner b(legacy.as_legacy());
    cbg::dlpack_owner c(borrowed.as_borrowed());
    CHECK(a.owns());
    CHECK_FALSE(c.owns());
    cbg::dlpack_owner moved(std::move(a));
    CHECK_FALSE(a.owns());
    moved.reset();
    CHECK(versioned.deleter_calls == 1);
  }
  CHECK(versioned.deleter_calls == 1);
  CHECK(legacy.deleter_calls == 1);
  CHECK(borrowed.deleter_calls == 0);

  fake_tensor wrong_version(data.data(), dl_float(32), {4});
  wrong_version.versioned.version = {3, 1};
  { cbg::dlpack_owner owner(wrong_version.as_versioned()); }
  CHECK(wrong_version.deleter_calls == 1);  // even a refused version is released

  fake_tensor released(data.data(), dl_float(32), {4});
  {
    cbg::dlpack_owner owner(released.as_versioned());
    owner.release();
  }
  CHECK(released.deleter_calls == 0);
}

TEST_CASE("dlpack::type_of gives the DLPack type that imports as the same dtype", "[tensor]") {
  using cbg::dtype;
  for (const dtype t : {dtype::float16, dtype::float32, dtype::float64, dtype::int8, dtype::int16, dtype::int32,
                        dtype::int64, dtype::uint8, dtype::uint16, dtype::uint32, dtype::uint64, dtype::boolean}) {
    INFO(cbg::name_of(t));
    std::vector<std::uint64_t> data(4);
    const DLDataType d = cbg::dlpack::type_of(t);
    CHECK(d.lanes == 1);
    CHECK(d.bits == cbg::size_of(t) * 8);
    fake_tensor f(data.data(), d, {4});
    CHECK(cbg::import_tensor(f.as_versioned(), host_rules()).type == t);
  }
  CHECK(cbg::dlpack::type_of(dtype::float32).code == kDLFloat);
  CHECK(cbg::dlpack::type_of(dtype::int64).code == kDLInt);
  CHECK(cbg::dlpack::type_of(dtype::uint16).code == kDLUInt);
  CHECK(cbg::dlpack::type_of(dtype::boolean).code == cbg::dlpack::code_bool);
}
