// A MessageListener that keeps every completion, in order, for tests to read back.
#pragma once

#include <utility>
#include <vector>

#include "models/network/message.hpp"

namespace lockstep::testing {

struct Completions final : MessageListener {
  std::vector<std::pair<Message, MessageTimes>> done;
  void on_message_complete(const Message& m, const MessageTimes& t) override {
    done.emplace_back(m, t);
  }
  std::vector<std::pair<Message, Time>> failed;
  void on_message_failed(const Message& m, Time at) override { failed.emplace_back(m, at); }
};

}  // namespace lockstep::testing
