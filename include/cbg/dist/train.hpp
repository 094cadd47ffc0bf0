// SPDX-License-Identifier: Apache-2.0
// Sharded training behind the boosting backend interface (src/dist/sharded_backend.cpp):
//  * `devices` naming several GPUs (or one other than the pool's): one process, one rank per
//    device, NCCL communicators of our own; the learn set is quantized once on the pool's device
//    and its bins, labels, weights and baselines are copied device to device to the ranks (rows in
//    blocks of a multiple of 4096); the eval set likewise. The trainer's loop runs once; every
//    backend call runs on all ranks at once (a thread per rank) and they agree through NCCL. A
//    search extension (feature combinations) stays on the pool's device over all learn rows; each
//    rank's search reads its rows of the extension's columns (src/dist/sharded_extension.hpp).
//  * a context with a communicator (the caller's, or one the library made from a unique id; several
//    processes, one GPU each): this process's pool is its rank's rows; the border sample of the
//    whole set is gathered from the ranks that hold it (border_sample.hpp), so the borders are the
//    whole set's, and each rank keeps its rows' bins. With categorical features every rank has
//    computed the CTR columns and any search extension over every rank's rows (src/dist/all_rows.hpp)
//    and passes its rows: the extension given is this rank's already.
#pragma once

#include <memory>
#include <optional>

#include "cbg/dist/dist.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::train {
class search_extension;  // search_extension.hpp
}

namespace cbg::dist {

// Whether these inputs train on more than the pool's own device (parses in.devices).
bool wants_sharding(const train::backend_inputs& in);
// `extension` (null: none) must outlive the backend.
std::unique_ptr<train::boosting_backend> make_sharded_backend(const train::backend_inputs& in,
                                                              train::search_extension* extension = nullptr);

// A communicator attached to a context (the C ABI's context descriptor sets it: the caller's, or
// one made from a unique id). The attachment lives as long as the context.
void attach_communicator(const std::shared_ptr<context>& ctx, const communicator& c);
std::optional<communicator> communicator_of(const context& ctx);

}  // namespace cbg::dist
