#include "models/collective/nccl_protocol.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace lockstep {
namespace {

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Splits NCCL's list syntax: the listed members of `known`, or `defaults` less the listed ones,
// in `known`'s order either way.
template <class T, class Named>
std::optional<std::vector<T>> allowed(std::string_view spec, const std::vector<T>& known,
                                      const std::vector<T>& defaults, Named named) {
  if (spec.empty()) return defaults;
  const bool exclude = spec.front() == '^';
  if (exclude) spec.remove_prefix(1);
  std::vector<T> listed;
  while (true) {
    const std::size_t comma = spec.find(',');
    const std::optional<T> one = named(spec.substr(0, comma));
    if (!one) return std::nullopt;
    listed.push_back(*one);
    if (comma == std::string_view::npos) break;
    spec.remove_prefix(comma + 1);
  }
  auto is_listed = [&listed](const T& x) {
    return std::find(listed.begin(), listed.end(), x) != listed.end();
  };
  std::vector<T> out;
  for (const T& candidate : known) {
    const bool is_default =
        std::find(defaults.begin(), defaults.end(), candidate) != defaults.end();
    if (exclude ? is_default && !is_listed(candidate) : is_listed(candidate))
      out.push_back(candidate);
  }
  return out;
}

}  // namespace

ProtocolCost protocol_cost(NcclProtocol protocol, NcclAlgorithm algorithm) {
  if (algorithm == NcclAlgorithm::kNvls) {
    return {1.0, 0.85, Duration::ns(25'000), {}, Duration::ns(2'800)};
  }
  if (algorithm == NcclAlgorithm::kCollNetDirect) {
    return {1.0, 1.0, Duration(), Duration::ns(28'300), Duration::ns(3'100)};
  }
  if (algorithm == NcclAlgorithm::kNvlsTree) {
    return {1.0, 0.85, Duration::ns(23'000), Duration::ns(11'300), Duration::ns(2'800)};
  }
  const bool tree = algorithm == NcclAlgorithm::kTree;
  switch (protocol) {
    case NcclProtocol::kLL:
      return {0.5, 1.0, Duration::ns(tree ? 6'800 : 6'600), Duration::ns(tree ? 2'300 : 0), {}};
    case NcclProtocol::kLL128:
      return {120.0 / 128.0, 1.0, Duration::ns(14'000), Duration::ns(tree ? 5'800 : 1'300),
              Duration::ns(tree ? 650 : 1'300)};
    case NcclProtocol::kSimple:
      return {1.0, 1.0, Duration::ns(8'400), Duration::ns(11'300), Duration::ns(2'800)};
  }
  return {};
}

double ll_bus_bandwidth_ceiling(std::int32_t nodes, bool amd_cpus, bool hopper) {
  if (nodes < 2) return hopper ? 141.0 : 87.7;
  if (nodes == 2) return amd_cpus ? 22.5 : 39.0;
  return amd_cpus ? 19.0 : 20.4;
}

Duration ring_step_overhead(NcclProtocol protocol, std::int32_t nodes, bool amd_cpus) {
  if (nodes < 2) return Duration();
  const Duration overhead =
      Duration::ns(amd_cpus ? 2'000 : 1'000) * (protocol == NcclProtocol::kSimple ? 3 : 1);
  return overhead - Duration::ns(600);
}

std::string_view protocol_name(NcclProtocol protocol) {
  switch (protocol) {
    case NcclProtocol::kLL:
      return "LL";
    case NcclProtocol::kLL128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
  }
  return "Simple";
}

std::optional<NcclProtocol> protocol_named(std::string_view name) {
  for (const NcclProtocol p : {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple}) {
    if (same_ignoring_case(name, protocol_name(p))) return p;
  }
  return std::nullopt;
}

std::string_view algorithm_name(NcclAlgorithm algorithm) {
  switch (algorithm) {
    case NcclAlgorithm::kRing:
      return "Ring";
    case NcclAlgorithm::kTree:
      return "Tree";
    case NcclAlgorithm::kNvls:
      return "NVLS";
    case NcclAlgorithm::kNvlsTree:
      return "NVLSTree";
    case NcclAlgorithm::kHierarchical:
      return "Hierarchical";
    case NcclAlgorithm::kCollNetDirect:
      return "CollNetDirect";
  }
  return "Ring";
}

std::optional<NcclAlgorithm> algorithm_named(std::string_view name) {
  for (const NcclAlgorithm a :
       {NcclAlgorithm::kRing, NcclAlgorithm::kTree, NcclAlgorithm::kNvls, NcclAlgorithm::kNvlsTree,
        NcclAlgorithm::kHierarchical, NcclAlgorithm::kCollNetDirect}) {
    if (same_ignoring_case(name, algorithm_name(a))) return a;
  }
  return std::nullopt;
}

std::optional<std::vector<NcclAlgorithm>> allowed_algorithms(std::string_view spec, bool collnet) {
  std::vector defaults{NcclAlgorithm::kRing, NcclAlgorithm::kTree, NcclAlgorithm::kNvls,
                       NcclAlgorithm::kNvlsTree};
  if (collnet) defaults.push_back(NcclAlgorithm::kCollNetDirect);
  return allowed(spec,
                 std::vector{NcclAlgorithm::kRing, NcclAlgorithm::kTree, NcclAlgorithm::kNvls,
                             NcclAlgorithm::kNvlsTree, NcclAlgorithm::kHierarchical,
                             NcclAlgorithm::kCollNetDirect},
                 defaults, algorithm_named);
}

std::optional<std::vector<NcclProtocol>> allowed_protocols(std::string_view spec) {
  const std::vector protocols{NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
  return allowed(spec, protocols, protocols, protocol_named);
}

}  // namespace lockstep
