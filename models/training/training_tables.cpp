#include "models/training/training_tables.hpp"

#include "models/training/defence_log.hpp"

namespace lockstep {

TableLayout training_op_layout() {
  using Row = TrainingOpRow;
  return layout<Row>(
      "rank_ops",
      {column("rank", &Row::rank), column("step", &Row::step), column("attempt", &Row::attempt),
       column("micro_batch", &Row::micro_batch), column("stage", &Row::stage),
       column("layer", &Row::layer), column("stream", &Row::stream), column("kind", &Row::kind),
       column("name", &Row::name), column("start_ps", &Row::start_ps),
       column("end_ps", &Row::end_ps), column("waited_ps", &Row::waited_ps),
       column("flops", &Row::flops), column("bytes", &Row::bytes),
       column("communicator", &Row::communicator), column("group", &Row::group),
       column("sequence", &Row::sequence)});
}

TableLayout rank_placement_layout() {
  using Row = RankPlacementRow;
  return layout<Row>("rank_placement",
                     {column("attempt", &Row::attempt), column("rank", &Row::rank),
                      column("gpu", &Row::gpu), column("node", &Row::node)});
}

TableLayout training_rank_step_layout() {
  using Row = TrainingRankStepRow;
  return layout<Row>(
      "rank_steps",
      {column("rank", &Row::rank), column("step", &Row::step), column("attempt", &Row::attempt),
       column("start_ps", &Row::start_ps), column("end_ps", &Row::end_ps),
       column("compute_ps", &Row::compute_ps), column("tp_comm_ps", &Row::tp_comm_ps),
       column("cp_comm_ps", &Row::cp_comm_ps), column("pp_comm_ps", &Row::pp_comm_ps),
       column("dp_comm_ps", &Row::dp_comm_ps), column("bubble_ps", &Row::bubble_ps),
       column("data_wait_ps", &Row::data_wait_ps), column("checkpoint_ps", &Row::checkpoint_ps),
       column("wait_for_others_ps", &Row::wait_for_others_ps), column("other_ps", &Row::other_ps)});
}

TableLayout training_step_layout() {
  using Row = TrainingStepRow;
  return layout<Row>("steps",
                     {column("step", &Row::step), column("attempt", &Row::attempt),
                      column("start_ps", &Row::start_ps), column("end_ps", &Row::end_ps),
                      column("slowest_rank", &Row::slowest_rank),
                      column("tokens_per_second", &Row::tokens_per_second),
                      column("tflops_per_gpu", &Row::tflops_per_gpu), column("mfu", &Row::mfu)});
}

TableLayout training_memory_layout() {
  using Row = TrainingMemoryRow;
  return layout<Row>(
      "rank_memory",
      {column("rank", &Row::rank), column("stage", &Row::stage),
       column("weights_bytes", &Row::weights_bytes),
       column("gradients_bytes", &Row::gradients_bytes),
       column("optimizer_bytes", &Row::optimizer_bytes),
       column("activations_bytes", &Row::activations_bytes),
       column("workspace_bytes", &Row::workspace_bytes), column("total_bytes", &Row::total_bytes),
       column("capacity_bytes", &Row::capacity_bytes), column("fits", &Row::fits)});
}

TableLayout blocked_rank_layout() {
  using Row = BlockedRankRow;
  return layout<Row>(
      "blocked_ranks",
      {column("rank", &Row::rank), column("gpu", &Row::gpu), column("step", &Row::step),
       column("stream", &Row::stream), column("waiting_in", &Row::waiting_in),
       column("group", &Row::group), column("since_ps", &Row::since_ps),
       column("never_arrived", &Row::never_arrived)});
}

TableLayout goodput_layout() {
  using Row = GoodputRow;
  return layout<Row>(
      "goodput", {column("total_ps", &Row::total_ps), column("useful_ps", &Row::useful_ps),
                  column("checkpointing_ps", &Row::checkpointing_ps),
                  column("restarting_ps", &Row::restarting_ps), column("lost_ps", &Row::lost_ps),
                  column("interruptions", &Row::interruptions),
                  column("steps_redone", &Row::steps_redone), column("goodput", &Row::goodput)});
}

TableLayout defence_layout() {
  using Row = DefenceRow;
  return layout<Row>("defences", {column("defence", &Row::defence), column("at_ps", &Row::at_ps),
                                  column("target", &Row::target), column("detail", &Row::detail)});
}

}  // namespace lockstep
