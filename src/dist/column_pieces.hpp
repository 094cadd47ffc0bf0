// SPDX-License-Identifier: Apache-2.0
// Columns of `count` bytes each laid one after another (a rank's rows of a level's candidate
// columns, src/dist/sharded_extension.cpp): the pieces that make bytes [at, at + n) of that layout,
// each within one column. Internal (not installed).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace cbg::dist {

struct column_piece {
  std::size_t column = 0;  // which column
  std::size_t offset = 0;  // the first byte within it
  std::size_t bytes = 0;
};

// `count` > 0.
inline std::vector<column_piece> column_pieces(std::size_t at, std::size_t n, std::size_t count) {
  std::vector<column_piece> out;
  for (std::size_t done = 0; done < n;) {
    const std::size_t k = (at + done) / count, within = (at + done) % count;
    const std::size_t piece = std::min(count - within, n - done);
    out.push_back(column_piece{k, within, piece});
    done += piece;
  }
  return out;
}

}  // namespace cbg::dist
