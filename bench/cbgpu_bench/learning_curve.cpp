// SPDX-License-Identifier: Apache-2.0
#include "learning_curve.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "cbg/io/atomic_file.hpp"
#include "errors.hpp"

namespace cbgpu_bench {

namespace {

// PNG's CRC-32 (ISO 3309, polynomial 0xedb88320), table built once.
uint32_t crc32(const uint8_t* data, std::size_t n, uint32_t crc = 0) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1u) != 0 ? 0xedb88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (std::size_t i = 0; i < n; ++i) crc = table[(crc ^ data[i]) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

uint32_t adler32(const std::vector<uint8_t>& data) {
  uint32_t a = 1;
  uint32_t b = 0;
  for (const uint8_t v : data) {
    a = (a + v) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

void put32(std::vector<uint8_t>& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(v >> shift));
}

// A zlib stream (RFC 1950) of stored deflate blocks (RFC 1951 §3.2.4).
std::vector<uint8_t> zlib_stored(const std::vector<uint8_t>& raw) {
  std::vector<uint8_t> out{0x78, 0x01};
  std::size_t pos = 0;
  do {
    const std::size_t n = std::min<std::size_t>(raw.size() - pos, 65535);
    const bool last = pos + n == raw.size();
    out.push_back(last ? 1 : 0);
    const auto len = static_cast<uint16_t>(n);
    const auto nlen = static_cast<uint16_t>(~len);
    out.insert(out.end(), {static_cast<uint8_t>(len & 0xff), static_cast<uint8_t>(len >> 8),
                           static_cast<uint8_t>(nlen & 0xff), static_cast<uint8_t>(nlen >> 8)});
    out.insert(out.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos),
               raw.begin() + static_cast<std::ptrdiff_t>(pos + n));
    pos += n;
  } while (pos < raw.size());
  put32(out, adler32(raw));
  return out;
}

void chunk(std::vector<uint8_t>& png, const char (&type)[5], const std::vector<uint8_t>& data) {
  put32(png, static_cast<uint32_t>(data.size()));
  const std::size_t start = png.size();
  png.insert(png.end(), type, type + 4);
  png.insert(png.end(), data.begin(), data.end());
  put32(png, crc32(png.data() + start, png.size() - start));
}

struct canvas {
  int32_t width;
  int32_t height;
  std::vector<uint8_t> pixels;

  void set(int32_t x, int32_t y, uint8_t color) {
    if (x >= 0 && x < width && y >= 0 && y < height) {
      pixels[static_cast<std::size_t>(y) * static_cast<std::size_t>(width) + static_cast<std::size_t>(x)] = color;
    }
  }
  // Bresenham, two pixels thick.
  void line(int32_t x0, int32_t y0, int32_t x1, int32_t y1, uint8_t color) {
    const int32_t dx = std::abs(x1 - x0);
    const int32_t dy = -std::abs(y1 - y0);
    const int32_t sx = x0 < x1 ? 1 : -1;
    const int32_t sy = y0 < y1 ? 1 : -1;
    int32_t err = dx + dy;
    for (;;) {
      set(x0, y0, color);
      set(x0, y0 + 1, color);
      if (x0 == x1 && y0 == y1) return;
      const int32_t e2 = 2 * err;
      if (e2 >= dy) {
        err += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        err += dx;
        y0 += sy;
      }
    }
  }
};

constexpr uint8_t white = 0;
constexpr uint8_t black = 1;
constexpr uint8_t blue = 2;
constexpr uint8_t orange = 3;
constexpr uint8_t grey = 4;

}  // namespace

void write_png(const std::string& path, int32_t width, int32_t height, const std::vector<uint8_t>& palette,
               const std::vector<uint8_t>& pixels) {
  std::vector<uint8_t> png{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  std::vector<uint8_t> header;
  put32(header, static_cast<uint32_t>(width));
  put32(header, static_cast<uint32_t>(height));
  header.insert(header.end(), {8, 3, 0, 0, 0});  // 8 bits, palette, deflate, filter 0, no interlace
  chunk(png, "IHDR", header);
  chunk(png, "PLTE", palette);
  std::vector<uint8_t> raw;
  raw.reserve(static_cast<std::size_t>(height) * static_cast<std::size_t>(width + 1));
  for (int32_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter type None
    const auto row = pixels.begin() + static_cast<std::ptrdiff_t>(y) * width;
    raw.insert(raw.end(), row, row + width);
  }
  chunk(png, "IDAT", zlib_stored(raw));
  chunk(png, "IEND", {});
  try {
    cbg::io::write_file_atomically(path, {reinterpret_cast<const char*>(png.data()), png.size()});
  } catch (const cbg::io::file_error& e) {
    throw usage_error(fmt::format("--plot-learning-curve: {}", e.what()));
  }
}

std::string plot_learning_curve(const std::string& path, const std::vector<double>& learn,
                                const std::vector<double>& eval) {
  constexpr int32_t width = 640;
  constexpr int32_t height = 400;
  constexpr int32_t left = 40;
  constexpr int32_t right = 620;
  constexpr int32_t top = 20;
  constexpr int32_t bottom = 370;
  canvas c{width, height, std::vector<uint8_t>(static_cast<std::size_t>(width) * height, white)};

  double lo = std::numeric_limits<double>::infinity();
  double hi = -lo;
  for (const auto* series : {&learn, &eval}) {
    for (const double v : *series) {
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
    }
  }
  const bool any = lo <= hi;
  if (!any) lo = hi = 0.0;
  const double span = hi > lo ? hi - lo : 1.0;
  const std::size_t n = std::max<std::size_t>(std::max(learn.size(), eval.size()), 2);

  // Grid: four horizontal lines; axes; tick marks every tenth of the iterations.
  for (int32_t k = 1; k <= 4; ++k) {
    const int32_t y = top + (bottom - top) * k / 5;
    for (int32_t x = left; x <= right; x += 4) c.set(x, y, grey);
  }
  c.line(left, top, left, bottom, black);
  c.line(left, bottom, right, bottom, black);
  for (int32_t k = 0; k <= 10; ++k) {
    const int32_t x = left + (right - left) * k / 10;
    c.line(x, bottom, x, bottom + 6, black);
  }
  c.line(left - 6, top, left, top, black);
  c.line(left - 6, bottom, left, bottom, black);

  const auto plot = [&](const std::vector<double>& series, uint8_t color) {
    bool have = false;
    int32_t px = 0;
    int32_t py = 0;
    for (std::size_t i = 0; i < series.size(); ++i) {
      if (!std::isfinite(series[i])) continue;
      const auto x = static_cast<int32_t>(left + std::lround(static_cast<double>(right - left) *
                                                             static_cast<double>(i) / static_cast<double>(n - 1)));
      const auto y = static_cast<int32_t>(bottom - std::lround((bottom - top) * (series[i] - lo) / span));
      if (have) {
        c.line(px, py, x, y, color);
      } else {
        c.set(x, y, color);
      }
      have = true;
      px = x;
      py = y;
    }
  };
  plot(learn, blue);
  plot(eval, orange);
  const std::vector<uint8_t> palette{255, 255, 255, 0, 0, 0, 31, 119, 180, 255, 127, 14, 200, 200, 200};
  write_png(path, width, height, palette, c.pixels);
  return any ? fmt::format("{:.6g} .. {:.6g}", lo, hi) : std::string("no metric values");
}

}  // namespace cbgpu_bench
