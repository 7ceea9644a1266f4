// The registry of methods: the one list of the method adapters, and what is generated from it.
// A new method adds its parameters to MethodParams (task.hpp), its adapter
// (method_<name>.cpp) and one line here (docs/architecture.md, "Adding a method").
#include <fmt/format.h>

#include <array>
#include <stdexcept>
#include <utility>
#include <variant>

#include "method.hpp"
#include "qsweep/sweep/plan.hpp"

namespace qsweep::sweep {
namespace detail {

const MethodAdapter& exact_method();
const MethodAdapter& simulate_method();
const MethodAdapter& ldp_method();
const MethodAdapter& meanfield_method();

const MethodAdapter& method_adapter(Method method) {
  static const std::array<const MethodAdapter*, kMethodCount> adapters = [] {
    const std::array<const MethodAdapter*, kMethodCount> all{&exact_method(), &simulate_method(),
                                                             &ldp_method(), &meanfield_method()};
    for (std::size_t i = 0; i < all.size(); ++i)
      if (all[i]->method != kMethods[i])
        throw std::logic_error("the method registry is not in Method order");
    return all;
  }();
  return *adapters.at(static_cast<std::size_t>(method));
}

void fail_from(const std::string& where, const InputError& error, std::string_view expected) {
  std::string message = error.what();
  if (message.find("; expected") == std::string::npos)
    message += fmt::format("; expected {}", expected);
  fail(where, message);
}

}  // namespace detail

std::vector<MethodInfo> methods() {
  std::vector<MethodInfo> infos;
  for (Method m : kMethods) {
    const detail::MethodAdapter& adapter = detail::method_adapter(m);
    infos.push_back({m, std::string(adapter.description), adapter.random});
  }
  return infos;
}

std::string method_list() {
  std::string list;
  for (std::size_t i = 0; i < kMethodCount; ++i)
    list += fmt::format("{}{}",
                        i == 0                  ? ""
                        : i + 1 == kMethodCount ? " or "
                                                : ", ",
                        name_of(kMethods[i]));
  return list;
}

MethodParams default_params(Method method) {
  static const auto defaults = []<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<MethodParams, kMethodCount>{MethodParams(std::in_place_index<I>)...};
  }
  (std::make_index_sequence<kMethodCount>{});
  return defaults.at(static_cast<std::size_t>(method));
}

const SystemParams& Task::system() const {
  return std::visit(
      [this](const auto& m) -> const SystemParams& {
        if constexpr (requires { m.system; })
          return m.system;
        else
          throw std::logic_error(
              fmt::format("a task of method {} has no system", name_of(method())));
      },
      params);
}

SystemParams& Task::system() {
  return const_cast<SystemParams&>(static_cast<const Task&>(*this).system());
}

std::string describe(const Task& task) {
  return detail::method_adapter(task.method()).describe(task);
}

std::string category(const Task& task) {
  return detail::method_adapter(task.method()).category(task);
}

}  // namespace qsweep::sweep
