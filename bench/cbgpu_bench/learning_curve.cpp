// SPDX-License-Identifier: Apache-2.0
#include "learning_curve.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "text.hpp"

namespace cbgpu_bench {

namespace {

constexpr const char* learn_colour = "#1f77b4";
constexpr const char* test_colour = "#ff7f0e";
constexpr double width = 720, height = 360;
constexpr double left = 80, right = 20, top = 40, bottom = 50;  // margins around the plot area

double number(std::string_view s) {
  s = trim(s);
  double d = std::numeric_limits<double>::quiet_NaN();
  std::from_chars(s.data(), s.data() + s.size(), d);
  return d;
}

// Columns of a TSV with a header line: name -> values (the first column, "iter", included).
std::vector<std::pair<std::string, std::vector<double>>> read_tsv(const std::filesystem::path& path) {
  std::vector<std::pair<std::string, std::vector<double>>> columns;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  if (!in || !std::getline(in, line)) return columns;
  for (std::string_view name : split(trim(line), '\t')) columns.emplace_back(std::string(name), std::vector<double>());
  while (std::getline(in, line)) {
    if (trim(line).empty()) continue;
    const std::vector<std::string_view> fields = split(trim(line), '\t');
    for (std::size_t c = 0; c < columns.size(); ++c) {
      columns[c].second.push_back(c < fields.size() ? number(fields[c]) : std::numeric_limits<double>::quiet_NaN());
    }
  }
  return columns;
}

bool maximised(const std::string& metric) {
  const std::string name = metric.substr(0, metric.find(':'));
  for (const char* m : {"AUC", "Accuracy", "Precision", "Recall", "F1", "TotalF1", "MCC", "R2", "BalancedAccuracy",
                        "Kappa", "WKappa", "PRAUC", "NormalizedGini", "LogLikelihoodOfPrediction", "NDCG", "MAP"}) {
    if (name == m) return true;
  }
  return false;
}

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// About `count` round tick values covering [lo, hi].
std::vector<double> ticks(double lo, double hi, int count) {
  const double span = hi - lo;
  const double raw = span / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (const double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    step = m * magnitude;
    if (step >= raw) break;
  }
  std::vector<double> out;
  for (double t = std::ceil(lo / step) * step; t <= hi + step * 1e-9; t += step)
    out.push_back(std::abs(t) < step * 1e-9 ? 0 : t);
  return out;
}

std::string chart(const metric_curve& c) {
  double x_lo = 0, x_hi = 1;
  if (!c.iterations.empty()) {
    x_lo = c.iterations.front();
    x_hi = std::max(c.iterations.back(), x_lo + 1);
  }
  double y_lo = std::numeric_limits<double>::infinity(), y_hi = -y_lo;
  for (const auto* series : {&c.learn, &c.test}) {
    for (const double v : *series) {
      if (std::isfinite(v)) {
        y_lo = std::min(y_lo, v);
        y_hi = std::max(y_hi, v);
      }
    }
  }
  if (!std::isfinite(y_lo)) y_lo = 0, y_hi = 1;
  if (y_hi - y_lo < 1e-12 * std::max(1.0, std::abs(y_hi))) y_lo -= 0.5, y_hi += 0.5;
  const double pad = 0.05 * (y_hi - y_lo);
  y_lo -= pad;
  y_hi += pad;
  const double pw = width - left - right, ph = height - top - bottom;
  const auto x_of = [&](double x) { return left + (x - x_lo) / (x_hi - x_lo) * pw; };
  const auto y_of = [&](double y) { return top + (y_hi - y) / (y_hi - y_lo) * ph; };

  std::string svg = fmt::format(
      R"svg(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" role="img" aria-label="{2}">)svg"
      "\n",
      width, height, escape(c.metric));
  svg += fmt::format(R"svg(<text x="{}" y="22" font-size="16" font-weight="bold">{}</text>)svg"
                     "\n",
                     left, escape(c.metric));
  // Grid, tick values and axes.
  for (const double t : ticks(y_lo, y_hi, 6)) {
    svg += fmt::format(
        R"svg(<line x1="{0}" x2="{1}" y1="{2:.2f}" y2="{2:.2f}" stroke="#ddd"/><text x="{3}" y="{4:.2f}" font-size="11" text-anchor="end">{5:.6g}</text>)svg"
        "\n",
        left, left + pw, y_of(t), left - 6, y_of(t) + 4, t);
  }
  for (const double t : ticks(x_lo, x_hi, 8)) {
    svg += fmt::format(
        R"svg(<line x1="{0:.2f}" x2="{0:.2f}" y1="{1}" y2="{2}" stroke="#333"/><text x="{0:.2f}" y="{3}" font-size="11" text-anchor="middle">{4:g}</text>)svg"
        "\n",
        x_of(t), top + ph, top + ph + 5, top + ph + 18, t);
  }
  svg += fmt::format(R"svg(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#333"/>)svg"
                     "\n",
                     left, top, pw, ph);
  svg += fmt::format(R"svg(<text x="{}" y="{}" font-size="12" text-anchor="middle">iteration</text>)svg"
                     "\n",
                     left + pw / 2, height - 10);
  svg += fmt::format(
      R"svg(<text x="16" y="{0}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {0})">{1}</text>)svg"
      "\n",
      top + ph / 2, escape(c.metric));
  // Series.
  const auto polyline = [&](const std::vector<double>& v, const char* colour) {
    std::string points;
    for (std::size_t i = 0; i < v.size() && i < c.iterations.size(); ++i) {
      if (std::isfinite(v[i])) points += fmt::format("{:.2f},{:.2f} ", x_of(c.iterations[i]), y_of(v[i]));
    }
    return fmt::format(R"svg(<polyline fill="none" stroke="{}" stroke-width="1.5" points="{}"/>)svg"
                       "\n",
                       colour, points);
  };
  if (!c.learn.empty()) svg += polyline(c.learn, learn_colour);
  if (!c.test.empty()) svg += polyline(c.test, test_colour);
  // Best test iteration.
  std::string best_text;
  std::ptrdiff_t best = -1;
  for (std::size_t i = 0; i < c.test.size(); ++i) {
    if (!std::isfinite(c.test[i])) continue;
    if (best < 0 || (c.higher_is_better ? c.test[i] > c.test[static_cast<std::size_t>(best)]
                                        : c.test[i] < c.test[static_cast<std::size_t>(best)])) {
      best = static_cast<std::ptrdiff_t>(i);
    }
  }
  if (best >= 0) {
    const auto b = static_cast<std::size_t>(best);
    best_text = fmt::format("best test {:.7g} at iteration {:g}", c.test[b], c.iterations[b]);
    svg += fmt::format(
        R"svg(<line x1="{0:.2f}" x2="{0:.2f}" y1="{1}" y2="{2}" stroke="{3}" stroke-dasharray="4 3"/><circle cx="{0:.2f}" cy="{4:.2f}" r="3.5" fill="{3}"/>)svg"
        "\n",
        x_of(c.iterations[b]), top, top + ph, test_colour, y_of(c.test[b]));
  }
  // Legend.
  double lx = left + pw - 190, ly = top + 14;
  const auto entry = [&](const char* colour, const std::string& label) {
    svg += fmt::format(
        R"svg(<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" stroke="{3}" stroke-width="2"/><text x="{4}" y="{5}" font-size="11">{6}</text>)svg"
        "\n",
        lx, lx + 18, ly, colour, lx + 24, ly + 4, escape(label));
    ly += 16;
  };
  if (!c.learn.empty()) entry(learn_colour, "learn");
  if (!c.test.empty()) entry(test_colour, "test");
  if (!best_text.empty()) entry(test_colour, best_text);
  svg += "</svg>\n";
  return svg;
}

}  // namespace

std::vector<metric_curve> read_error_logs(const std::string& train_dir) {
  const auto learn = read_tsv(std::filesystem::path(train_dir) / "learn_error.tsv");
  const auto test = read_tsv(std::filesystem::path(train_dir) / "test_error.tsv");
  std::vector<metric_curve> curves;
  std::map<std::string, std::size_t> index;
  const auto add = [&](const auto& columns, bool is_learn) {
    for (std::size_t c = 1; c < columns.size(); ++c) {
      const std::string& name = columns[c].first;
      auto [it, added] = index.try_emplace(name, curves.size());
      if (added) {
        metric_curve m;
        m.metric = name;
        m.higher_is_better = maximised(name);
        m.iterations = columns[0].second;
        curves.push_back(std::move(m));
      }
      (is_learn ? curves[it->second].learn : curves[it->second].test) = columns[c].second;
    }
  };
  add(learn, true);
  add(test, false);
  return curves;
}

std::string learning_curve_page(const std::string& title, const std::vector<metric_curve>& curves) {
  std::string page = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{0}</title>\n"
      "<style>body{{font-family:sans-serif;margin:24px}} svg{{display:block;margin:0 0 24px 0}}</style>\n"
      "</head>\n<body>\n<h1>{0}</h1>\n<p>Each chart shows one metric per iteration: the learn set in blue, the test "
      "set in orange; the dashed line marks the best test iteration.</p>\n",
      escape(title));
  if (curves.empty()) page += "<p>No metric was logged.</p>\n";
  for (const metric_curve& c : curves) page += chart(c);
  page += "</body>\n</html>\n";
  return page;
}

}  // namespace cbgpu_bench
