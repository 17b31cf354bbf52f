// The queue pair's layout that the NIC's prefetches rely on (queue_pair.hpp): the sender's fields
// in its first kSenderLines cache lines, the receiver's in the kReceiverLines after them. A field
// added to either block that pushes the next one down would leave lines the NIC does not fetch.
#include <doctest/doctest.h>

#include <cstddef>

#include "models/transport/queue_pair.hpp"

namespace lockstep {
namespace {

// QueuePair is not standard-layout (it holds a deque and optionals), where offsetof is
// conditionally supported; GCC and Clang give the offsets of its members all the same.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
constexpr std::size_t kReceiverStart = offsetof(QueuePair, expected_sequence);
constexpr std::size_t kColdStart = offsetof(QueuePair, messages);
constexpr std::size_t kLastReceiverField = offsetof(QueuePair, cnps_sent);
constexpr std::size_t kLastSenderField = offsetof(QueuePair, failed_at);
#pragma GCC diagnostic pop

TEST_CASE("a queue pair's sender and receiver fields fill the cache lines its NIC fetches") {
  CHECK(alignof(QueuePair) == 64);
  CHECK(kReceiverStart == 64 * QueuePair::kSenderLines);
  CHECK(kColdStart == 64 * (QueuePair::kSenderLines + QueuePair::kReceiverLines));
  // Each block's last field ends inside its lines, the padding after it unused.
  CHECK(kLastSenderField + sizeof(std::optional<Time>) <= kReceiverStart);
  CHECK(kLastSenderField + sizeof(std::optional<Time>) > kReceiverStart - 64);
  CHECK(kLastReceiverField + sizeof(std::int64_t) > kColdStart - 64);
}

}  // namespace
}  // namespace lockstep
