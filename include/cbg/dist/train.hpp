// SPDX-License-Identifier: Apache-2.0
// Sharded training behind the boosting backend interface (src/dist/sharded_backend.cpp):
//  * `devices` naming several GPUs (or one other than the pool's): one process, one rank per
//    device, NCCL communicators of our own; the learn set is quantized once on the pool's device
//    and its bins, labels, weights and baselines are copied device to device to the ranks (rows in
//    blocks of a multiple of 4096); the eval set likewise. The trainer's loop runs once; every
//    backend call runs on all ranks at once (a thread per rank) and they agree through NCCL.
//  * a context given a caller's communicator (several processes, one GPU each): this process's
//    pool is its rank's rows; the features are gathered from every rank for the borders (so they
//    are the whole set's), then each rank keeps its rows' bins.
#pragma once

#include <memory>
#include <optional>

#include "cbg/dist/dist.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/boosting.hpp"

namespace cbg::dist {

// Whether these inputs train on more than the pool's own device (parses in.devices).
bool wants_sharding(const train::backend_inputs& in);
std::unique_ptr<train::boosting_backend> make_sharded_backend(const train::backend_inputs& in);

// A caller's communicator attached to a context (the C ABI's context descriptor sets it). The
// attachment lives as long as the context.
void attach_communicator(const std::shared_ptr<context>& ctx, const communicator& c);
std::optional<communicator> communicator_of(const context& ctx);

}  // namespace cbg::dist
