// Creating the results file: collectively, every dataset allocated and every row written as
// planned, under a temporary name until complete.
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <stdexcept>
#include <utility>

#include "parallel_file.hpp"
#include "qsweep/store/companions.hpp"
#include "qsweep/store/results_file.hpp"
#include "qsweep/store/writer_lock.hpp"
#include "qsweep/version.hpp"
#include "row_image.hpp"

namespace qsweep::store {
namespace {

// Rows written per step while creating the file (bounds the memory of the rows in flight).
constexpr std::uint64_t kCreateChunkRows = 4096;

std::string iso8601_utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

// Every rank writes its share of the rows: chunks of rows dealt out in turn.
template <class WriteChunk>
void for_my_chunks(std::uint64_t rows, int rank, int ranks, WriteChunk write_chunk) {
  for (std::uint64_t begin = static_cast<std::uint64_t>(rank) * kCreateChunkRows; begin < rows;
       begin += static_cast<std::uint64_t>(ranks) * kCreateChunkRows) {
    write_chunk(begin, std::min<std::uint64_t>(begin + kCreateChunkRows, rows));
  }
}

// Writes the planned rows of tasks, a chunk of task ids at a time: their rows of /tasks and of
// their groups, each task made once; its buffers are kept from one chunk to the next (fresh ones
// were faulted in for every chunk: half the start-up of 10^6 tasks).
class PlannedWriter {
 public:
  // `zeroed`: the file's bytes are zero already (detail::zero_raw_data).
  PlannedWriter(detail::FileDatasets& file, const Layout& layout, const PlannedRows& planned,
                bool zeroed)
      : file_(file), layout_(layout), planned_(planned), zeroed_(zeroed) {
    zero_task_columns_ = zero_columns(layout.task_columns(), planned.pending_task);
    for (std::size_t g = 0; g < layout.groups().size(); ++g)
      zero_group_columns_.push_back(
          zero_columns(layout.groups()[g].columns, planned.pending_groups.at(g)));
  }

  // The rows of tasks [begin, end).
  void write(std::uint64_t begin, std::uint64_t end) {
    rows_.clear();
    for (std::uint64_t id = begin; id < end; ++id) rows_.push_back(planned_.rows(id));
    numbers_.clear();
    entries_.clear();
    for (std::uint64_t id = begin; id < end; ++id) {
      numbers_.push_back(id);
      entries_.emplace_back(id, &rows_[id - begin].task);
    }
    write_entries(file_.tasks, layout_.task_columns(), planned_.pending_task, zero_task_columns_,
                  detail::Cells::copied);
    for (std::size_t g = 0; g < layout_.groups().size(); ++g) {
      // The group's rows of these tasks are contiguous (group rows are in task order).
      const GroupLayout& group = layout_.groups()[g];
      const std::uint64_t lo = group.task_ids.lower_bound(begin);
      const std::uint64_t hi = group.task_ids.lower_bound(end);
      if (lo == hi) continue;
      detail::TableDatasets& datasets = file_.groups[g];
      const Row& pending = planned_.pending_groups.at(g);
      numbers_.clear();
      entries_.clear();
      for (std::uint64_t row = lo; row < hi; ++row) {
        const Row* cells = &rows_[group.task_ids[row] - begin].group;
        if (detail::reserved_values(group.columns, row) <= detail::kLargeRowValues) {
          numbers_.push_back(row);
          entries_.emplace_back(row, cells);
        } else {  // alone, its padding not made
          const detail::RowEntries alone{{row, cells}};
          detail::encode_rows(group.columns, alone, detail::Cells::viewed, images_, &pending,
                              &zero_group_columns_[g]);
          datasets.write(group.columns, std::vector<std::uint64_t>{row}, images_,
                         detail::TableDatasets::npos, zeroed_);
        }
      }
      write_entries(datasets, group.columns, pending, zero_group_columns_[g],
                    detail::Cells::copied);
      // Offsets are fixed by the layout: written once, here.
      for (std::size_t c = 0; c < group.columns.size(); ++c) {
        const ColumnLayout& column = group.columns[c];
        if (!is_ragged(column.spec.type)) continue;
        offsets_.clear();
        for (std::uint64_t row = lo; row < hi; ++row)
          offsets_.push_back(static_cast<std::int64_t>(column.offsets[row]));
        detail::write_ranges(datasets.columns[c].offset.get(), H5T_NATIVE_INT64, {{lo, hi - lo}},
                             detail::kOneValue, offsets_.data(),
                             "/" + group.name + "/" + column.spec.name + "_offset");
      }
    }
  }

 private:
  // The columns of a table that are neither parameters nor ragged and whose cell in `others` is
  // zero bytes: in a zeroed file, the same in every row and there already (error texts, zero
  // counts: half of a row of /tasks), so neither made nor written.
  std::vector<bool> zero_columns(const std::vector<ColumnLayout>& columns, const Row& others) {
    std::vector<bool> zero(columns.size(), false);
    if (!zeroed_) return zero;
    const detail::RowEntries one{{0, &others}};
    detail::encode_rows(columns, one, detail::Cells::copied, images_, &others);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      zero[c] = !columns[c].spec.parameter && !is_ragged(columns[c].spec.type) &&
                detail::all_zero(images_[c].data(), images_[c].row_start.back());
    }
    return zero;
  }

  // Encodes and writes the rows of numbers_ and entries_ (`others`: the table's cells of the
  // columns that are not parameters, PlannedRows; `zero`: zero_columns of them).
  void write_entries(detail::TableDatasets& datasets, const std::vector<ColumnLayout>& columns,
                     const Row& others, const std::vector<bool>& zero, detail::Cells cells) {
    if (numbers_.empty()) return;
    detail::encode_rows(columns, entries_, cells, images_, &others, &zero);
    datasets.write(columns, numbers_, images_, detail::TableDatasets::npos, zeroed_);
  }

  detail::FileDatasets& file_;
  const Layout& layout_;
  const PlannedRows& planned_;
  bool zeroed_;
  std::vector<bool> zero_task_columns_;
  std::vector<std::vector<bool>> zero_group_columns_;
  std::vector<TaskRows> rows_;
  std::vector<std::uint64_t> numbers_;
  detail::RowEntries entries_;
  std::vector<detail::ColumnImage> images_;
  std::vector<std::int64_t> offsets_;
};

}  // namespace

std::string full_disk_note(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  const std::string directory = parent.empty() ? "." : parent.string();
  struct statvfs space {};
  if (statvfs(directory.c_str(), &space) != 0 || space.f_bavail > 0) return "";
  return "; " + std::string(std::strerror(ENOSPC)) + " (" + directory + " has no free space)";
}

Provenance Provenance::now(std::string command_line, int mpi_ranks) {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return Provenance{std::move(command_line), host.data(), iso8601_utc_now(), mpi_ranks, {}};
}

std::string history_entry(const std::string& created, const std::string& command_line,
                          const std::string& hostname, const std::string& mpi_ranks,
                          const std::string& qsweep_version, const std::string& git_commit) {
  return created + " " + command_line + " (on " + hostname + ", " + mpi_ranks +
         " MPI ranks, qsweep " + qsweep_version + ", git " + git_commit + ")\n";
}

void ResultsFile::create(const std::string& path, const SweepIdentity& sweep, const Layout& layout,
                         const PlannedRows& planned, const Provenance& provenance_in, MPI_Comm comm,
                         WriterLock* lock) {
  using detail::broadcast_string;
  const int rank = detail::comm_rank(comm);
  const int ranks = detail::comm_size(comm);
  // Collective metadata must be identical on every rank: rank 0's provenance is the file's.
  Provenance provenance = provenance_in;
  broadcast_string(provenance.command_line, comm, "provenance");
  broadcast_string(provenance.hostname, comm, "provenance");
  broadcast_string(provenance.created, comm, "provenance");
  broadcast_string(provenance.history, comm, "provenance");
  detail::check_mpi(MPI_Bcast(&provenance.mpi_ranks, 1, MPI_INT, 0, comm), "MPI_Bcast",
                    "provenance");
  std::string plan_hash = sweep.plan_hash;
  broadcast_string(plan_hash, comm, "plan hash");
  if (plan_hash != sweep.plan_hash) throw std::logic_error("ranks hold different plans");

  const std::string partial = path + std::string(kPartialSuffix);
  detail::FileDatasets file;
  try {
    {
      const H5Id fapl = detail::file_access(comm, partial);
      // The root remembers the order its groups were made in: /tasks, then the groups in the
      // schema's order, as `qsweep status` and h5py list them.
      const H5Id fcpl(H5Pcreate(H5P_FILE_CREATE), H5Pclose, "H5Pcreate", partial);
      check(H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
            "H5Pset_link_creation_order", partial);
      file.file = H5Id(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, fcpl.get(), fapl.get()), H5Fclose,
                       "H5Fcreate", partial);
    }
    const hid_t root = file.file.get();
    write_string_attribute(root, "format", kFormatName);
    write_int_attribute(root, "format_version", kFormatVersion);
    write_string_attribute(root, "qsweep_version", kVersion);
    write_string_attribute(root, "git_commit", git_commit());
    write_string_attribute(root, "created", provenance.created);
    write_string_attribute(root, "command_line", provenance.command_line);
    write_int_attribute(root, "mpi_ranks", provenance.mpi_ranks);
    write_string_attribute(root, "hostname", provenance.hostname);
    write_string_attribute(
        root, "history",
        provenance.history +
            history_entry(provenance.created, provenance.command_line, provenance.hostname,
                          std::to_string(provenance.mpi_ranks), kVersion, git_commit()));
    write_string_attribute(root, "sweep_name", sweep.name);
    write_string_attribute(root, "sweep_source", sweep.source);
    write_string_attribute(root, "sweep_yaml", sweep.yaml_text);
    write_string_attribute(root, "sweep_sha256", sweep.yaml_sha256);
    write_string_attribute(root, "plan_hash", sweep.plan_hash);
    write_int_attribute(root, "task_count", static_cast<long long>(layout.task_count()));

    const hsize_t tasks = layout.task_count();
    file.tasks.name = "tasks";
    file.tasks.create(root, "one row per task of the plan, all methods", layout.task_columns(),
                      tasks);
    const hid_t tg = file.tasks.group.get();
    file.attempts = detail::create_dataset(
        tg, "attempts", H5T_STD_I32LE, {tasks},
        "times the task was handed to a worker (written before it runs)", "", "/tasks/attempts");
    file.checksum = detail::create_dataset(
        tg, "checksum", H5T_STD_U64LE, {tasks},
        "XXH3-64 of the finished row's stored values (this row of /tasks but attempts, and the "
        "task's row of its method group), written last; 0: not finished",
        "", "/tasks/checksum");
    file.tasks.attach_rows(file.attempts.get());
    file.tasks.attach_rows(file.checksum.get());
    for (const GroupLayout& group : layout.groups()) {
      detail::TableDatasets& datasets = file.groups.emplace_back();
      datasets.name = group.name;
      datasets.create(root,
                      "one row per " + group.name +
                          " task, in task order; task_id is the "
                          "row in /tasks",
                      group.columns, group.rows());
    }

    // Every element of every dataset is written now, in chunks of rows shared out over the ranks.
    // Tasks start pending with their parameters in place and no checksum. Where the file system
    // zeroes the datasets, values of zero bytes (empty texts, zero counts, attempts, checksums:
    // more than half of the file) are not written again: the file holds the same bytes.
    const bool zeroed = detail::zero_raw_data(partial, file.written_datasets(), comm);
    PlannedWriter planned_writer(file, layout, planned, zeroed);
    for_my_chunks(tasks, rank, ranks, [&](std::uint64_t begin, std::uint64_t end) {
      planned_writer.write(begin, end);
      if (zeroed) return;
      const std::vector<detail::Range> chunk{{begin, end - begin}};
      file.write_attempts(chunk, std::vector<std::int32_t>(end - begin, 0));
      file.write_checksums(chunk, std::vector<std::uint64_t>(end - begin, 0));
    });
    file.close();
  } catch (...) {
    // This run fails (the caller ends the job): a half-made file is of no use to anyone. Its
    // handles are left open (closing is collective, and the other ranks may not be there).
    file.release();
    std::remove(partial.c_str());
    throw;
  }

  // Only a complete file gets the final name.
  int renamed = 1;
  std::string rename_error;
  if (rank == 0) {
    std::error_code error;
    try {
      if (lock != nullptr) lock->hold(partial);
    } catch (const Error& e) {  // said to every rank below, as a failed rename
      rename_error = e.what();
    }
    if (rename_error.empty()) std::filesystem::rename(partial, path, error);
    if (error) rename_error = "cannot rename " + partial + " to " + path + ": " + error.message();
    if (!rename_error.empty()) {
      renamed = 0;
      std::remove(partial.c_str());
    }
  }
  detail::check_mpi(MPI_Bcast(&renamed, 1, MPI_INT, 0, comm), "MPI_Bcast", "rename result");
  broadcast_string(rename_error, comm, "rename result");
  if (renamed == 0) throw StoreError(rename_error);
}

}  // namespace qsweep::store
