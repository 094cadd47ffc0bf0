// SPDX-License-Identifier: Apache-2.0
// Training entry points.
#include <fmt/format.h>

#include "cbg/runtime/device.hpp"
#include "cbg/train/trainer.hpp"
#include "desc.hpp"
#include "guard.hpp"
#include "handles.hpp"

namespace {

using namespace cbg::capi;

cbg::train::progress_callback wrap(const cbg_train_callbacks_t& c) {
  if (c.on_iteration == nullptr) return {};
  return [fn = c.on_iteration, user = c.user_data](const cbg::train::progress& p) {
    cbg_train_progress_t out{};
    out.struct_size = sizeof(cbg_train_progress_t);
    out.iteration = p.iteration;
    out.iterations = p.iterations;
    out.metric = p.metric.c_str();
    out.has_learn_metric = p.has_learn ? 1 : 0;
    out.has_eval_metric = p.has_eval ? 1 : 0;
    out.learn_metric = p.learn;
    out.eval_metric = p.eval;
    out.best_eval_metric = p.best_eval;
    out.best_iteration = p.best_iteration;
    out.elapsed_seconds = p.elapsed_s;
    out.remaining_seconds = p.remaining_s;
    return fn(user, &out) == 0;
  };
}

}  // namespace

extern "C" {

CBG_API cbg_status cbg_train_callbacks_init(cbg_train_callbacks_t* callbacks) {
  return guarded(__func__, [&] {
    require(callbacks, "callbacks");
    init_desc(*callbacks);
  });
}

CBG_API cbg_status cbg_train(cbg_pool_t* pool, const char* params_json, cbg_pool_t* eval_pool,
                             const cbg_train_callbacks_t* callbacks, cbg_model_t** out) {
  return guarded(__func__, [&] {
    require(out, "out");
    *out = nullptr;
    const cbg::pool& learn = checked(pool, "pool").impl;
    cbg::train::train_options options;
    if (eval_pool != nullptr) options.eval = &checked(eval_pool, "eval_pool").impl;
    if (callbacks != nullptr) {
      cbg_train_callbacks_t c{};
      read_desc(*callbacks, c, sizeof(cbg_train_callbacks_t), "cbg_train_callbacks_t");
      options.on_iteration = wrap(c);
    }
    const cbg::context& ctx = *learn.ctx();
    cbg::scoped_device guard(ctx.device());  // no-op for the CPU path
    // The context's pool keeps the memory a training frees for its reuse; what is left goes back to
    // the device when the training ends, however it ends.
    struct release_after {
      const cbg::context& ctx;
      ~release_after() {
        if (ctx.memory() != nullptr) ctx.memory()->release_unused();
      }
    } release{ctx};
    const cbg::train::train_params params =
        cbg::train::parse_params(params_json == nullptr ? std::string() : std::string(params_json));
    cbg::model::model m = cbg::train::train(learn, params, options);
    publish(out, std::move(m));
  });
}

}  // extern "C"
