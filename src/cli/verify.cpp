// qsweep verify OUT.h5: checks every row of a results file against the plan stored in it
// (read-only), as `qsweep run --resume` does before it runs anything. See docs/running.md.
#include "qsweep/store/verify.hpp"

#include <fmt/format.h>

#include "command.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/combine.hpp"
#include "qsweep/store/layout.hpp"
#include "qsweep/store/results_reader.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::cli {
namespace {

struct VerifyArgs {
  std::string file;
};

int verify_command(const VerifyArgs& args) {
  // The plan comes from the sweep file stored in the results: the file verifies itself.
  const run::ResultsSource source = run::open_source(args.file);
  const sweep::Plan& plan = source.plan;
  const store::Verification& verified = source.verified;
  const store::StatusCounts counts = store::count_statuses(verified.statuses);

  fmt::print("file:        {} ({} tasks, plan hash {})\n", args.file, plan.tasks.size(),
             plan.hash.substr(0, 16));
  if (const std::string holder = store::WriterLock::holder(args.file); !holder.empty()) {
    fmt::print("writing:     {} (rows in flight show as pending or interrupted)\n", holder);
  }
  fmt::print("verified:    {} finished rows (done {}, failed {}, unstable {})\n", verified.finished,
             counts.done, counts.failed, counts.unstable);
  fmt::print("pending:     {} (not run yet)\n",
             counts.pending - verified.interrupted - verified.damaged.size());
  fmt::print("interrupted: {} (a run was killed while writing them)\n", verified.interrupted);
  fmt::print("damaged:     {}\n", verified.damaged.size());
  for (const std::string& what : verified.damage) fmt::print("  {}\n", what);
  if (verified.damaged.size() > verified.damage.size()) fmt::print("  ...\n");
  if (verified.damaged.empty()) return exit_code::ok;
  fmt::print("--resume runs the damaged rows again.\n");
  return exit_code::damaged;
}

const CommandRegistration registration(42, [](CLI::App& app, int& exit_code) {
  const auto [command, args] = add_file_command(
      app, exit_code, "verify",
      "Check every row of a results file against its checksum and the plan stored in it "
      "(read-only; what run --resume checks before it runs)",
      "results file (HDF5)", verify_command);
  command->footer(
      "Exit codes: 0 every finished row is intact (pending and interrupted rows are fine: "
      "--resume runs them), 5 some rows are damaged (--resume runs them again), 2 not a results "
      "file, a damaged structure or a stored plan that does not match (--resume refuses it).");
});

}  // namespace
}  // namespace qsweep::cli
