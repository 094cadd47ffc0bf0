// SPDX-License-Identifier: Apache-2.0
// cbgpu-bench: the command line front end of libcbgpu. It parses flags, runs one subcommand and
// maps what went wrong onto the documented exit codes (exit_codes.hpp).
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench_command.hpp"
#include "calc_command.hpp"
#include "errors.hpp"
#include "exit_codes.hpp"
#include "fit_command.hpp"
#include "text.hpp"
#include "fstr_command.hpp"
#include "version_command.hpp"

namespace {

using namespace cbgpu_bench;

// Library errors caused by the input data are input errors; the rest are failures.
int exit_code_of(cbg_status status) {
  switch (status) {
    case CBG_ERR_BAD_DATA:
    case CBG_ERR_INVALID_ARGUMENT:  // e.g. a training parameter the trainer refuses
    case CBG_ERR_FORMAT:
    case CBG_ERR_IO:
      return exit_usage;
    case CBG_ERR_NOT_IMPLEMENTED:
      return exit_not_implemented;
    default:
      return exit_failure;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "cbgpu-bench: CatBoost-compatible gradient boosting on GPUs (libcbgpu " + std::string(CBG_VERSION_STRING) + ")",
      "cbgpu-bench"};
  app.set_version_flag("--version", std::string("cbgpu-bench ") + CBG_VERSION_STRING);
  app.require_subcommand(1);
  app.footer(exit_codes_help);

  bench_options bench_opts;
  fit_options fit_opts;
  calc_options calc_opts;
  fstr_options fstr_opts;
  CLI::App* bench = add_bench_command(app, bench_opts);
  CLI::App* fit = add_fit_command(app, fit_opts);
  CLI::App* calc = add_calc_command(app, calc_opts);
  CLI::App* fstr = add_fstr_command(app, fstr_opts);
  CLI::App* version = add_version_command(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that exit 0; every real parse error is a usage error.
    return app.exit(e) == 0 ? exit_ok : exit_usage;
  }

  // Errors go to stderr; flush what was printed before them so that logs keep the order.
  auto report = [](const char* prefix, const char* what) {
    std::fflush(stdout);
    fmt::print(stderr, "{}{}\n", prefix, visible_controls(what));
  };
  try {
    if (bench->parsed()) return run_bench(bench_opts, std::vector<std::string>(argv, argv + argc));
    if (fit->parsed()) return run_fit(fit_opts);
    if (calc->parsed()) return run_calc(calc_opts);
    if (fstr->parsed()) return run_fstr(fstr_opts);
    if (version->parsed()) return run_version();
    return exit_usage;  // unreachable: a subcommand is required
  } catch (const usage_error& e) {
    report("error: ", e.what());
    return exit_usage;
  } catch (const not_implemented_error& e) {
    report("cbgpu-bench: ", e.what());
    return exit_not_implemented;
  } catch (const library_error& e) {
    report("error: ", e.what());
    return exit_code_of(e.status());
  } catch (const std::exception& e) {
    report("error: ", e.what());
    return exit_failure;
  }
}
