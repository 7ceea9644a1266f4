#include "qsweep/store/stored_rows.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "row_image.hpp"
#include "table_reader.hpp"

namespace qsweep::store {

struct StoredRows::Tables {
  explicit Tables(const std::string& path) : file(path) {}
  detail::FileCheck file;
  std::vector<detail::ColumnDatasets> tasks;
  H5Id attempts;
  std::vector<std::vector<detail::ColumnDatasets>> groups;
};

StoredRows::StoredRows(const std::string& path, const Layout& layout)
    : layout_(layout), tables_(std::make_unique<Tables>(path)) {
  Tables& t = *tables_;
  t.file.reading([&] {
    t.tasks = detail::open_table(t.file, "tasks", layout.task_columns(), layout.task_count());
    t.attempts = t.file.dataset("/tasks/attempts", {layout.task_count()}, H5T_INTEGER, 4);
    for (const GroupLayout& group : layout.groups())
      t.groups.push_back(detail::open_table(t.file, group.name, group.columns, group.rows()));
  });
}

StoredRows::~StoredRows() = default;

std::vector<StoredRow> StoredRows::read(std::span<const std::uint64_t> ids) {
  return tables_->file.reading([&] { return read_rows(ids); });
}

std::vector<StoredRow> StoredRows::read_rows(std::span<const std::uint64_t> ids) {
  Tables& t = *tables_;
  std::vector<StoredRow> out;
  out.reserve(ids.size());
  // Windows of at most kChunkRows consecutive tasks, each starting at the next id wanted; a
  // group's rows of the tasks of a window are consecutive too (group rows are in task order).
  for (std::size_t k = 0; k < ids.size();) {
    const std::uint64_t first = ids[k];
    const std::uint64_t count = std::min(detail::kChunkRows, layout_.task_count() - first);
    const std::vector<detail::ColumnImage> tasks =
        detail::read_rows("tasks", layout_.task_columns(), t.tasks, first, count);
    std::vector<std::int32_t> attempts(count);
    detail::read_range(t.attempts.get(), H5T_NATIVE_INT32, detail::Range{first, count},
                       detail::kOneValue, attempts.data(), "/tasks/attempts");
    std::vector<std::uint64_t> group_first(layout_.groups().size());
    std::vector<std::vector<detail::ColumnImage>> groups(layout_.groups().size());
    for (std::size_t g = 0; g < layout_.groups().size(); ++g) {
      const GroupLayout& group = layout_.groups()[g];
      const std::uint64_t lo = group.task_ids.lower_bound(first);
      const std::uint64_t hi = group.task_ids.lower_bound(first + count);
      group_first[g] = lo;
      if (hi == lo) continue;
      groups[g] =
          detail::read_rows(group.name, group.columns, t.groups[g], group_first[g], hi - lo);
    }
    for (; k < ids.size() && ids[k] < first + count; ++k) {
      const std::uint64_t id = ids[k];
      const std::size_t g = layout_.group_of(id);
      StoredRow& row = out.emplace_back();
      row.id = id;
      row.attempts = attempts[id - first];
      row.rows.task = detail::decode_row(layout_.task_columns(), tasks, id - first);
      row.rows.group = detail::decode_row(layout_.groups()[g].columns, groups[g],
                                          layout_.row_of(id) - group_first[g]);
    }
  }
  return out;
}

Row with_parameters(const std::vector<ColumnLayout>& columns, const Row& planned, Row stored) {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c].spec.parameter) stored.cells.at(c) = planned.cells.at(c);
  return stored;
}

namespace {

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
  const std::vector<double>& shorter = a.size() <= b.size() ? a : b;
  const std::vector<double>& longer = a.size() <= b.size() ? b : a;
  for (std::size_t k = 0; k < longer.size(); ++k) {
    if (k < shorter.size() ? !same_bits(shorter[k], longer[k]) : !std::isnan(longer[k]))
      return false;
  }
  return true;
}

// `padded`: a distribution, whose rows are as wide as the widest of their group.
bool same_cell(const CellValue& a, const CellValue& b, bool padded) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) return same_bits(*x, std::get<double>(b));
  if (const auto* x = std::get_if<std::vector<double>>(&a)) {
    const auto& y = std::get<std::vector<double>>(b);
    return (padded || x->size() == y.size()) && same_values(*x, y);
  }
  return a == b;
}

}  // namespace

std::string differing_result(const std::vector<ColumnLayout>& columns, const Row& a, const Row& b) {
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const ColumnSpec& spec = columns[c].spec;
    if (spec.parameter || spec.per_run) continue;
    if (!same_cell(a.cells.at(c), b.cells.at(c), spec.type == ColumnType::f64_vector))
      return spec.name;
  }
  return "";
}

}  // namespace qsweep::store
