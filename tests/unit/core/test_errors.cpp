// SPDX-License-Identifier: Apache-2.0
#include <cuda_runtime_api.h>

#include <string>

#include "cbg/core/cuda_check.hpp"
#include "cbg/core/error.hpp"
#include "cbg/core/status.hpp"
#include "support/catch.hpp"

using cbg::status;

TEST_CASE("every status code has a distinct description naming its C constant", "[core]") {
  std::string previous;
  for (int code = 0; code <= static_cast<int>(status::internal); ++code) {
    const std::string_view text = cbg::describe(static_cast<status>(code));
    CHECK(text.substr(0, 4) == "CBG_");
    CHECK(text != previous);
    previous = std::string(text);
  }
  CHECK(cbg::describe(static_cast<status>(1000)) == "unknown status code");
}

TEST_CASE("CBG_EXPECTS throws the given code with the message, without a source location", "[core]") {
  try {
    CBG_EXPECTS(1 + 1 == 3, status::shape, std::string("the label has 3 rows"));
    FAIL("CBG_EXPECTS did not throw");
  } catch (const cbg::error& e) {
    CHECK(e.code() == status::shape);
    const std::string what = e.what();
    CHECK(what == "the label has 3 rows");  // users read it: no file or line of ours
  }
  CHECK_NOTHROW([] { CBG_EXPECTS(true, status::shape, std::string("never")); }());
}

TEST_CASE("CUDA errors map to out_of_memory, no_device and cuda codes", "[core]") {
  try {
    CBG_CUDA_TRY(cudaErrorMemoryAllocation);
    FAIL("no throw");
  } catch (const cbg::out_of_memory& e) {
    CHECK(e.code() == status::out_of_memory);
    CHECK(std::string(e.what()).find("cudaErrorMemoryAllocation") != std::string::npos);
  }
  try {
    CBG_CUDA_TRY(cudaErrorNoDevice);
    FAIL("no throw");
  } catch (const cbg::cuda_error& e) {
    CHECK(e.code() == status::no_device);
    CHECK(e.cuda_code() == static_cast<int>(cudaErrorNoDevice));
  }
  try {
    CBG_CUDA_TRY(cudaErrorInvalidValue);
    FAIL("no throw");
  } catch (const cbg::cuda_error& e) {
    CHECK(e.code() == status::cuda);  // not sticky: the context stays usable
    CHECK(std::string(e.what()).find("cudaErrorInvalidValue") != std::string::npos);
  }
}
