#include "models/training/transformer.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace lockstep {
namespace {

__extension__ using Wide = __int128;

Flops checked_flops(Wide count) {
  if (count > std::numeric_limits<std::int64_t>::max()) {
    throw std::overflow_error("a step's FLOPs exceed the int64 range of Flops");
  }
  return Flops(static_cast<std::int64_t>(count));
}

// `what` split over TP ranks; Megatron-core's divide() refuses a remainder.
std::int64_t split(std::int64_t what, std::int32_t tensor_parallel, const char* name) {
  if (tensor_parallel < 1) throw std::invalid_argument("tensor parallelism is at least 1");
  if (what % tensor_parallel != 0) {
    throw std::invalid_argument(std::string("tensor parallelism ") +
                                std::to_string(tensor_parallel) + " does not divide " + name +
                                " (" + std::to_string(what) + ")");
  }
  return what / tensor_parallel;
}

std::int64_t norm_parameters(const TransformerSpec& spec) {
  return spec.rms_norm ? spec.hidden : 2 * spec.hidden;
}

// GPT-3's GPT layout (reference.md section 4's closed forms hold exactly for it).
TransformerSpec gpt(std::int64_t layers, std::int64_t hidden, std::int64_t heads) {
  return TransformerSpec{.layers = layers,
                         .hidden = hidden,
                         .heads = heads,
                         .kv_heads = heads,
                         .ffn_hidden = 4 * hidden,
                         .gated_mlp = false,
                         .vocabulary = 51200,
                         .sequence = 2048};
}

TransformerSpec llama(std::int64_t layers, std::int64_t hidden, std::int64_t heads,
                      std::int64_t kv_heads, std::int64_t ffn, std::int64_t vocabulary,
                      std::int64_t sequence) {
  return TransformerSpec{.layers = layers,
                         .hidden = hidden,
                         .heads = heads,
                         .kv_heads = kv_heads,
                         .ffn_hidden = ffn,
                         .gated_mlp = true,
                         .vocabulary = vocabulary,
                         .sequence = sequence,
                         .tied_embeddings = false,
                         .linear_biases = false,
                         .rms_norm = true,
                         .learned_positions = false,
                         .dropout = false};
}

}  // namespace

const std::vector<TransformerPreset>& transformer_presets() {
  // GPT shapes use V = 51,200: Narayanan et al. pad GPT-2's 50,257 BPE tokens to a multiple of
  // 1024 ("we use a vocabulary size V of 51,200 (multiple of 1024)"), which every TP divides.
  // Llama shapes are the Hugging Face config.json values (hidden_size, num_hidden_layers,
  // num_attention_heads, num_key_value_heads, intermediate_size, vocab_size,
  // tie_word_embeddings false); the sequence is the pre-training context, not the long-context
  // extension.
  static const std::vector<TransformerPreset> presets{
      {"gpt3-175b", gpt(96, 12288, 96),
       "Brown et al. 2020, Table 2.1 (96 layers, d_model 12288, 96 heads, context 2048); V 51200 "
       "as padded by Narayanan et al. SC'21"},
      {"megatron-18.4b", gpt(40, 6144, 48),
       "Narayanan et al. SC'21, Table 1 (h 6144, 40 layers, 48 heads, s 2048, V 51200)"},
      {"llama2-7b", llama(32, 4096, 32, 32, 11008, 32000, 4096),
       "Touvron et al. 2023 (Llama 2, context 4096) and meta-llama/Llama-2-7b-hf config.json"},
      {"llama2-70b", llama(80, 8192, 64, 8, 28672, 32000, 4096),
       "Touvron et al. 2023 (Llama 2: GQA for 70B, context 4096) and meta-llama/Llama-2-70b-hf "
       "config.json"},
      {"llama3-8b", llama(32, 4096, 32, 8, 14336, 128256, 8192),
       "Llama 3 paper (Dubey et al. 2024) Table 3 and meta-llama/Meta-Llama-3-8B config.json "
       "(vocab_size 128256, context 8192)"},
      {"llama3-70b", llama(80, 8192, 64, 8, 28672, 128256, 8192),
       "Llama 3 paper (Dubey et al. 2024) Table 3 and meta-llama/Meta-Llama-3-70B config.json"},
      {"llama3.1-405b", llama(126, 16384, 128, 8, 53248, 128256, 8192),
       "Llama 3 paper (Dubey et al. 2024) Table 3 (126 layers, h 16384, ffn 53248, 128 heads, 8 "
       "KV heads, V 128256, pre-training context 8192) and meta-llama/Llama-3.1-405B config.json"},
  };
  return presets;
}

std::optional<TransformerSpec> transformer_preset(std::string_view name) {
  for (const TransformerPreset& preset : transformer_presets()) {
    if (preset.name == name) return preset.spec;
  }
  return std::nullopt;
}

void validate_transformer(const TransformerSpec& spec) {
  if (spec.layers < 1 || spec.hidden < 1 || spec.heads < 1 || spec.kv_heads < 1 ||
      spec.ffn_hidden < 1 || spec.vocabulary < 1 || spec.sequence < 1) {
    throw std::invalid_argument("a transformer's sizes are at least 1");
  }
  if (spec.hidden % spec.heads != 0) {
    throw std::invalid_argument("attention heads do not divide the hidden size");
  }
  if (spec.heads % spec.kv_heads != 0) {
    throw std::invalid_argument("KV heads do not divide the attention heads");
  }
}

std::int64_t head_dimension(const TransformerSpec& spec) { return spec.hidden / spec.heads; }

std::int64_t kv_width(const TransformerSpec& spec) { return spec.kv_heads * head_dimension(spec); }

std::int64_t fc1_width(const TransformerSpec& spec) {
  return spec.gated_mlp ? 2 * spec.ffn_hidden : spec.ffn_hidden;
}

std::int64_t layer_parameters(const TransformerSpec& spec, std::int32_t tensor_parallel) {
  validate_transformer(spec);
  const std::int64_t h = spec.hidden;
  // Q of all heads and K, V of the KV heads; a rank holds its share of each.
  const std::int64_t q_out =
      split(spec.heads, tensor_parallel, "attention heads") * head_dimension(spec);
  const std::int64_t qkv_out =
      q_out + 2 * split(spec.kv_heads, tensor_parallel, "KV heads") * head_dimension(spec);
  const std::int64_t fc1_out = split(fc1_width(spec), tensor_parallel, "FC1's width");
  const std::int64_t fc2_in = split(spec.ffn_hidden, tensor_parallel, "the MLP's inner size");
  const std::int64_t weights = h * qkv_out + q_out * h + h * fc1_out + fc2_in * h;
  // Column-parallel biases are split with their outputs; row-parallel ones (output projection,
  // FC2) are added after the reduction, whole on every rank.
  const std::int64_t biases = spec.linear_biases ? qkv_out + h + fc1_out + h : 0;
  return weights + biases + 2 * norm_parameters(spec);
}

std::int64_t embedding_parameters(const TransformerSpec& spec, std::int32_t tensor_parallel) {
  validate_transformer(spec);
  const std::int64_t words =
      split(spec.vocabulary, tensor_parallel, "the vocabulary") * spec.hidden;
  return words + (spec.learned_positions ? spec.sequence * spec.hidden : 0);
}

std::int64_t output_layer_parameters(const TransformerSpec& spec, std::int32_t tensor_parallel) {
  validate_transformer(spec);
  if (spec.tied_embeddings) return 0;
  return split(spec.vocabulary, tensor_parallel, "the vocabulary") * spec.hidden;
}

std::int64_t final_norm_parameters(const TransformerSpec& spec) {
  validate_transformer(spec);
  return norm_parameters(spec);
}

std::int64_t parameter_count(const TransformerSpec& spec) {
  return spec.layers * layer_parameters(spec, 1) + embedding_parameters(spec, 1) +
         output_layer_parameters(spec, 1) + final_norm_parameters(spec);
}

double narayanan_parameters(const TransformerSpec& spec) {
  const auto l = static_cast<double>(spec.layers);
  const auto h = static_cast<double>(spec.hidden);
  const auto v = static_cast<double>(spec.vocabulary);
  const auto s = static_cast<double>(spec.sequence);
  return 12.0 * l * h * h * (1.0 + 13.0 / (12.0 * h) + (v + s) / (12.0 * l * h));
}

Flops narayanan_step_flops(const TransformerSpec& spec, std::int64_t global_batch,
                           bool full_recomputation) {
  validate_transformer(spec);
  if (global_batch < 1) throw std::invalid_argument("the global batch is at least 1");
  // Expanded so it stays integer: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)) is
  // 72 B s l h^2 + 12 B s^2 l h + 6 B s h V, and with recomputation (one more forward of the
  // layers, not of the logits) 96 B s l h^2 + 16 B s^2 l h + 6 B s h V.
  const Wide b = global_batch;
  const Wide s = spec.sequence;
  const Wide l = spec.layers;
  const Wide h = spec.hidden;
  const Wide v = spec.vocabulary;
  const Wide layer_factor = full_recomputation ? 4 : 3;  // forward, backward (2x), recompute
  return checked_flops(layer_factor * (24 * b * s * l * h * h + 4 * b * s * s * l * h) +
                       6 * b * s * h * v);
}

Flops model_sample_flops(const TransformerSpec& spec) {
  validate_transformer(spec);
  const Wide s = spec.sequence;
  const Wide h = spec.hidden;
  const Wide projections = 2 * s * h * (h + 2 * kv_width(spec)) + 2 * s * h * h;
  const Wide attention = 2 * (2 * s * s * h);  // QK^T and AV, no causal halving
  const Wide mlp = 2 * s * h * fc1_width(spec) + 2 * s * spec.ffn_hidden * h;
  const Wide logits = 2 * s * h * spec.vocabulary;
  // Backward is twice forward: each GEMM's input gradient and weight gradient.
  return checked_flops(3 * (spec.layers * (projections + attention + mlp) + logits));
}

Flops model_step_flops(const TransformerSpec& spec, std::int64_t global_batch) {
  if (global_batch < 1) throw std::invalid_argument("the global batch is at least 1");
  return checked_flops(static_cast<Wide>(model_sample_flops(spec).count()) * global_batch);
}

TensorParallelWidths tensor_parallel_widths(const TransformerSpec& spec,
                                            std::int64_t tensor_parallel) {
  auto divided = [tensor_parallel](std::int64_t what) {
    if (tensor_parallel < 1 || what % tensor_parallel != 0) {
      throw std::invalid_argument("tensor parallelism divides heads, KV heads, ffn and vocabulary");
    }
    return what / tensor_parallel;
  };
  TensorParallelWidths w;
  const std::int64_t d = head_dimension(spec);
  w.heads = divided(spec.heads);
  w.q_width = w.heads * d;
  w.kv_width = divided(spec.kv_heads) * d;
  w.fc1 = divided(fc1_width(spec));
  w.ffn = divided(spec.ffn_hidden);
  w.vocabulary = divided(spec.vocabulary);
  return w;
}

std::int64_t context_parallel_tokens(const TransformerSpec& spec, std::int64_t context_parallel,
                                     std::int64_t tensor_parallel, bool sequence_parallel) {
  if (context_parallel < 1 || spec.sequence % context_parallel != 0) {
    throw std::invalid_argument("CP divides the sequence");
  }
  if (context_parallel > 1 && spec.sequence % (2 * context_parallel) != 0) {
    throw std::invalid_argument("CP cuts the sequence into 2 x CP equal chunks");
  }
  const std::int64_t tokens = spec.sequence / context_parallel;
  if (sequence_parallel && tensor_parallel > 1 && tokens % tensor_parallel != 0) {
    throw std::invalid_argument("with SP, TP divides a CP rank's tokens");
  }
  return tokens;
}

}  // namespace lockstep
