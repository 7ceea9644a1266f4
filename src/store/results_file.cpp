#include "qsweep/store/results_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <utility>

#include "qsweep/store/hdf5.hpp"
#include "qsweep/version.hpp"
#include "row_image.hpp"

namespace qsweep::store {
namespace {

using detail::ColumnImage;
using detail::kOneValue;
using detail::Range;
using detail::Shape;
using detail::TaskColumns;
using detail::text_type;
using detail::write_ranges;

// Rows written per step while creating the file (bounds the memory of the rows in flight).
constexpr std::uint64_t kCreateChunkRows = 4096;

H5Id file_access(MPI_Comm comm, const std::string& path) {
  H5Id fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "H5Pcreate", path);
  check(H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL), "H5Pset_fapl_mpio", path);
  // The HDF5 1.8 format: large attributes (the sweep file) go to dense storage, and unlike the
  // 1.10 format's superblock it does not mark a file that was killed while open as unreadable.
  check(H5Pset_libver_bounds(fapl.get(), H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds",
        path);
  return fapl;
}

// Contiguous, allocated at creation, never filled by HDF5 (qsweep writes every element itself):
// writing a row after creation then changes raw data only, never the file's structure.
H5Id create_dataset(hid_t parent, const std::string& name, hid_t file_type,
                    const std::vector<hsize_t>& dims, const std::string& description,
                    const std::string& units, const std::string& path) {
  const H5Id space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                   "H5Screate_simple", path);
  const H5Id dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, "H5Pcreate", path);
  check(H5Pset_layout(dcpl.get(), H5D_CONTIGUOUS), "H5Pset_layout", path);
  check(H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY), "H5Pset_alloc_time", path);
  check(H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER), "H5Pset_fill_time", path);
  H5Id dataset(H5Dcreate2(parent, name.c_str(), file_type, space.get(), H5P_DEFAULT, dcpl.get(),
                          H5P_DEFAULT),
               H5Dclose, "H5Dcreate2", path);
  write_string_attribute(dataset.get(), "description", description);
  if (!units.empty()) write_string_attribute(dataset.get(), "units", units);
  return dataset;
}

// Groups remember the order their datasets were made in (schema order), so h5py and
// `qsweep export` list columns parameters first, as the schema does.
H5Id create_group(hid_t parent, const std::string& name, const std::string& path) {
  const H5Id gcpl(H5Pcreate(H5P_GROUP_CREATE), H5Pclose, "H5Pcreate", path);
  check(H5Pset_link_creation_order(gcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED),
        "H5Pset_link_creation_order", path);
  return H5Id(H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, gcpl.get(), H5P_DEFAULT), H5Gclose,
              "H5Gcreate2", path);
}

H5Id open_dataset(hid_t parent, const std::string& name, const std::string& path) {
  return H5Id(H5Dopen2(parent, name.c_str(), H5P_DEFAULT), H5Dclose, "H5Dopen2", path);
}

// MPI errors are returned (MPI_ERRORS_RETURN) and become exceptions naming the call.
void check_mpi(int result, std::string_view call, std::string_view what) {
  if (result == MPI_SUCCESS) return;
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int length = 0;
  MPI_Error_string(result, text.data(), &length);
  throw StoreError(std::string(call) + "(" + std::string(what) +
                   ") failed: " + std::string(text.data(), static_cast<std::size_t>(length)));
}

void broadcast_string(std::string& text, MPI_Comm comm, std::string_view what) {
  auto size = static_cast<unsigned long long>(text.size());
  check_mpi(MPI_Bcast(&size, 1, MPI_UNSIGNED_LONG_LONG, 0, comm), "MPI_Bcast", what);
  text.resize(size);
  if (size > 0) {
    check_mpi(MPI_Bcast(text.data(), static_cast<int>(size), MPI_CHAR, 0, comm), "MPI_Bcast", what);
  }
}

int comm_rank(MPI_Comm comm) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank", "results file communicator");
  return rank;
}

int comm_size(MPI_Comm comm) {
  int size = 1;
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size", "results file communicator");
  return size;
}

std::string iso8601_utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text.data();
}

}  // namespace

Provenance Provenance::now(std::string command_line, int mpi_ranks) {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  return Provenance{std::move(command_line), host.data(), iso8601_utc_now(), mpi_ranks};
}

// --- datasets ---------------------------------------------------------------------------------

struct ColumnDatasets {
  H5Id data;       // the column (flat values for ragged columns)
  H5Id offset;     // ragged columns only
  H5Id count;      // ragged columns only
  H5Id text_type;  // str only
};

struct GroupDatasets {
  H5Id group;
  std::vector<ColumnDatasets> columns;
};

struct ResultsFile::Datasets {
  H5Id file;  // declared first: destroyed last, after every object in it
  H5Id tasks_group;
  H5Id id, method, block, status, error, warning, wall_seconds, rank, seed, attempts, checksum;
  H5Id method_type = text_type(kMethodWidth);
  H5Id error_type = text_type(kErrorWidth);
  H5Id warning_type = text_type(kWarningWidth);
  H5Id status_type = detail::status_type();
  std::vector<GroupDatasets> groups;

  std::vector<H5Id*> handles() {
    std::vector<H5Id*> all{&tasks_group, &id,         &method,       &block,
                           &status,      &error,      &warning,      &wall_seconds,
                           &rank,        &seed,       &attempts,     &checksum,
                           &method_type, &error_type, &warning_type, &status_type};
    for (GroupDatasets& group : groups) {
      all.push_back(&group.group);
      for (ColumnDatasets& column : group.columns) {
        for (H5Id* handle : {&column.data, &column.offset, &column.count, &column.text_type}) {
          all.push_back(handle);
        }
      }
    }
    return all;
  }

  // Objects first, the file last.
  void close() {
    for (H5Id* handle : handles()) handle->close();
    file.close();
  }

  void release() {
    for (H5Id* handle : handles()) handle->release();
    file.release();
  }

  // The rows (ascending) of one group from their images (detail::encode_group_rows).
  void write_group(const GroupLayout& layout, GroupDatasets& datasets,
                   std::span<const std::uint64_t> rows, const std::vector<ColumnImage>& images) {
    const std::vector<Range> row_ranges = detail::ranges_of_rows(rows);
    for (std::size_t c = 0; c < layout.columns.size(); ++c) {
      const ColumnLayout& column = layout.columns[c];
      ColumnDatasets& target = datasets.columns[c];
      const std::string name = "/" + layout.name + "/" + column.spec.name;
      const hid_t type = detail::memory_type(column, target.text_type);
      const ColumnImage& image = images[c];
      if (is_ragged(column.spec.type)) {
        std::vector<Range> flat_ranges;
        for (const std::uint64_t row : rows) {
          detail::add_range(flat_ranges, column.offsets[row],
                            column.offsets[row + 1] - column.offsets[row]);
        }
        write_ranges(target.data.get(), type, flat_ranges, kOneValue, image.bytes.data(), name);
        write_ranges(target.count.get(), H5T_NATIVE_INT64, row_ranges, kOneValue,
                     image.counts.data(), name + "_count");
      } else {
        const Shape shape = column.spec.type == sweep::ColumnType::f64_vector
                                ? Shape{true, column.width}
                                : kOneValue;
        write_ranges(target.data.get(), type, row_ranges, shape, image.bytes.data(), name);
      }
    }
  }

  // The /tasks columns of rows `ranges` (ascending task ids) but attempts, status and checksum.
  void write_task_columns(const std::vector<Range>& ranges, const TaskColumns& tasks) {
    write_ranges(id.get(), H5T_NATIVE_INT64, ranges, kOneValue, tasks.id.data(), "/tasks/id");
    write_ranges(method.get(), method_type.get(), ranges, kOneValue, tasks.method.data(),
                 "/tasks/method");
    write_ranges(block.get(), H5T_NATIVE_INT32, ranges, kOneValue, tasks.block.data(),
                 "/tasks/block");
    write_ranges(seed.get(), H5T_NATIVE_UINT64, ranges, kOneValue, tasks.seed.data(),
                 "/tasks/seed");
    write_ranges(error.get(), error_type.get(), ranges, kOneValue, tasks.error.data(),
                 "/tasks/error");
    write_ranges(warning.get(), warning_type.get(), ranges, kOneValue, tasks.warning.data(),
                 "/tasks/warning");
    write_ranges(wall_seconds.get(), H5T_NATIVE_DOUBLE, ranges, kOneValue,
                 tasks.wall_seconds.data(), "/tasks/wall_seconds");
    write_ranges(rank.get(), H5T_NATIVE_INT32, ranges, kOneValue, tasks.rank.data(), "/tasks/rank");
  }

  void write_status(const std::vector<Range>& ranges, const std::vector<std::int8_t>& values) {
    write_ranges(status.get(), status_type.get(), ranges, kOneValue, values.data(),
                 "/tasks/status");
  }
  void write_checksums(const std::vector<Range>& ranges, const std::vector<std::uint64_t>& values) {
    write_ranges(checksum.get(), H5T_NATIVE_UINT64, ranges, kOneValue, values.data(),
                 "/tasks/checksum");
  }
};

namespace {

// Whether a row's vectors fit the sizes reserved at creation; "" if they do, else why not.
// (sweep::execute already checks this; a stand-in task function in tests might not.)
std::string misfit(const GroupLayout& layout, std::uint64_t row, const sweep::Row& values) {
  for (std::size_t c = 0; c < layout.columns.size(); ++c) {
    const ColumnLayout& column = layout.columns[c];
    std::size_t reserved = 0;
    if (column.spec.type == sweep::ColumnType::f64_vector) {
      reserved = column.width;
    } else if (is_ragged(column.spec.type)) {
      reserved = column.offsets[row + 1] - column.offsets[row];
    } else {
      continue;
    }
    const sweep::CellValue& cell = values.cells.at(c);
    const auto* ints = std::get_if<std::vector<std::int64_t>>(&cell);
    const auto* doubles = std::get_if<std::vector<double>>(&cell);
    const std::size_t length = ints ? ints->size() : doubles ? doubles->size() : 0;
    if (length > reserved) {
      return "internal error: column " + column.spec.name + " has " + std::to_string(length) +
             " values but the plan reserved " + std::to_string(reserved);
    }
  }
  return "";
}

}  // namespace

// --- creation ---------------------------------------------------------------------------------

void ResultsFile::create(const std::string& path, const sweep::Plan& plan, const Layout& layout,
                         const Provenance& provenance_in, MPI_Comm comm) {
  const int rank = comm_rank(comm);
  const int ranks = comm_size(comm);
  // Collective metadata must be identical on every rank: rank 0's provenance is the file's.
  Provenance provenance = provenance_in;
  broadcast_string(provenance.command_line, comm, "provenance");
  broadcast_string(provenance.hostname, comm, "provenance");
  broadcast_string(provenance.created, comm, "provenance");
  check_mpi(MPI_Bcast(&provenance.mpi_ranks, 1, MPI_INT, 0, comm), "MPI_Bcast", "provenance");
  std::string plan_hash = plan.hash;
  broadcast_string(plan_hash, comm, "plan hash");
  if (plan_hash != plan.hash) throw std::logic_error("ranks hold different plans");

  const std::string partial = path + ".partial";
  Datasets file;
  try {
    {
      const H5Id fapl = file_access(comm, partial);
      file.file = H5Id(H5Fcreate(partial.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose,
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
    write_string_attribute(root, "sweep_name", plan.name);
    write_string_attribute(root, "sweep_source", plan.source);
    write_string_attribute(root, "sweep_yaml", plan.yaml_text);
    write_string_attribute(root, "sweep_sha256", plan.yaml_sha256);
    write_string_attribute(root, "plan_hash", plan.hash);
    write_int_attribute(root, "task_count", static_cast<long long>(plan.tasks.size()));

    // /tasks
    const hsize_t tasks = plan.tasks.size();
    file.tasks_group = create_group(root, "tasks", "/tasks");
    const hid_t tg = file.tasks_group.get();
    write_string_attribute(tg, "description", "one row per task of the plan, all methods");
    file.id =
        create_dataset(tg, "id", H5T_STD_I64LE, {tasks},
                       "task id = row in /tasks = position in the expanded plan", "", "/tasks/id");
    file.method = create_dataset(tg, "method", file.method_type.get(), {tasks},
                                 "method: " + sweep::method_list(), "", "/tasks/method");
    file.block =
        create_dataset(tg, "block", H5T_STD_I32LE, {tasks},
                       "0-based index of the sweep block the task came from", "", "/tasks/block");
    file.status = create_dataset(
        tg, "status", file.status_type.get(), {tasks},
        "0 pending (not run, or interrupted), 1 done, 2 failed (see error), "
        "3 unstable (parameters outside the stability region; the violating set is in error)",
        "", "/tasks/status");
    file.error = create_dataset(tg, "error", file.error_type.get(), {tasks},
                                "failed: the error message; unstable: the violating server set "
                                "(cut to 256 bytes)",
                                "", "/tasks/error");
    file.warning = create_dataset(tg, "warning", file.warning_type.get(), {tasks},
                                  "why a result should not be trusted silently (\"; \"-separated, "
                                  "cut to 192 bytes; empty: none)",
                                  "", "/tasks/warning");
    file.wall_seconds = create_dataset(tg, "wall_seconds", H5T_IEEE_F64LE, {tasks},
                                       "wall-clock time of the task's last run (NaN if never run)",
                                       "s", "/tasks/wall_seconds");
    file.rank =
        create_dataset(tg, "rank", H5T_STD_I32LE, {tasks},
                       "MPI rank of the task's last run (-1 if never run)", "", "/tasks/rank");
    file.seed =
        create_dataset(tg, "seed", H5T_STD_U64LE, {tasks},
                       "sweep seed; the task's random streams are Philox(seed, id, replication)",
                       "", "/tasks/seed");
    file.attempts = create_dataset(tg, "attempts", H5T_STD_I32LE, {tasks},
                                   "times the task was handed to a worker (written before it runs)",
                                   "", "/tasks/attempts");
    file.checksum = create_dataset(
        tg, "checksum", H5T_STD_U64LE, {tasks},
        "XXH3-64 of the finished row's stored values (this row of /tasks but attempts, and the "
        "task's row of its method group), written last; 0: not finished",
        "", "/tasks/checksum");

    // One group per method present in the plan.
    for (const GroupLayout& group : layout.groups()) {
      GroupDatasets datasets;
      const std::string group_path = "/" + group.name;
      datasets.group = create_group(root, group.name, group_path);
      write_string_attribute(datasets.group.get(), "description",
                             "one row per " + group.name +
                                 " task, in task order; task_id is the "
                                 "row in /tasks");
      const hid_t g = datasets.group.get();
      for (const ColumnLayout& column : group.columns) {
        const sweep::ColumnSpec& spec = column.spec;
        const std::string column_path = group_path + "/" + spec.name;
        ColumnDatasets target;
        switch (spec.type) {
          case sweep::ColumnType::f64:
            target.data = create_dataset(g, spec.name, H5T_IEEE_F64LE, {group.rows()},
                                         spec.description, spec.units, column_path);
            break;
          case sweep::ColumnType::i64:
            target.data = create_dataset(g, spec.name, H5T_STD_I64LE, {group.rows()},
                                         spec.description, spec.units, column_path);
            break;
          case sweep::ColumnType::str:
            target.text_type = text_type(column.width);
            target.data = create_dataset(g, spec.name, target.text_type.get(), {group.rows()},
                                         spec.description, spec.units, column_path);
            break;
          case sweep::ColumnType::f64_vector:
            target.data = create_dataset(g, spec.name, H5T_IEEE_F64LE, {group.rows(), column.width},
                                         spec.description + " (one row per task, NaN padding)",
                                         spec.units, column_path);
            break;
          case sweep::ColumnType::f64_ragged:
          case sweep::ColumnType::i64_ragged:
            target.data = create_dataset(
                g, spec.name,
                spec.type == sweep::ColumnType::f64_ragged ? H5T_IEEE_F64LE : H5T_STD_I64LE,
                {column.offsets.back()},
                spec.description + " (ragged: row r's values are [" + spec.name + "_offset[r], " +
                    spec.name + "_offset[r] + " + spec.name + "_count[r]) of this flat array)",
                spec.units, column_path);
            target.offset = create_dataset(g, spec.name + "_offset", H5T_STD_I64LE, {group.rows()},
                                           "start of each row's values in " + spec.name, "",
                                           column_path + "_offset");
            target.count = create_dataset(g, spec.name + "_count", H5T_STD_I64LE, {group.rows()},
                                          "number of values of each row in " + spec.name, "",
                                          column_path + "_count");
            break;
        }
        datasets.columns.push_back(std::move(target));
      }
      file.groups.push_back(std::move(datasets));
    }

    // Every element of every dataset is written now, in chunks of rows shared out over the ranks.
    // Tasks start pending with their parameters in place and no checksum.
    for (std::uint64_t begin = static_cast<std::uint64_t>(rank) * kCreateChunkRows; begin < tasks;
         begin += static_cast<std::uint64_t>(ranks) * kCreateChunkRows) {
      const std::uint64_t end = std::min<std::uint64_t>(begin + kCreateChunkRows, tasks);
      const std::size_t n = end - begin;
      TaskColumns columns(n);
      for (std::size_t i = 0; i < n; ++i) columns.set_planned(i, plan.tasks[begin + i]);
      const std::vector<Range> chunk{{begin, n}};
      file.write_task_columns(chunk, columns);
      const std::vector<std::int32_t> attempts(n, 0);
      write_ranges(file.attempts.get(), H5T_NATIVE_INT32, chunk, kOneValue, attempts.data(),
                   "/tasks/attempts");
      file.write_checksums(chunk, std::vector<std::uint64_t>(n, 0));
      file.write_status(chunk, columns.status);
    }
    for (std::size_t g = 0; g < layout.groups().size(); ++g) {
      const GroupLayout& group = layout.groups()[g];
      GroupDatasets& datasets = file.groups[g];
      for (std::uint64_t begin = static_cast<std::uint64_t>(rank) * kCreateChunkRows;
           begin < group.rows(); begin += static_cast<std::uint64_t>(ranks) * kCreateChunkRows) {
        const std::uint64_t end = std::min<std::uint64_t>(begin + kCreateChunkRows, group.rows());
        std::vector<sweep::Row> rows;
        rows.reserve(end - begin);
        std::vector<std::pair<std::uint64_t, const sweep::Row*>> entries;
        entries.reserve(end - begin);
        std::vector<std::uint64_t> row_numbers;
        for (std::uint64_t row = begin; row < end; ++row) {
          rows.push_back(sweep::make_row(plan.tasks[group.task_ids[row]], sweep::TaskOutcome{}));
          entries.emplace_back(row, &rows.back());
          row_numbers.push_back(row);
        }
        file.write_group(group, datasets, row_numbers, detail::encode_group_rows(group, entries));
        // Offsets are fixed by the plan: written once, here.
        for (std::size_t c = 0; c < group.columns.size(); ++c) {
          const ColumnLayout& column = group.columns[c];
          if (!is_ragged(column.spec.type)) continue;
          std::vector<std::int64_t> offsets(
              column.offsets.begin() + static_cast<std::ptrdiff_t>(begin),
              column.offsets.begin() + static_cast<std::ptrdiff_t>(end));
          write_ranges(datasets.columns[c].offset.get(), H5T_NATIVE_INT64, {{begin, end - begin}},
                       kOneValue, offsets.data(),
                       "/" + group.name + "/" + column.spec.name + "_offset");
        }
      }
    }
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
    std::filesystem::rename(partial, path, error);
    if (error) {
      renamed = 0;
      rename_error = "cannot rename " + partial + " to " + path + ": " + error.message();
      std::remove(partial.c_str());
    }
  }
  check_mpi(MPI_Bcast(&renamed, 1, MPI_INT, 0, comm), "MPI_Bcast", "rename result");
  broadcast_string(rename_error, comm, "rename result");
  if (renamed == 0) throw StoreError(rename_error);
}

// --- writing rows -----------------------------------------------------------------------------

ResultsFile::ResultsFile(const std::string& path, const sweep::Plan& plan, const Layout& layout,
                         MPI_Comm comm)
    : plan_(plan), layout_(layout), datasets_(std::make_unique<Datasets>()) {
  Datasets& file = *datasets_;
  {
    const H5Id fapl = file_access(comm, path);
    file.file = H5Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, "H5Fopen", path);
  }
  const hid_t root = file.file.get();
  file.tasks_group = H5Id(H5Gopen2(root, "tasks", H5P_DEFAULT), H5Gclose, "H5Gopen2", "/tasks");
  const hid_t tg = file.tasks_group.get();
  file.id = open_dataset(tg, "id", "/tasks/id");
  file.method = open_dataset(tg, "method", "/tasks/method");
  file.block = open_dataset(tg, "block", "/tasks/block");
  file.seed = open_dataset(tg, "seed", "/tasks/seed");
  file.status = open_dataset(tg, "status", "/tasks/status");
  file.error = open_dataset(tg, "error", "/tasks/error");
  file.warning = open_dataset(tg, "warning", "/tasks/warning");
  file.wall_seconds = open_dataset(tg, "wall_seconds", "/tasks/wall_seconds");
  file.rank = open_dataset(tg, "rank", "/tasks/rank");
  file.attempts = open_dataset(tg, "attempts", "/tasks/attempts");
  file.checksum = open_dataset(tg, "checksum", "/tasks/checksum");
  for (const GroupLayout& group : layout.groups()) {
    GroupDatasets datasets;
    const std::string group_path = "/" + group.name;
    datasets.group =
        H5Id(H5Gopen2(root, group.name.c_str(), H5P_DEFAULT), H5Gclose, "H5Gopen2", group_path);
    for (const ColumnLayout& column : group.columns) {
      ColumnDatasets target;
      const std::string column_path = group_path + "/" + column.spec.name;
      target.data = open_dataset(datasets.group.get(), column.spec.name, column_path);
      if (is_ragged(column.spec.type)) {
        target.count =
            open_dataset(datasets.group.get(), column.spec.name + "_count", column_path + "_count");
      }
      if (column.spec.type == sweep::ColumnType::str) target.text_type = text_type(column.width);
      datasets.columns.push_back(std::move(target));
    }
    file.groups.push_back(std::move(datasets));
  }
}

ResultsFile::~ResultsFile() {
  if (datasets_) datasets_->release();
}

void ResultsFile::close() {
  if (!datasets_) return;
  datasets_->close();
  datasets_.reset();
}

void ResultsFile::write_attempts(std::span<const std::uint64_t> ids,
                                 std::span<const std::int32_t> attempts) {
  std::vector<std::pair<std::uint64_t, std::int32_t>> sorted;
  sorted.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) sorted.emplace_back(ids[i], attempts[i]);
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::uint64_t> rows;
  std::vector<std::int32_t> values;
  for (const auto& [id, value] : sorted) {
    rows.push_back(id);
    values.push_back(value);
  }
  const std::vector<Range> ranges = detail::ranges_of_rows(rows);
  Datasets& file = *datasets_;
  // A task that runs again (it failed before) is unsealed first, then pending: a kill at any
  // moment leaves either a finished status without a checksum (interrupted) or pending without
  // one, never pending with a checksum, which only damage makes (see store/verify.hpp).
  file.write_checksums(ranges, std::vector<std::uint64_t>(rows.size(), 0));
  file.write_status(ranges, std::vector<std::int8_t>(
                                rows.size(), static_cast<std::int8_t>(sweep::TaskStatus::pending)));
  write_ranges(file.attempts.get(), H5T_NATIVE_INT32, ranges, kOneValue, values.data(),
               "/tasks/attempts");
}

void ResultsFile::write_finished(std::vector<FinishedTask>& finished) {
  if (finished.empty()) return;
  Datasets& file = *datasets_;
  std::sort(finished.begin(), finished.end(),
            [](const FinishedTask& a, const FinishedTask& b) { return a.id < b.id; });

  // Rows, grouped by method group; task order is row order within a group.
  const std::size_t n = finished.size();
  std::vector<sweep::Row> rows;
  rows.reserve(n);
  const std::size_t group_count = layout_.groups().size();
  std::vector<std::vector<std::pair<std::uint64_t, const sweep::Row*>>> entries(group_count);
  std::vector<std::vector<std::uint64_t>> row_numbers(group_count);
  std::vector<std::pair<std::size_t, std::size_t>> place(n);  // (group, index in its entries)
  for (std::size_t i = 0; i < n; ++i) {
    FinishedTask& task = finished[i];
    const sweep::Task& spec = plan_.tasks.at(task.id);
    const std::size_t g = layout_.group_index(spec.method());
    const std::uint64_t row = layout_.row_of(task.id);
    rows.push_back(sweep::make_row(spec, task.outcome));
    const std::string problem = misfit(layout_.groups()[g], row, rows.back());
    if (!problem.empty()) {
      sweep::TaskOutcome failure;
      failure.status = sweep::TaskStatus::failed;
      failure.error = problem;
      failure.wall_seconds = task.outcome.wall_seconds;
      task.outcome = std::move(failure);
      rows.back() = sweep::make_row(spec, task.outcome);
    }
    place[i] = {g, entries[g].size()};
    entries[g].emplace_back(row, &rows.back());
    row_numbers[g].push_back(row);
  }
  std::vector<std::vector<ColumnImage>> images(group_count);
  for (std::size_t g = 0; g < group_count; ++g) {
    if (entries[g].empty()) continue;
    images[g] = detail::encode_group_rows(layout_.groups()[g], entries[g]);
    file.write_group(layout_.groups()[g], file.groups[g], row_numbers[g], images[g]);
  }

  // /tasks: the whole row but attempts, then the status, then the checksum (the seal) last.
  TaskColumns columns(n);
  std::vector<std::uint64_t> ids(n);
  std::vector<std::uint64_t> checksums(n);
  for (std::size_t i = 0; i < n; ++i) {
    const FinishedTask& task = finished[i];
    ids[i] = task.id;
    columns.set_planned(i, plan_.tasks.at(task.id));
    columns.set_outcome(i, task.outcome, task.rank);
    checksums[i] = detail::row_checksum(columns, i, images[place[i].first], place[i].second);
  }
  const std::vector<Range> ranges = detail::ranges_of_rows(ids);
  file.write_task_columns(ranges, columns);
  file.write_status(ranges, columns.status);
  file.write_checksums(ranges, checksums);
}

}  // namespace qsweep::store
