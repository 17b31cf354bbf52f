#include "models/fabric/shared_buffer.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace lockstep {
namespace {

// IEEE 802.3 upper bounds on the time from deciding to pause to the peer stopping, in bit times.
std::int64_t pfc_response_bits(BitRate rate) {
  return rate > BitRate::gbps(100) ? 463'360 : 201'728;
}

}  // namespace

Bytes derived_headroom(BitRate rate, Duration cable_delay, Bytes mtu) {
  __extension__ using Wide = __int128;
  const Wide in_flight_bits =
      static_cast<Wide>(rate.bps()) * cable_delay.ps() * 2 / 1'000'000'000'000;
  const Wide bits = in_flight_bits + pfc_response_bits(rate);
  return Bytes(static_cast<std::int64_t>((bits + 7) / 8)) + mtu * 2;
}

SharedBuffer::SharedBuffer(const SwitchConfig& config, std::vector<Bytes> headroom_per_port)
    : config_(config), use_(headroom_per_port.size() * kTrafficClasses) {
  std::int64_t reserved = 0;
  const auto lossless_classes = static_cast<std::int64_t>(config.pfc.lossless.count());
  for (const Bytes& h : headroom_per_port) {
    headroom_size_.push_back(h.count());
    reserved += h.count() * lossless_classes;
  }
  shared_size_ = config.buffer.count() - reserved;
  if (shared_size_ <= 0) {
    throw std::invalid_argument("switch buffer " + std::to_string(config.buffer.count()) +
                                " B is smaller than the PFC headroom it must reserve (" +
                                std::to_string(reserved) + " B)");
  }
}

SharedBuffer::ClassUse& SharedBuffer::use(std::uint16_t port, int traffic_class) {
  return use_[static_cast<std::size_t>(port) * kTrafficClasses +
              static_cast<std::size_t>(traffic_class)];
}

const SharedBuffer::ClassUse& SharedBuffer::use(std::uint16_t port, int traffic_class) const {
  return use_[static_cast<std::size_t>(port) * kTrafficClasses +
              static_cast<std::size_t>(traffic_class)];
}

std::int64_t SharedBuffer::threshold(double alpha) const {
  return static_cast<std::int64_t>(alpha * static_cast<double>(shared_size_ - shared_used_));
}

SharedBuffer::Admission SharedBuffer::admit(std::uint16_t port, int traffic_class,
                                            std::int64_t bytes, std::int64_t egress_queue_bytes) {
  ClassUse& u = use(port, traffic_class);
  const bool lossless = config_.pfc.lossless.test(static_cast<std::size_t>(traffic_class));
  const bool fits_shared = shared_used_ + bytes <= shared_size_;
  // Once a lossless class is past its threshold (XOFF sent), it stays in headroom until it drains.
  const bool under_threshold =
      lossless ? u.headroom == 0 && u.shared + bytes <= threshold(config_.pfc.alpha)
               : egress_queue_bytes + bytes <= threshold(config_.lossy_alpha);
  if (fits_shared && under_threshold) {
    u.shared += bytes;
    shared_used_ += bytes;
    return Admission::kShared;
  }
  if (lossless && u.headroom + bytes <= headroom_size_[port]) {
    u.headroom += bytes;
    return Admission::kHeadroom;
  }
  return Admission::kDrop;
}

void SharedBuffer::release(std::uint16_t port, int traffic_class, std::int64_t bytes) {
  ClassUse& u = use(port, traffic_class);
  const std::int64_t from_headroom = std::min(u.headroom, bytes);
  u.headroom -= from_headroom;
  u.shared -= bytes - from_headroom;
  shared_used_ -= bytes - from_headroom;
}

bool SharedBuffer::over_xoff(std::uint16_t port, int traffic_class) const {
  const ClassUse& u = use(port, traffic_class);
  return u.headroom > 0 || u.shared >= threshold(config_.pfc.alpha);
}

bool SharedBuffer::below_xon(std::uint16_t port, int traffic_class) const {
  const ClassUse& u = use(port, traffic_class);
  return u.headroom == 0 && u.shared + config_.pfc.xon_gap.count() <= threshold(config_.pfc.alpha);
}

std::int64_t SharedBuffer::headroom_size(std::uint16_t port) const { return headroom_size_[port]; }

}  // namespace lockstep
