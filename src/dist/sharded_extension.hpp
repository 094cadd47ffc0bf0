// SPDX-License-Identifier: Apache-2.0
// The search extension (feature combinations, search_extension.hpp) in a one-process sharded
// training (sharded_backend.cpp). The trainer's extension works on the pool's device over all learn
// rows, exactly as on one GPU: ordered CTR values depend on every row in permutation order, so the
// candidate columns, their borders, the committed tables and the eval values are the single-GPU ones.
// Each rank's search gets a view of it. The ranks make the same calls in the same order (they reduce
// the same histograms); a call is computed once, on the pool's device, when every rank has made it
// (rank_calls.hpp: a rendezvous), so that whatever the computation waits for on the host (read-backs,
// syncs, kernel loads) never waits for a collective that some rank has not queued yet. Right after
// it each rank enqueues the copies of its rows of the columns (and, at a commit, of the eval values),
// gathered on the pool's device and copied device to device, and waits for none of them. The rank's
// search all-reduces the columns' histograms (tree_search_device.cpp), so the split, the leaf
// indices and the model are the single-GPU ones byte for byte. docs/multi-gpu.md explains why this
// cannot deadlock.
//
// Memory: the pool's device holds what one GPU holds for the combinations (the projections' cache
// over all rows); each rank holds its rows of the level's columns and of the committed eval values
// (from its context's pool). The bytes cross between the devices through two 16 MiB blocks of peer
// memory per rank, one on each side, made with the views: during the training the ranks' threads
// allocate only from the contexts' stream-ordered pools, since a cudaMalloc or cudaFree could wait for
// a device whose collective waits for the allocating thread. Internal.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cbg/dist/dist.hpp"
#include "cbg/runtime/context.hpp"
#include "cbg/train/search_extension.hpp"

namespace cbg::dist {

class sharded_extension {
 public:
  // `base`: the trainer's extension, on `base_ctx`'s device and stream (the learn pool's context);
  // `learn`/`eval`: the ranks' rows; `ranks`: each rank's context. All must outlive this. `spin`:
  // how long a rank waiting at a rendezvous busy-waits before it sleeps.
  sharded_extension(train::search_extension& base, const context& base_ctx, const row_split& learn,
                    const row_split& eval, const std::vector<const context*>& ranks,
                    std::chrono::microseconds spin = std::chrono::microseconds(0));
  ~sharded_extension();
  sharded_extension(const sharded_extension&) = delete;
  sharded_extension& operator=(const sharded_extension&) = delete;

  // Rank k's extension, for its backend's searches (called on the rank's thread).
  [[nodiscard]] train::search_extension& rank(int k);
  // Before a search: the trainer has set the base's score noise and model-size weights; the ranks'
  // views take them (the noise is a pure function; the weights are computed once per level).
  void follow_base();
  // A rank failed: the ranks waiting at a rendezvous (and later ones) fail too, instead of waiting
  // for it. Any thread.
  void cancel(const std::string& why) noexcept;

  class shared;  // the base and the rendezvous of its calls (sharded_extension.cpp)
  class view;    // one rank's extension

 private:
  std::unique_ptr<shared> shared_;
  std::vector<std::unique_ptr<view>> views_;
};

}  // namespace cbg::dist
