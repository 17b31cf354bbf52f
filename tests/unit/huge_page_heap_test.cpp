#include <doctest/doctest.h>

#include <fstream>
#include <sstream>
#include <string>

// This test binary links sim/cli/huge_page_heap.cpp as lockstep does, so its heap was set up before
// main the same way. Sanitizers replace malloc, and then the set-up leaves the heap alone.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kMallocReplaced = true;
#else
constexpr bool kMallocReplaced = false;
#endif

namespace lockstep {
namespace {

// The largest part of the heap whose mapping carries the kernel's huge-page advice ("hg" among
// its VmFlags in /proc/self/smaps), in bytes.
long long largest_heap_part_advised_huge() {
  std::ifstream smaps("/proc/self/smaps");
  long long largest = 0;
  bool in_heap = false;
  long long size = 0;
  for (std::string line; std::getline(smaps, line);) {
    std::istringstream words(line);
    std::string first;
    words >> first;
    if (first.find('-') != std::string::npos && first.back() != ':') {  // a mapping's first line
      in_heap = line.find("[heap]") != std::string::npos;
      const auto dash = first.find('-');
      size = static_cast<long long>(std::stoull(first.substr(dash + 1), nullptr, 16) -
                                    std::stoull(first.substr(0, dash), nullptr, 16));
    } else if (first == "VmFlags:" && in_heap) {
      for (std::string flag; words >> flag;) {
        if (flag == "hg" && size > largest) largest = size;
      }
    }
  }
  return largest;
}

TEST_CASE("the heap is advised into huge pages before main" * doctest::skip(kMallocReplaced)) {
  // The reserve is 256 MiB, less what the allocations since have used of it.
  CHECK(largest_heap_part_advised_huge() >= (64LL << 20));
}

}  // namespace
}  // namespace lockstep
