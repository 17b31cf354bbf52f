// nccl-tests' input and output conventions, which users' scripts depend on.
#include "models/collective/nccl_tests.hpp"
#include "models/collective/nccl_choice.hpp"
#include "models/collective/nccl_protocol.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace lockstep {
namespace {

using namespace nccl_tests;

TEST_CASE("sizes read as nccl-tests reads them: bytes, or K, M, G in powers of 1024") {
  CHECK(parse_size("8") == Bytes(8));
  CHECK(parse_size("128K") == Bytes(131'072));
  CHECK(parse_size("1M") == Bytes(1'048'576));
  CHECK(parse_size("8G") == Bytes(8'589'934'592));
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("-8"));
  CHECK_FALSE(parse_size("8GB"));
  CHECK_FALSE(parse_size("1.5M"));
  CHECK_FALSE(parse_size("99999999999G"));
}

TEST_CASE("the sweep multiplies from -b by -f and stops at -e") {
  CHECK(size_sweep(Bytes(8), Bytes(128), 2) ==
        std::vector<Bytes>{Bytes(8), Bytes(16), Bytes(32), Bytes(64), Bytes(128)});
  CHECK(size_sweep(Bytes(8), Bytes(100), 4) == std::vector<Bytes>{Bytes(8), Bytes(32)});
  CHECK(size_sweep(Bytes(32), Bytes(32), 2) == std::vector<Bytes>{Bytes(32)});
}

TEST_CASE("counts are floats, per rank for the gathering and scattering operations") {
  CHECK(shape(CollectiveOp::kAllReduce, Bytes(1'000'003), 8).size == Bytes(1'000'000));
  CHECK(shape(CollectiveOp::kAllReduce, Bytes(1'000'003), 8).count == 250'000);
  CHECK(shape(CollectiveOp::kAllGather, Bytes(1'000), 8).size == Bytes(992));
  CHECK(shape(CollectiveOp::kAllGather, Bytes(1'000), 8).count == 31);
  CHECK(redop(CollectiveOp::kReduceScatter) == "sum");
  CHECK(redop(CollectiveOp::kAllToAll) == "none");
}

// 1 GiB all-reduce on 8 ranks in 5 ms: algbw 214.75 GB/s, busbw x 1.75 = 375.81 GB/s.
TEST_CASE("a row has nccl-tests' columns, widths and bandwidths") {
  const Shape s = shape(CollectiveOp::kAllReduce, Bytes(1'073'741'824), 8);
  const std::string line =
      row(CollectiveOp::kAllReduce, s, 8, Duration::us(5'000), Duration::us(5'000));
  CHECK(line ==
        "  1073741824     268435456     float     sum      -1   5000.0  214.75  375.81    N/A   "
        "5000.0  214.75  375.81    N/A");
  CHECK(line.size() == 116);
  CHECK(row(CollectiveOp::kSendRecv, shape(CollectiveOp::kSendRecv, Bytes(8), 2), 2,
            Duration::ps(12'345'678), Duration::ps(12'345'678))
            .find("    12.35    0.00    0.00") != std::string::npos);
  CHECK(row(CollectiveOp::kAllReduce, s, 8, Duration::ms(20), Duration::ms(20)).find("  20000  ") !=
        std::string::npos);
  const std::vector<std::string> header = header_lines();
  REQUIRE(header.size() == 3);
  CHECK(header[1] ==
        "#       size         count      type   redop    root     time   algbw   busbw "
        "#wrong     time   algbw   busbw #wrong");
  CHECK(header[0].find("out-of-place") == 63);
  CHECK(header[0].find("in-place") == 98);
  for (const std::string& header_line : header) CHECK(header_line.size() == 116);
  CHECK(closing_lines(375.81) == std::vector<std::string>{"# Out of bounds values : 0 OK",
                                                          "# Avg bus bandwidth    : 375.81 "});
}

TEST_CASE("NCCL_ALGO and NCCL_PROTO lists allow, and ^lists exclude, case-insensitively") {
  using Protocols = std::vector<NcclProtocol>;
  CHECK(allowed_protocols("") ==
        Protocols{NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple});
  CHECK(allowed_protocols("simple") == Protocols{NcclProtocol::kSimple});
  CHECK(allowed_protocols("^LL128") == Protocols{NcclProtocol::kLL, NcclProtocol::kSimple});
  CHECK(allowed_protocols("LL,LL128") == Protocols{NcclProtocol::kLL, NcclProtocol::kLL128});
  CHECK_FALSE(allowed_protocols("LL256"));
  CHECK_FALSE(allowed_protocols("LL,"));
  CHECK(allowed_algorithms("Tree,Ring") ==
        std::vector<NcclAlgorithm>{NcclAlgorithm::kRing, NcclAlgorithm::kTree});
  CHECK(allowed_algorithms("^tree") == std::vector<NcclAlgorithm>{NcclAlgorithm::kRing,
                                                                  NcclAlgorithm::kNvls,
                                                                  NcclAlgorithm::kNvlsTree});
  CHECK(allowed_algorithms("nvls") == std::vector<NcclAlgorithm>{NcclAlgorithm::kNvls});
  CHECK(allowed_algorithms("^NVLS,NVLSTree") ==
        std::vector<NcclAlgorithm>{NcclAlgorithm::kRing, NcclAlgorithm::kTree});
  // lockstep's own algorithm only when named.
  CHECK(allowed_algorithms("hierarchical,ring") ==
        std::vector<NcclAlgorithm>{NcclAlgorithm::kRing, NcclAlgorithm::kHierarchical});
}

// NCCL's tuner table for all-reduce on NVSwitch nodes: NVLS on one node, NVLS-Tree across nodes,
// each with Simple only and with two or more GPUs per node; neither where the switch cannot
// reduce (dgx-a100); the other operations run the ring only.
TEST_CASE("the pairs NCCL could run follow the nodes, the switch and the operation") {
  using Pair = std::pair<NcclAlgorithm, NcclProtocol>;
  const std::vector<NcclAlgorithm> algorithms = *allowed_algorithms("");
  const std::vector<NcclProtocol> simple{NcclProtocol::kSimple};
  CHECK(runnable_pairs(CollectiveOp::kAllReduce, algorithms, simple, true, 1, 8) ==
        std::vector<Pair>{{NcclAlgorithm::kRing, NcclProtocol::kSimple},
                          {NcclAlgorithm::kTree, NcclProtocol::kSimple},
                          {NcclAlgorithm::kNvls, NcclProtocol::kSimple}});
  CHECK(runnable_pairs(CollectiveOp::kAllReduce, algorithms, simple, true, 2, 8) ==
        std::vector<Pair>{{NcclAlgorithm::kRing, NcclProtocol::kSimple},
                          {NcclAlgorithm::kTree, NcclProtocol::kSimple},
                          {NcclAlgorithm::kNvlsTree, NcclProtocol::kSimple}});
  CHECK(runnable_pairs(CollectiveOp::kAllReduce, algorithms, simple, true, 2, 1).size() == 2);
  CHECK(runnable_pairs(CollectiveOp::kAllReduce, algorithms, simple, false, 2, 8).size() == 2);
  CHECK(runnable_pairs(CollectiveOp::kAllReduce, {NcclAlgorithm::kNvlsTree},
                       {NcclProtocol::kLL, NcclProtocol::kLL128}, true, 2, 8)
            .empty());
  CHECK(runnable_pairs(CollectiveOp::kAllGather, algorithms, simple, true, 2, 8) ==
        std::vector<Pair>{{NcclAlgorithm::kRing, NcclProtocol::kSimple}});
}

}  // namespace
}  // namespace lockstep
