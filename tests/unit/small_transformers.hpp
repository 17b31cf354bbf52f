// Transformer shapes the training tests share: the presets by name, and two tiny models small
// enough to count by hand.
#pragma once

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

#include "models/training/transformer.hpp"

namespace lockstep::testing {

inline TransformerSpec preset(std::string_view name) {
  const std::optional<TransformerSpec> spec = transformer_preset(name);
  REQUIRE(spec.has_value());
  return *spec;
}

// GPT layout: h 8, 2 heads of dimension 4, 4h MLP, V 64, s 16; biases, LayerNorm, learned
// positions, dropout, tied embeddings.
inline TransformerSpec tiny_gpt() {
  return TransformerSpec{.layers = 2,
                         .hidden = 8,
                         .heads = 2,
                         .kv_heads = 2,
                         .ffn_hidden = 32,
                         .vocabulary = 64,
                         .sequence = 16};
}

// Llama layout: h 8, 4 heads of dimension 2, 2 KV heads, SwiGLU of 16, V 32, s 4; RMSNorm, no
// biases, rotary positions, no dropout, untied output layer.
inline TransformerSpec tiny_llama() {
  return TransformerSpec{.layers = 2,
                         .hidden = 8,
                         .heads = 4,
                         .kv_heads = 2,
                         .ffn_hidden = 16,
                         .gated_mlp = true,
                         .vocabulary = 32,
                         .sequence = 4,
                         .tied_embeddings = false,
                         .linear_biases = false,
                         .rms_norm = true,
                         .learned_positions = false,
                         .dropout = false};
}

}  // namespace lockstep::testing
