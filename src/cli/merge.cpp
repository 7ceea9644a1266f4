// qsweep merge A.h5 B.h5 [...] -o C.h5: one results file from results files of one study, tasks
// matched by content (docs/running.md, "Merging files").
#include <fmt/format.h>

#include <exception>
#include <filesystem>
#include <unordered_set>

#include "command.hpp"
#include "qsweep/common/exit_codes.hpp"
#include "qsweep/run/combine.hpp"
#include "qsweep/run/mpi.hpp"
#include "qsweep/run/signals.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::cli {
namespace {

struct MergeArgs {
  std::vector<std::string> files;
  std::string output;
  bool force = false;
};

void check_output(const MergeArgs& args) {
  namespace fs = std::filesystem;
  // As run's -o: an empty value, a control character or a directory name is refused by name.
  const std::string problem = sweep::output_path_problem(args.output);
  if (!problem.empty()) throw InputError("-o: the merged file's path " + problem);
  std::error_code error;
  for (const std::string& file : args.files) {
    if (file.empty()) throw InputError("merge: an empty file name; expected a results file");
    if (fs::equivalent(file, args.output, error))
      throw InputError("-o " + args.output + " is one of the files merged; expected a new file");
  }
  if (fs::is_directory(args.output, error))
    throw InputError("-o " + args.output + " is a directory; expected the name of a results file");
  if (fs::exists(args.output, error) && !args.force)
    throw InputError(args.output + " already exists: use --force to replace it");
}

// The plan of the merged file: the first file's sweep, joined by the blocks of each next file
// that hold tasks not yet in it (whole blocks: a sweep expands block by block).
sweep::Plan merged_plan(const std::vector<run::ResultsSource>& sources) {
  // A version 2 file's plan may hold a task twice (sweep::BlockDuplicates): its sweep expanded now.
  sweep::Plan merged = sources[0].format_version < 3
                           ? sweep::parse_plan(sources[0].plan.yaml_text, sources[0].plan.source)
                           : sources[0].plan;
  for (std::size_t s = 1; s < sources.size(); ++s) {
    const sweep::Plan& next = sources[s].plan;
    if (next.name != merged.name)
      throw InputError(
          fmt::format("{} holds sweep '{}', {} sweep '{}': qsweep merge joins files "
                      "of one study (the same name:)",
                      sources[0].path, merged.name, sources[s].path, next.name));
    if (next.seed != merged.seed)
      throw InputError(fmt::format("{} has seed {}, {} seed {}: files of one study share the seed",
                                   sources[0].path, merged.seed, sources[s].path, next.seed));
    std::unordered_set<std::string> keys;
    for (std::uint64_t id = 0; id < merged.tasks.size(); ++id) keys.insert(merged.tasks.key(id));
    std::vector<int> blocks;
    for (std::uint64_t id = 0; id < next.tasks.size(); ++id) {
      const int block = next.tasks.at(id).block;
      if (!keys.contains(next.tasks.key(id)) && (blocks.empty() || blocks.back() != block))
        blocks.push_back(block);
    }
    if (blocks.empty()) continue;  // every task of the next file is in already
    const std::string source = merged.source + " + " + next.source;
    const std::string text =
        sweep::joined_sweep_text(merged.yaml_text, next.yaml_text, blocks,
                                 fmt::format("qsweep merge: the blocks of {}, then blocks {} of {}",
                                             merged.source, fmt::join(blocks, ", "), next.source));
    try {
      merged = sweep::parse_plan(text, source);
    } catch (const InputError& e) {
      throw InputError(fmt::format("the sweeps of {} and {} joined do not expand ({})",
                                   sources[0].path, sources[s].path, e.what()));
    }
  }
  return merged;
}

int merge(const MergeArgs& args, int ranks) {
  if (ranks > 1)
    throw InputError(fmt::format("qsweep merge runs on one process, not {} ranks", ranks));
  check_output(args);
  const std::string output = store::real_results_path(args.output);
  store::check_companions(output);
  const run::SignalWatch signals;  // a stop signal ends the copy between pieces of rows
  store::WriterLock lock(output, own_command_line());
  run::remove_leftovers(output);
  std::vector<run::ResultsSource> sources;
  sources.reserve(args.files.size());
  for (const std::string& file : args.files) {
    sources.push_back(run::open_source(file));
    run::check_numbers_kept(sources.back());
    run::key_finished(sources.back());
  }
  // Every task of every file is in it: a block is joined when it holds a task not in yet.
  const sweep::Plan plan = merged_plan(sources);
  std::vector<const run::ResultsSource*> pointers;
  pointers.reserve(sources.size());
  for (const run::ResultsSource& source : sources) pointers.push_back(&source);
  std::uint64_t copied = 0;
  try {
    for (const std::uint64_t rows :
         run::write_combined(output, plan, run::task_keys(plan), pointers,
                             store::Provenance::now(own_command_line(), 1), lock,
                             [&] { return signals.requested() != run::StopMode::none; }))
      copied += rows;
  } catch (const run::CombineStopped&) {
    fmt::print(stderr, "qsweep: stopped by a signal: {} was not written\n", args.output);
    return exit_code::incomplete;
  }
  fmt::print("{}: {} tasks of sweep '{}' (plan hash {}), {} finished rows copied from", args.output,
             plan.tasks.size(), plan.name, plan.hash.substr(0, 16), copied);
  for (const run::ResultsSource& source : sources)
    fmt::print(" {} ({} tasks)", source.path, source.plan.tasks.size());
  fmt::print("\n");
  return exit_code::ok;
}

int merge_command(const MergeArgs& args) {
  // The store writes through MPI-IO: one process, MPI_COMM_SELF.
  run::MpiSession mpi;
  std::exception_ptr failure;
  int code = exit_code::ok;
  try {
    code = merge(args, mpi.size());
  } catch (...) {
    failure = std::current_exception();
  }
  mpi.finalize();  // before the error goes to main (an exception through MpiSession aborts)
  if (failure) std::rethrow_exception(failure);
  return code;
}

const CommandRegistration registration(45, [](CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* command = app.add_subcommand(
      "merge",
      "Merge results files of one study into one (tasks matched by content; a task finished in "
      "several files must have the same results in each)");
  command->add_option("files", args->files, "results files (HDF5), at least two")
      ->required()
      ->expected(2, -1);
  command->add_option("-o,--output", args->output, "the merged results file")->required();
  command->add_flag("--force", args->force, "replace an existing output file");
  command->callback([args, &exit_code] { exit_code = merge_command(*args); });
  command->footer(
      "Files of one study (name and seed) merge in any order, tasks matched by key. The merged "
      "plan is the first file's sweep followed by the blocks of the next files that hold tasks "
      "not in it; continue it with qsweep run SWEEP -o OUT --resume. Exit codes: 0 merged, 1 "
      "runtime error, 2 bad input (files of different studies, conflicting results, a damaged "
      "file; nothing written).");
});

}  // namespace
}  // namespace qsweep::cli
