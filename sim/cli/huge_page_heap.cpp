#include "sim/cli/huge_page_heap.hpp"

#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>

namespace lockstep {
namespace {

constexpr std::uintptr_t kHugePage = std::uintptr_t{2} << 20;
constexpr std::uintptr_t kSmallPage = 4096;
constexpr std::uintptr_t kReserve = std::uintptr_t{256} << 20;
constexpr int kLargestMmapThreshold = 32 << 20;  // glibc's bound on 64-bit systems
// A glibc chunk asked for n bytes spans n + 8 rounded up to 16, from 16 bytes before the address
// returned; the free top that follows it has its header at its start.
constexpr std::uintptr_t kChunkOverhead = 8;
constexpr std::uintptr_t kTopHeader = 64;  // the top's header, and a margin, short of the boundary

std::uintptr_t huge_page_above(std::uintptr_t address) {
  return (address + kHugePage - 1) & ~(kHugePage - 1);
}

}  // namespace

void back_heap_with_huge_pages() {
  // glibc's mallopt returns 1 when it takes a setting; the sanitizers' replacement returns 0.
  if (mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) != 1) return;
  if (mallopt(M_TOP_PAD, static_cast<int>(kReserve)) != 1) return;
  // The kernel backs a 2 MiB block with a huge page only if nothing in it is mapped yet, and the
  // block where the free top of the heap begins already holds what static initialisation wrote.
  // So the top is taken up to just short of the next boundary, by a block larger than any free one
  // (so that it comes from the top), which glibc serves by growing the heap by the reserve too. The
  // only byte past the block it writes is the new top's header, still short of the boundary; the
  // block's own pages are never touched and cost no memory.
  const struct mallinfo2 heap = mallinfo2();
  const auto heap_end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  const std::uintptr_t top = heap_end - heap.keepcost;  // the free top runs to the heap's end
  const std::uintptr_t boundary =
      huge_page_above(top + (heap.fordblks - heap.keepcost) + kSmallPage);
  static void* const up_to_boundary = std::malloc(boundary - kTopHeader - top - kChunkOverhead);
  const auto grown_end = reinterpret_cast<std::uintptr_t>(sbrk(0));
  // Advice, not a requirement: a kernel without huge pages refuses it and small pages serve.
  if (up_to_boundary != nullptr && boundary < grown_end) {
    madvise(reinterpret_cast<void*>(boundary), grown_end - boundary, MADV_HUGEPAGE);
  }
}

}  // namespace lockstep
