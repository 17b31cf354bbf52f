// A RecordBackend that drops every row: for components whose tables nobody asked for, such as the
// network under each size of an nccl-tests sweep, where only the collective's time is recorded.
#pragma once

#include <memory>

#include "sim/core/table.hpp"

namespace lockstep {

class DiscardingBackend final : public RecordBackend {
 public:
  [[nodiscard]] std::unique_ptr<TableSink> open_table(const TableLayout& /*layout*/) override {
    return nullptr;
  }
};

}  // namespace lockstep
