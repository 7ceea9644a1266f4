#include "qsweep/store/results_file.hpp"

#include <algorithm>
#include <utility>

#include "parallel_file.hpp"
#include "qsweep/common/task_status.hpp"
#include "row_image.hpp"

namespace qsweep::store {

using detail::ColumnImage;
using detail::Range;

ResultsFile::ResultsFile(const std::string& path, const Layout& layout, MPI_Comm comm)
    : layout_(layout), datasets_(std::make_unique<detail::FileDatasets>()) {
  detail::FileDatasets& file = *datasets_;
  {
    const H5Id fapl = detail::file_access(comm, path);
    file.file = H5Id(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl.get()), H5Fclose, "H5Fopen", path);
  }
  const hid_t root = file.file.get();
  file.tasks.name = "tasks";
  file.tasks.open(root, layout.task_columns());
  file.attempts = detail::open_dataset(file.tasks.group.get(), "attempts", "/tasks/attempts");
  file.checksum = detail::open_dataset(file.tasks.group.get(), "checksum", "/tasks/checksum");
  for (const GroupLayout& group : layout.groups()) {
    detail::TableDatasets& datasets = file.groups.emplace_back();
    datasets.name = group.name;
    datasets.open(root, group.columns);
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
  detail::FileDatasets& file = *datasets_;
  // A task that runs again (it failed before) is unsealed first, then pending: a kill at any
  // moment leaves either a finished status without a checksum (interrupted) or pending without
  // one, never pending with a checksum, which only damage makes (see store/verify.hpp).
  file.write_checksums(ranges, std::vector<std::uint64_t>(rows.size(), 0));
  file.write_status(
      layout_, ranges,
      std::vector<std::int8_t>(rows.size(), static_cast<std::int8_t>(TaskStatus::pending)));
  file.write_attempts(ranges, values);
}

void ResultsFile::write_finished(std::span<const FinishedRow> finished) {
  if (finished.empty()) return;
  detail::FileDatasets& file = *datasets_;
  std::vector<const FinishedRow*> sorted;
  sorted.reserve(finished.size());
  for (const FinishedRow& row : finished) sorted.push_back(&row);
  std::sort(sorted.begin(), sorted.end(),
            [](const FinishedRow* a, const FinishedRow* b) { return a->id < b->id; });

  // Group rows in blocks: a group's rows together (task order is row order within a group), but
  // a row that reserves many values alone, written from its cells without a copy.
  struct Block {
    std::size_t group = 0;
    detail::RowEntries entries;
    std::vector<std::uint64_t> rows;
    std::vector<ColumnImage> images;
  };
  const std::size_t n = sorted.size();
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::vector<Block> blocks;
  std::vector<std::size_t> block_of_group(layout_.groups().size(), kNone);
  std::vector<std::pair<std::size_t, std::size_t>> place(n);  // (block, index in its entries)
  detail::RowEntries task_entries;
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) {
    const FinishedRow& row = *sorted[i];
    const std::size_t g = layout_.group_of(row.id);
    const std::uint64_t group_row = layout_.row_of(row.id);
    std::size_t b = block_of_group[g];
    if (detail::reserved_values(layout_.groups()[g].columns, group_row) > detail::kLargeRowValues) {
      b = blocks.size();
      blocks.push_back({g, {}, {}, {}});
    } else if (b == kNone) {
      b = block_of_group[g] = blocks.size();
      blocks.push_back({g, {}, {}, {}});
    }
    place[i] = {b, blocks[b].entries.size()};
    blocks[b].entries.emplace_back(group_row, &row.rows.group);
    blocks[b].rows.push_back(group_row);
    task_entries.emplace_back(row.id, &row.rows.task);
    ids[i] = row.id;
  }
  for (Block& block : blocks) {
    const std::vector<ColumnLayout>& columns = layout_.groups()[block.group].columns;
    block.images = detail::encode_rows(columns, block.entries, detail::Cells::viewed);
    file.groups[block.group].write(columns, block.rows, block.images);
  }

  // /tasks: the whole row but attempts and status, then the status, then the checksum (the
  // seal) last.
  const std::vector<ColumnImage> tasks = detail::encode_rows(layout_.task_columns(), task_entries);
  std::vector<std::uint64_t> checksums(n);
  for (std::size_t i = 0; i < n; ++i) {
    checksums[i] = detail::row_checksum(layout_.task_columns(), tasks, i,
                                        blocks[place[i].first].images, place[i].second);
  }
  const std::vector<Range> ranges = detail::ranges_of_rows(ids);
  file.tasks.write(layout_.task_columns(), ids, tasks, layout_.status_column());
  const ColumnImage& status = tasks[layout_.status_column()];
  file.write_status(layout_, ranges,
                    std::vector<std::int8_t>(status.bytes.begin(), status.bytes.end()));
  file.write_checksums(ranges, checksums);
}

}  // namespace qsweep::store
