#include "qsweep/sweep/plan.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <map>
#include <stdexcept>

#include "canonical.hpp"
#include "expand.hpp"
#include "keys.hpp"
#include "method.hpp"
#include "qsweep/common/closest_match.hpp"
#include "qsweep/common/error.hpp"
#include "qsweep/common/printable.hpp"
#include "qsweep/sweep/sha256.hpp"

namespace qsweep::sweep {
namespace {

using detail::fail;
using detail::Locator;

constexpr std::string_view kTopKeys[] = {"name",        "seed",      "output",
                                         "on_unstable", "max_tasks", "blocks"};

Method method_of(const YAML::Node& node, const Locator& loc) {
  const std::string expected = fmt::format("one of: {}", fmt::join(enum_names<Method>(), ", "));
  const std::string name = detail::read_string(node, loc, "method", expected);
  if (const auto method = parse_name<Method>(name)) return *method;
  const std::string guess = closest_match(name, enum_names<Method>());
  fail(loc.at(node),
       fmt::format("unknown method '{}'{}; expected {}", printable(name),
                   guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess), expected));
}

std::uint64_t read_seed(const YAML::Node& node, const Locator& loc) {
  return detail::read_unsigned(node, loc, "seed", "an integer in [0, 2^64)");
}

// The key of a mapping entry as text; keys must be plain names.
std::string key_name(const YAML::Node& key, const Locator& loc) {
  if (!key.IsScalar())
    fail(loc.at(key), fmt::format("a key is {}; expected a name", detail::show(key)));
  return key.Scalar();
}

detail::BlockInput block_input(const YAML::Node& node, int index, const Locator& loc) {
  detail::BlockInput block;
  block.where = loc.at(node);
  block.index = index;
  if (!node.IsMap())
    fail(block.where, fmt::format("block {} is {}; expected a mapping with method, family, ...",
                                  index + 1, detail::show(node)));
  bool has_method = false;
  for (const auto& kv : node) {
    const std::string key = key_name(kv.first, loc);
    if (key == "method") {
      if (has_method) fail(loc.at(kv.first), "key 'method' is given twice; expected each key once");
      has_method = true;
      block.method = method_of(kv.second, loc);
    } else if (key == "zip") {
      if (block.zip) fail(loc.at(kv.first), "key 'zip' is given twice; expected each key once");
      block.zip = detail::Entry{key, kv.first, kv.second, loc};
    } else if (key == "refine") {
      if (block.refine)
        fail(loc.at(kv.first), "key 'refine' is given twice; expected each key once");
      block.refine = detail::Entry{key, kv.first, kv.second, loc};
    } else {
      block.entries.push_back({key, kv.first, kv.second, loc});
    }
  }
  if (!has_method)
    fail(block.where,
         fmt::format("block {} has no method; expected method: {}", index + 1, method_list()));
  return block;
}

void finish(Plan& plan, detail::PlanState& state) {
  plan.tasks = std::move(state.tasks);
  plan.unstable_tasks = std::move(state.unstable_tasks);
  plan.duplicates = state.duplicates;
  plan.refinements = std::move(state.refinements);
  plan.hash = hash_with_refinements(state.hash.hex_digest(), plan.refinements);
}

}  // namespace

Plan parse_plan(const std::string& yaml_text, const std::string& source_name,
                const std::function<bool()>& stopped, BlockDuplicates duplicates,
                const PlanTeam* team) {
  const Locator loc = Locator::in_file(source_name);
  Plan plan;
  plan.source = source_name;
  plan.yaml_text = yaml_text;
  plan.yaml_sha256 = sha256_hex(yaml_text);

  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(yaml_text);
  } catch (const YAML::Exception& e) {
    fail(loc.at(e.mark),
         fmt::format("YAML syntax error: {}; expected valid YAML", printable(e.msg)));
  }
  if (documents.empty() || documents[0].IsNull())
    fail(source_name + ":1:1", "the file is empty; expected a mapping with name and blocks");
  if (documents.size() > 1)
    fail(loc.at(documents[1]), "a second YAML document; expected one document per sweep file");
  const YAML::Node& root = documents[0];
  if (!root.IsMap())
    fail(loc.at(root), fmt::format("the file is {}; expected a mapping with name and blocks",
                                   detail::show(root)));

  std::map<std::string, std::pair<YAML::Node, YAML::Node>> top;  // key -> (key node, value)
  for (const auto& kv : root) {
    const std::string key = key_name(kv.first, loc);
    if (std::find(std::begin(kTopKeys), std::end(kTopKeys), key) == std::end(kTopKeys)) {
      const std::string guess = closest_match(key, {std::begin(kTopKeys), std::end(kTopKeys)});
      fail(loc.at(kv.first),
           fmt::format("unknown top-level key '{}'{}; expected one of: name, seed, output, "
                       "on_unstable, max_tasks, blocks (block keys go inside blocks)",
                       printable(key),
                       guess.empty() ? "" : fmt::format(" (did you mean '{}'?)", guess)));
    }
    if (top.count(key))
      fail(loc.at(kv.first), fmt::format("key '{}' is given twice (first at {}); expected each key "
                                         "once",
                                         printable(key), loc.at(top[key].first)));
    top[key] = {kv.first, kv.second};
  }
  const std::string where_root = loc.at(root);
  auto value_of = [&](const std::string& key) -> const YAML::Node* {
    const auto it = top.find(key);
    return it == top.end() ? nullptr : &it->second.second;
  };

  const YAML::Node* name = value_of("name");
  if (!name) fail(where_root, "key 'name' is missing; expected name: <letters, digits, _ . ->");
  plan.name = detail::read_string(*name, loc, "name", "letters, digits, '_', '.' and '-'");
  if (plan.name.empty() ||
      plan.name.find_first_not_of(
          "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != std::string::npos)
    fail(loc.at(*name), fmt::format("name '{}' has characters other than letters, digits, '_', "
                                    "'.' and '-'; expected a name such as ring-vs-complete",
                                    printable(plan.name)));

  detail::PlanState state;
  state.max_tasks = kDefaultMaxTasks;
  state.stopped = stopped;
  state.block_duplicates = duplicates;
  state.team = team;
  if (const YAML::Node* node = value_of("max_tasks")) {
    const std::string expected = fmt::format(
        "an integer in [1, {}] (every rank holds the plan, about 60 bytes per task)", kMaxMaxTasks);
    const auto max_tasks = detail::read_integer(*node, loc, "max_tasks", expected);
    if (max_tasks < 1 || static_cast<std::uint64_t>(max_tasks) > kMaxMaxTasks)
      fail(loc.at(*node),
           fmt::format("max_tasks = {} is out of range; expected {}", max_tasks, expected));
    state.max_tasks = static_cast<std::uint64_t>(max_tasks);
  }
  const YAML::Node* seed = value_of("seed");
  if (seed) plan.seed = state.seed = read_seed(*seed, loc);
  if (const YAML::Node* node = value_of("output")) {
    plan.output = detail::read_string(*node, loc, "output", "a file path");
    plan.output_location = loc.at(*node);
    if (const std::string problem = output_path_problem(plan.output); !problem.empty())
      fail(loc.at(*node), fmt::format("output {}; expected the path of a results file such as "
                                      "results/my-study.h5",
                                      problem));
  }
  if (const YAML::Node* node = value_of("on_unstable")) {
    const std::string mode = detail::read_string(*node, loc, "on_unstable", "store or error");
    if (mode != "store" && mode != "error")
      fail(loc.at(*node),
           fmt::format("on_unstable is '{}'; expected store or error", printable(mode)));
    plan.on_unstable_error = state.on_unstable_error = mode == "error";
  }

  const YAML::Node* blocks = value_of("blocks");
  if (!blocks) fail(where_root, "key 'blocks' is missing; expected blocks: a list of sweep blocks");
  if (!blocks->IsSequence() || blocks->size() == 0)
    fail(loc.at(*blocks),
         fmt::format("blocks is {}; expected a non-empty list of blocks",
                     blocks->IsSequence() ? "an empty list" : detail::show(*blocks)));
  // Every block is sized before any is expanded: a huge last block fails at once.
  std::vector<detail::BlockInput> inputs;
  std::uint64_t planned = 0;  // <= max_tasks
  int index = 0;
  for (const auto& node : *blocks) {
    detail::BlockInput block = block_input(node, index++, loc);
    if (detail::method_adapter(block.method).random && !seed)
      fail(block.where, fmt::format("a {} block needs a seed and the file has none; expected "
                                    "seed: <integer> at the top of the file",
                                    name_of(block.method)));
    planned += detail::block_grid_size(block, state.max_tasks - planned, state.max_tasks);
    plan.block_locations.push_back(block.where);
    inputs.push_back(std::move(block));
  }
  state.planned = planned;
  for (const auto& block : inputs) detail::expand_block(block, state);
  finish(plan, state);
  return plan;
}

namespace {

[[noreturn]] void refuse_file(const std::string& path, const std::string& what) {
  throw InputError(fmt::format("{}: {}; expected a readable YAML file of at most {} MiB",
                               printable(path), what, kMaxSweepFileBytes >> 20));
}

// Closes a file descriptor on every path out of read_sweep_text.
struct FileDescriptor {
  int fd = -1;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

std::string byte_shown(unsigned char c) { return fmt::format("0x{:02x}", c); }

}  // namespace

std::string read_sweep_text(const std::string& path) {
  // Refuse by type before opening: opening a device may have effects, reading one may not end.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    refuse_file(path, fmt::format("cannot read the sweep file ({})", std::strerror(errno)));
  if (S_ISDIR(info.st_mode)) refuse_file(path, "is a directory, not a sweep file");
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode))
    refuse_file(path, "is not a regular file (a device or a socket)");
  if (S_ISREG(info.st_mode) && static_cast<std::uint64_t>(info.st_size) > kMaxSweepFileBytes)
    refuse_file(path, fmt::format("the sweep file has {} bytes, more than the limit",
                                  static_cast<std::uint64_t>(info.st_size)));
  FileDescriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    refuse_file(path, fmt::format("cannot read the sweep file ({})", std::strerror(errno)));
  // Bounded read: a pipe, or a file that grows while it is read, stops at the limit.
  std::string text;
  char buffer[65536];
  while (true) {
    const ssize_t got = ::read(file.fd, buffer, sizeof buffer);
    if (got == 0) break;
    if (got < 0) {
      if (errno == EINTR) continue;
      refuse_file(path, fmt::format("cannot read the sweep file ({})", std::strerror(errno)));
    }
    text.append(buffer, static_cast<std::size_t>(got));
    if (text.size() > kMaxSweepFileBytes)
      refuse_file(path, "the sweep file is larger than the limit");
  }
  return text;
}

std::string output_path_problem(std::string_view path) {
  if (path.empty()) return "is empty";
  for (const char c : path) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte == 0) return "contains a NUL byte";
    if (byte < 0x20 || byte == 0x7f)
      return fmt::format("contains the control character {}", byte_shown(byte));
  }
  if (path.back() == '/') return fmt::format("'{}' ends in '/' (a directory, not a file)", path);
  const std::string_view last = path.substr(path.find_last_of('/') + 1);
  if (last == "." || last == "..")
    return fmt::format("'{}' names a directory ('{}'), not a file", path, last);
  return "";
}

Plan load_plan(const std::string& path) { return parse_plan(read_sweep_text(path), path); }

Plan plan_from_flags(const std::vector<Flag>& flags) {
  Plan plan;
  plan.name = "eval";
  plan.source = "command line";
  plan.yaml_sha256 = sha256_hex("");
  detail::PlanState state;
  state.max_tasks = kDefaultMaxTasks;  // one task: every flag must give one value
  detail::BlockInput block;
  block.where = "qsweep eval";
  block.from_flags = true;
  for (const auto& flag : flags) {
    const Locator loc = Locator::in_flag(flag.key);
    YAML::Node value;
    try {
      value = YAML::Load(flag.text);
    } catch (const YAML::Exception& e) {
      fail(loc.at(e.mark), fmt::format("cannot read '{}': {}; expected a value in YAML syntax "
                                       "(8, 0.9, [1, 2], {{servers: [1], p: 1}})",
                                       printable(flag.text), printable(e.msg)));
    }
    if (flag.key == "method") {
      block.method = method_of(value, loc);
    } else if (flag.key == "seed") {
      plan.seed = state.seed = read_seed(value, loc);
    } else {
      block.entries.push_back({flag.key, value, value, loc});
    }
  }
  plan.block_locations.push_back(block.where);
  detail::expand_block(block, state);
  finish(plan, state);
  return plan;
}

namespace {

// "numbers 2\n" when the task's method gives numbers of a version after the first (version 1
// adds nothing, so that the hashes of plans made before versions existed stay valid).
std::string numbers_line(const Task& task) {
  int (*version)(const Task&) = detail::method_adapter(task.method()).numbers;
  const int numbers = version != nullptr ? version(task) : 1;
  return numbers > 1 ? "numbers " + std::to_string(numbers) + "\n" : std::string();
}

}  // namespace

namespace detail {

KeyBits key_bits(const Task& task, std::string_view text) {
  Sha256 sha;
  sha.update(numbers_line(task));
  sha.update(text);
  const std::array<std::uint32_t, 8> words = sha.digest_words();
  return {std::uint64_t{words[0]} << 32 | words[1], std::uint64_t{words[2]} << 32 | words[3]};
}

PlanHasher::PlanHasher() { sha_.update("qsweep-plan-v2\n"); }

void PlanHasher::add(std::uint64_t id, int block, const KeyBits& key) {
  // Little-endian 64-bit words: id, block, key[0], key[1] (half a SHA-256 block per task).
  const std::array<std::uint64_t, 4> words{id, static_cast<std::uint64_t>(block), key[0], key[1]};
  std::array<char, sizeof words> bytes;
  for (std::size_t w = 0; w < words.size(); ++w)
    for (std::size_t b = 0; b < 8; ++b) bytes[8 * w + b] = static_cast<char>(words[w] >> (8 * b));
  sha_.update(std::string_view(bytes.data(), bytes.size()));
}

std::string content_text(Task task) {
  task.id = 0;
  task.block = 0;   // where it came from, not what it computes
  task.cost = 0.0;  // an estimate: improving the cost model must not break --resume
  return canonical_text(task);
}

}  // namespace detail

namespace {

// The plan hash before 2026-12-08 (legacy_plan_hash): the SHA-256 of every task's canonical text
// with its id and block.
class TextPlanHasher {
 public:
  TextPlanHasher() { sha_.update("qsweep-plan-v1\n"); }
  // `text`: the content text of `task`.
  void add(const Task& task, std::string_view text) {
    // The canonical text with the task's id and block: "{ID;METHOD;BLOCK;" replaces the leading
    // "{0;METHOD;0;" of its content text.
    constexpr std::string_view kNoId = "{0;";
    const std::size_t method_end = text.find(';', kNoId.size());
    if (text.substr(0, kNoId.size()) != kNoId || method_end == std::string_view::npos ||
        text.substr(method_end, 3) != ";0;")
      throw std::logic_error("TextPlanHasher: not a canonical text with id 0 and block 0");
    sha_.update(numbers_line(task));
    char head[48] = {'{'};
    char* end = std::to_chars(head + 1, head + 22, task.id).ptr;
    *end++ = ';';
    sha_.update(std::string_view(head, static_cast<std::size_t>(end - head)));
    sha_.update(text.substr(kNoId.size(), method_end + 1 - kNoId.size()));
    end = std::to_chars(head, head + 22, task.block).ptr;
    *end++ = ';';
    sha_.update(std::string_view(head, static_cast<std::size_t>(end - head)));
    sha_.update(text.substr(method_end + 3));
    sha_.update("\n");
  }
  std::string hex_digest() { return sha_.hex_digest(); }

 private:
  Sha256 sha_;
};

}  // namespace

std::string plan_hash(const std::vector<Task>& tasks) {
  detail::PlanHasher hasher;
  for (const Task& task : tasks)
    hasher.add(task, detail::key_bits(task, detail::content_text(task)));
  return hasher.hex_digest();
}

std::string plan_hash(const PlanTasks& tasks) {
  detail::PlanHasher hasher;
  for (std::uint64_t id = 0; id < tasks.size(); ++id) hasher.add(tasks.at(id), tasks.key_bits(id));
  return hasher.hex_digest();
}

std::string legacy_plan_hash(const Plan& plan) {
  TextPlanHasher hasher;
  for (const Task& task : plan.tasks) hasher.add(task, detail::content_text(task));
  return hash_with_refinements(hasher.hex_digest(), plan.refinements);
}

bool is_plan_hash(const Plan& plan, const std::string& stored) {
  return stored == plan.hash || stored == legacy_plan_hash(plan);
}

std::string hash_with_refinements(const std::string& tasks_hash,
                                  const std::vector<Refinement>& refinements) {
  if (refinements.empty()) return tasks_hash;  // the hashes of other plans stay as they were
  std::string text = tasks_hash;
  for (const Refinement& r : refinements) {
    // Doubles as hex floats: their exact values.
    text += fmt::format("\nrefine {} {} {} {} {:a} {} {:a} {}", r.block, r.axis, r.quantity,
                        static_cast<int>(r.spec.criterion), r.spec.tolerance, r.spec.max_points,
                        r.spec.crossing, r.spec.integer_axis);
  }
  return sha256_hex(text);
}

const detail::BlockGrid* PlanTasks::block_grid(int block) const {
  if (block < 0 || static_cast<std::size_t>(block) >= grids_.size()) return nullptr;
  return grids_[static_cast<std::size_t>(block)].get();
}

const Task PlanTasks::at(std::uint64_t id) const {
  if (id >= size())
    throw std::out_of_range(fmt::format("task {} of a plan of {} tasks", id, size()));
  Task task;
  if (id >= points_.size()) {
    task = given_[id - points_.size()];
  } else {
    const auto grid = std::upper_bound(grid_first_.begin(), grid_first_.end(), id) - 1;
    task = grids_[static_cast<std::size_t>(grid - grid_first_.begin())]->task(points_[id]);
    task.id = id;
  }
  const TaskEstimate& estimate = estimates_[id];
  task.cost = estimate.cost;
  task.memory = estimate.memory;
  task.result_memory = estimate.result_memory;
  return task;
}

Method PlanTasks::method(std::uint64_t id) const {
  if (id >= size())
    throw std::out_of_range(fmt::format("task {} of a plan of {} tasks", id, size()));
  return kinds_[estimates_[id].kind].method;
}

void PlanTasks::push_back(Task task) {
  if (task.id != size())
    throw std::logic_error("PlanTasks::push_back: a task by hand needs id == size()");
  estimates_.push_back({task.cost, static_cast<float>(task.memory),
                        static_cast<float>(task.result_memory), task.ranks, kind_of(task)});
  keys_.push_back(detail::key_bits(task, detail::content_text(task)));
  given_.push_back(std::move(task));
}

std::uint32_t PlanTasks::kind_of(const Task& task) {
  return detail::kind_index(kinds_, {task.method(), category(task)});
}

namespace {

std::string key_hex(const KeyBits& key) { return fmt::format("{:016x}{:016x}", key[0], key[1]); }

}  // namespace

std::string task_key(const Task& task) {
  return key_hex(detail::key_bits(task, detail::content_text(task)));
}

std::string PlanTasks::key(std::uint64_t id) const { return key_hex(keys_.at(id)); }

std::array<std::uint64_t, 2> stream_key(const Task& task) {
  void (*common)(Task&) = detail::method_adapter(task.method()).common_streams;
  Task shared;
  if (common != nullptr) {
    shared = task;
    common(shared);
  }
  const Task& keyed = common != nullptr ? shared : task;
  return detail::key_bits(keyed, detail::content_text(keyed));
}

std::string joined_sweep_text(const std::string& first, const std::string& second,
                              const std::vector<int>& second_blocks, const std::string& comment) {
  const auto root_of = [](const std::string& text) {
    try {
      return YAML::Load(text);
    } catch (const YAML::Exception& e) {
      throw InputError(fmt::format("a stored sweep is not YAML ({})", e.msg));
    }
  };
  const YAML::Node a = root_of(first);
  const YAML::Node b = root_of(second);
  const auto max_tasks_of = [](const YAML::Node& root) {
    return root["max_tasks"] ? root["max_tasks"].as<std::uint64_t>() : kDefaultMaxTasks;
  };
  YAML::Emitter out;
  out << YAML::Comment(comment) << YAML::Newline << YAML::BeginMap;
  for (const auto& kv : a) {
    const std::string key = kv.first.Scalar();
    if (key == "output" || key == "max_tasks" || key == "blocks") continue;
    out << YAML::Key << key << YAML::Value << kv.second;
  }
  out << YAML::Key << "max_tasks" << YAML::Value
      << std::min(kMaxMaxTasks, max_tasks_of(a) + max_tasks_of(b));
  out << YAML::Key << "blocks" << YAML::Value << YAML::BeginSeq;
  for (const auto& block : a["blocks"]) out << block;
  for (const int index : second_blocks) out << b["blocks"][static_cast<std::size_t>(index)];
  out << YAML::EndSeq << YAML::EndMap;
  if (!out.good()) throw std::logic_error("joined_sweep_text: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

namespace {

std::string value_name(const detail::KeySpec& spec) {
  switch (spec.kind) {
    case detail::Kind::integer:
      return "INT";
    case detail::Kind::real:
      return "NUMBER";
    case detail::Kind::boolean:
      return "BOOL";
    case detail::Kind::choice:
      return "NAME";
    case detail::Kind::load:
      return "LOAD";
    case detail::Kind::fixed:
      return "LIST";
  }
  return "VALUE";
}

}  // namespace

std::vector<KeyInfo> block_keys() {
  std::vector<KeyInfo> keys;
  for (Method method : kMethods)
    for (const auto& spec : detail::method_adapter(method).keys) {
      const std::string methods(name_of(method));
      auto same = std::find_if(keys.begin(), keys.end(),
                               [&](const KeyInfo& k) { return k.name == spec.name; });
      if (same == keys.end()) {
        keys.push_back({std::string(spec.name), methods, std::string(spec.help), value_name(spec)});
      } else {  // one key of several methods (policy, policy_d), its help once per meaning
        same->methods += ", " + methods;
        if (same->help.find(spec.help) == std::string::npos)
          same->help += "; " + std::string(spec.help);
      }
    }
  return keys;
}

}  // namespace qsweep::sweep
