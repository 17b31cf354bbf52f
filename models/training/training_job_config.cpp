#include "models/training/training_job_config.hpp"

#include <stdexcept>

namespace lockstep {

TransformerSpec transformer_of(const ModelConfig& model) {
  std::optional<TransformerSpec> preset = transformer_preset(model.preset);
  if (!preset) throw std::invalid_argument("no model preset '" + model.preset + "'");
  TransformerSpec spec = *preset;
  spec.layers = model.layers.value_or(spec.layers);
  spec.hidden = model.hidden.value_or(spec.hidden);
  spec.heads = model.heads.value_or(spec.heads);
  spec.kv_heads = model.kv_heads.value_or(spec.kv_heads);
  spec.ffn_hidden = model.ffn_hidden.value_or(spec.ffn_hidden);
  spec.vocabulary = model.vocabulary.value_or(spec.vocabulary);
  spec.sequence = model.sequence.value_or(spec.sequence);
  spec.type = model.data_type;
  return spec;
}

}  // namespace lockstep
