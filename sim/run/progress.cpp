#include "sim/run/progress.hpp"

#include <algorithm>
#include <cstdio>

#include "sim/core/quantity.hpp"

namespace lockstep {
namespace {

constexpr auto kQuietStart = std::chrono::seconds(2);
constexpr auto kRedrawEvery = std::chrono::milliseconds(500);

}  // namespace

ProgressReporter::ProgressReporter(bool show, std::optional<Time> end,
                                   std::function<std::optional<double>()> fraction_done,
                                   std::function<bool()> stop)
    : show_(show), end_(end), fraction_done_(std::move(fraction_done)), stop_(std::move(stop)) {}

void ProgressReporter::on_progress(Simulator& sim) {
  if (stop_ && stop_()) {
    sim.stop();
    return;
  }
  if (!show_) return;
  const Clock::time_point now = Clock::now();
  if (now - started_ < kQuietStart || now - last_drawn_ < kRedrawEvery) return;
  const double interval = std::chrono::duration<double>(now - last_drawn_).count();
  const double rate = static_cast<double>(sim.events_processed() - events_at_last_draw_) / interval;
  std::optional<double> done = fraction_done_ ? fraction_done_() : std::nullopt;
  if (end_ && end_->ps() > 0) {
    const double by_time = sim.now().seconds() / end_->seconds();
    done = done ? std::max(*done, by_time) : by_time;
  }
  std::fprintf(stderr, "\r  simulated %s  %.2f M events/s",
               format_rounded(sim.now().since_start()).c_str(), rate * 1e-6);
  if (done && *done > 0) {
    const double elapsed = std::chrono::duration<double>(now - started_).count();
    std::fprintf(stderr, "  %.0f%%  ETA %.0f s", *done * 100, elapsed * (1 - *done) / *done);
  }
  std::fprintf(stderr, "   ");
  std::fflush(stderr);
  last_drawn_ = now;
  events_at_last_draw_ = sim.events_processed();
  drawn_ = true;
}

void ProgressReporter::finish() {
  if (drawn_) std::fprintf(stderr, "\r\033[K");
}

}  // namespace lockstep
