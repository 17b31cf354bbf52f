// A two-tier leaf-spine (folded Clos) fabric: hosts on leaf switches, every leaf linked to every
// spine, possibly by several parallel cables. Oversubscription is a choice: a leaf's host-facing
// capacity over its uplink capacity (see oversubscription()). It leaves out multi-plane and
// three-tier (super-spine) designs: use the fat tree or an explicit topology for those. Units as
// topology.hpp.
//
// Numbering: host x is on leaf floor(x / hosts_per_leaf); leaf l is node H + l ("leaf<l>"), spine s
// is node H + leaves + s ("spine<s>").
// Cable and port order: host cables (host order), then for each leaf l its uplinks u = 0 ..
// uplinks_per_leaf-1, uplink u going to spine u mod spines (round robin, so uplinks beyond the
// spine count become parallel cables). Hence leaf l has its hosts at ports 0..hosts_per_leaf-1 and
// uplink u at port hosts_per_leaf + u; spine s has its cables in leaf order, and within one leaf in
// uplink order.
#pragma once

#include <cstdint>

#include "models/fabric/topology.hpp"
#include "sim/core/bytes.hpp"

namespace lockstep {

struct LeafSpineSpec {
  std::int32_t leaves = 0;            // >= 1
  std::int32_t spines = 0;            // >= 1
  std::int32_t hosts_per_leaf = 0;    // >= 1
  std::int32_t uplinks_per_leaf = 0;  // >= spines, so that every leaf reaches every spine
  LinkSpec host_link;                 // host NIC to leaf
  LinkSpec fabric_link;               // leaf to spine
  Bytes switch_buffer;
};

// Throws std::invalid_argument naming the first bad field.
[[nodiscard]] Topology build_leaf_spine(const LeafSpineSpec& spec);

// hosts_per_leaf * host rate / (uplinks_per_leaf * fabric rate): 1 is non-blocking, 3 means a leaf
// can take in three times what it can send up.
[[nodiscard]] double oversubscription(const LeafSpineSpec& spec);

}  // namespace lockstep
