// SPDX-License-Identifier: Apache-2.0
// cbg_version_number, cbg_version_string, cbg_build_info, cbg_device_count.
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <string>

#include <cuda/std/version>
#include <nlohmann/json.hpp>

#include "cbg/memory/copy.hpp"
#include "cbg/runtime/device.hpp"
#include "cbg/dist/dist.hpp"
#include "cbg/tensor/dlpack.hpp"
#include "guard.hpp"

#ifndef CBG_GIT_SHA
#define CBG_GIT_SHA "unknown"
#endif
#ifndef CBG_BUILD_TYPE
#define CBG_BUILD_TYPE "unknown"
#endif
#ifndef CBG_CUDA_ARCHITECTURES
#define CBG_CUDA_ARCHITECTURES "unknown"
#endif

namespace {

std::string make_build_info() {
  int runtime = 0, driver = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  nlohmann::json j;
  j["version"] = CBG_VERSION_STRING;
  j["git_sha"] = CBG_GIT_SHA;
  j["build_type"] = CBG_BUILD_TYPE;
  j["cuda_runtime_version"] = runtime;
  j["cuda_driver_version"] = driver;
  j["cuda_architectures"] = CBG_CUDA_ARCHITECTURES;
  j["cccl_version"] = CCCL_VERSION;
  j["dlpack_version"] = cbg::dlpack::header_version();
  j["compiler"] = std::string("gcc ") + __VERSION__;
  j["device_count"] = cbg::visible_device_count();
  j["strict_no_d2h_env"] = cbg::strict_no_d2h_from_environment();
  std::string nccl_missing;  // multi-GPU (issue 9): NCCL is loaded at run time
  j["nccl"] = cbg::dist::nccl_available(&nccl_missing) ? std::string("available") : nccl_missing;
  return j.dump();
}

}  // namespace

extern "C" {

CBG_API uint32_t cbg_version_number(void) { return CBG_VERSION_NUMBER; }

CBG_API const char* cbg_version_string(void) { return CBG_VERSION_STRING; }

CBG_API cbg_status cbg_build_info(const char** json) {
  return cbg::capi::guarded(__func__, [&] {
    cbg::capi::require(json, "json");
    static const std::string info = make_build_info();  // thread-safe one-time initialisation
    *json = info.c_str();
  });
}

CBG_API cbg_status cbg_device_count(int32_t* count) {
  return cbg::capi::guarded(__func__, [&] {
    cbg::capi::require(count, "count");
    *count = cbg::visible_device_count();
  });
}

}  // extern "C"
