// Parameter and FLOP counts of the transformer shapes against hand counts, Narayanan et al.'s
// closed forms (reference.md section 4) and the published model sizes.
#include <doctest/doctest.h>

#include <cctype>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string_view>

#include "models/training/transformer.hpp"
#include "small_transformers.hpp"

namespace lockstep {
namespace {

using testing::preset;
using testing::tiny_gpt;
using testing::tiny_llama;

double relative_error(double value, double reference) {
  return std::abs(value - reference) / reference;
}

TEST_CASE("presets are the named models, lower-case, each with a source") {
  for (const char* name : {"gpt3-175b", "megatron-18.4b", "llama2-7b", "llama2-70b", "llama3-8b",
                           "llama3-70b", "llama3.1-405b"}) {
    CAPTURE(std::string_view(name));
    CHECK(transformer_preset(name).has_value());
  }
  for (const TransformerPreset& p : transformer_presets()) {
    CAPTURE(std::string_view(p.name));
    CHECK_FALSE(p.source.empty());
    for (const char c : p.name) CHECK(std::tolower(static_cast<unsigned char>(c)) == c);
    CHECK_NOTHROW(validate_transformer(p.spec));
  }
  CHECK_FALSE(transformer_preset("GPT3-175B").has_value());
  const TransformerSpec llama405 = preset("llama3.1-405b");
  CHECK(llama405.layers == 126);
  CHECK(llama405.hidden == 16384);
  CHECK(llama405.ffn_hidden == 53248);
  CHECK(llama405.heads == 128);
  CHECK(llama405.kv_heads == 8);
  CHECK(llama405.vocabulary == 128256);
  CHECK(llama405.sequence == 8192);
}

TEST_CASE("a tiny GQA SwiGLU model's parameters, counted by hand") {
  const TransformerSpec spec = tiny_llama();
  // Per layer: Q 8x8, K and V 8x4 each (2 KV heads of 2), output 8x8, SwiGLU 3 x 8x16, two RMSNorm
  // weights of 8: 64 + 64 + 64 + 384 + 16.
  CHECK(layer_parameters(spec, 1) == 592);
  CHECK(embedding_parameters(spec, 1) == 32 * 8);
  CHECK(output_layer_parameters(spec, 1) == 32 * 8);
  CHECK(final_norm_parameters(spec) == 8);
  CHECK(parameter_count(spec) == 2 * 592 + 256 + 256 + 8);
  // TP 2: Q 8x4, K and V 8x2 each, output 4x8, FC1 8x16 (2 x 16 / 2), FC2 8x8, norms whole.
  CHECK(layer_parameters(spec, 2) == 32 + 32 + 32 + 128 + 64 + 16);
  CHECK(embedding_parameters(spec, 2) == 16 * 8);
  CHECK(output_layer_parameters(spec, 2) == 16 * 8);
}

TEST_CASE("a tiny GPT's parameters: 12 h^2 + 13 h a layer, (V + s) h, and the final LayerNorm") {
  const TransformerSpec spec = tiny_gpt();
  CHECK(layer_parameters(spec, 1) == 12 * 64 + 13 * 8);
  CHECK(embedding_parameters(spec, 1) == (64 + 16) * 8);
  CHECK(output_layer_parameters(spec, 1) == 0);
  CHECK(final_norm_parameters(spec) == 2 * 8);
  // TP 2 shards the weights and column-parallel biases (QKV 3h, FC1 4h) and keeps the
  // row-parallel biases (2h) and both LayerNorms (4h) whole: (12 h^2 + 7 h) / 2 + 6 h.
  CHECK(layer_parameters(spec, 2) == (12 * 64 + 7 * 8) / 2 + 6 * 8);
  CHECK(embedding_parameters(spec, 2) == 32 * 8 + 16 * 8);  // positions are not split
}

TEST_CASE("GPT-layout counts equal Narayanan's closed form plus the final LayerNorm it omits") {
  for (const TransformerSpec& spec : {tiny_gpt(), preset("megatron-18.4b"), preset("gpt3-175b")}) {
    CAPTURE(spec.hidden);
    CHECK(parameter_count(spec) ==
          std::llround(narayanan_parameters(spec)) + final_norm_parameters(spec));
  }
}

TEST_CASE("preset sizes match the published parameter counts") {
  struct Published {
    const char* name;
    double parameters;
  };
  // Brown et al. 175.0B; Narayanan et al. 18.4B; Meta's model cards 6.74B, 68.98B (HF's count
  // of the 70B checkpoint), 8.03B, 70.6B, 405B (405.85B in the checkpoint).
  for (const Published& p : {Published{"gpt3-175b", 175.0e9}, Published{"megatron-18.4b", 18.4e9},
                             Published{"llama2-7b", 6.74e9}, Published{"llama2-70b", 68.98e9},
                             Published{"llama3-8b", 8.03e9}, Published{"llama3-70b", 70.6e9},
                             Published{"llama3.1-405b", 405.8e9}}) {
    CAPTURE(std::string_view(p.name));
    CHECK(relative_error(static_cast<double>(parameter_count(preset(p.name))), p.parameters) <
          0.01);
  }
  // Llama 2 70B by hand: a layer is Q and O 8192^2 each, K and V 8192 x 1024 each, SwiGLU
  // 3 x 8192 x 28672, two norms of 8192; 80 layers, untied 32000 x 8192 embedding and output,
  // final norm.
  const std::int64_t llama70_layer =
      2 * 8192LL * 8192 + 2 * 8192LL * 1024 + 3 * 8192LL * 28672 + 2 * 8192;
  CHECK(parameter_count(preset("llama2-70b")) == 80 * llama70_layer + 2 * 32000LL * 8192 + 8192);
}

TEST_CASE("per-rank parameters summed over TP and PP shards give the model") {
  struct Case {
    const char* name;
    std::int64_t replicated_per_layer;  // on every TP rank: norms and row-parallel biases
    std::int64_t replicated_outside;    // final norm, and learned positions
    std::int64_t deepest_pipeline;      // a stage count that divides the layers
  };
  for (const Case& c :
       {Case{"megatron-18.4b", 6 * 6144, 2 * 6144 + 2048 * 6144, 8},
        Case{"llama2-70b", 2 * 8192, 8192, 16}, Case{"llama3.1-405b", 2 * 16384, 16384, 9}}) {
    const TransformerSpec spec = preset(c.name);
    for (const std::int32_t tp : {1, 2, 8}) {
      for (const std::int64_t pp : {std::int64_t{1}, std::int64_t{2}, c.deepest_pipeline}) {
        CAPTURE(std::string_view(c.name));
        CAPTURE(tp);
        CAPTURE(pp);
        REQUIRE(spec.layers % pp == 0);
        std::int64_t sum = 0;
        for (std::int64_t stage = 0; stage < pp; ++stage) {
          std::int64_t rank = spec.layers / pp * layer_parameters(spec, tp);
          if (stage == 0) rank += embedding_parameters(spec, tp);
          if (stage == pp - 1)
            rank += output_layer_parameters(spec, tp) + final_norm_parameters(spec);
          sum += tp * rank;
        }
        const std::int64_t copies = tp - 1;
        CHECK(sum - copies * (spec.layers * c.replicated_per_layer + c.replicated_outside) ==
              parameter_count(spec));
      }
    }
  }
}

TEST_CASE("TP must divide what Megatron-core splits") {
  const TransformerSpec llama70 = preset("llama2-70b");
  CHECK_THROWS_AS((void)layer_parameters(llama70, 16), std::invalid_argument);  // 8 KV heads
  CHECK_THROWS_AS((void)layer_parameters(llama70, 3), std::invalid_argument);
  TransformerSpec odd_vocabulary = tiny_gpt();
  odd_vocabulary.vocabulary = 63;
  CHECK_THROWS_AS((void)embedding_parameters(odd_vocabulary, 2), std::invalid_argument);
  TransformerSpec bad = tiny_gpt();
  bad.heads = 3;
  CHECK_THROWS_AS(validate_transformer(bad), std::invalid_argument);
  bad = tiny_llama();
  bad.kv_heads = 3;
  CHECK_THROWS_AS(validate_transformer(bad), std::invalid_argument);
}

TEST_CASE("Narayanan's step FLOPs, expanded, for a tiny GPT") {
  const TransformerSpec spec = tiny_gpt();  // l 2, h 8, s 16, V 64
  const std::int64_t b = 3;
  // 72 B s l h^2 + 12 B s^2 l h + 6 B s h V, and 96 / 16 / 6 with recomputation.
  const std::int64_t without = 72 * b * 16 * 2 * 64 + 12 * b * 256 * 2 * 8 + 6 * b * 16 * 8 * 64;
  const std::int64_t with = 96 * b * 16 * 2 * 64 + 16 * b * 256 * 2 * 8 + 6 * b * 16 * 8 * 64;
  CHECK(narayanan_step_flops(spec, b, false) == Flops(without));
  CHECK(narayanan_step_flops(spec, b, true) == Flops(with));
  CHECK(model_step_flops(spec, b) == Flops(without));
}

TEST_CASE("model FLOPs from the shapes equal Narayanan's for GPT-layout models") {
  for (const char* name : {"megatron-18.4b", "gpt3-175b"}) {
    CAPTURE(std::string_view(name));
    const TransformerSpec spec = preset(name);
    CHECK(model_step_flops(spec, 1024) == narayanan_step_flops(spec, 1024, false));
    // Recomputation adds one forward of the layers: 24 B s l h^2 + 4 B s^2 l h.
    const std::int64_t b = 1024, s = spec.sequence, l = spec.layers, h = spec.hidden;
    CHECK(narayanan_step_flops(spec, b, true).count() -
              narayanan_step_flops(spec, b, false).count() ==
          24 * b * s * l * h * h + 4 * b * s * s * l * h);
  }
}

TEST_CASE("model FLOPs of GQA and gated models: 6 x weights x tokens plus attention") {
  // Every weight of a layer and of the output layer takes part in one GEMM per token (2 FLOPs a
  // multiply-add, 3x for backward); attention adds 4 s^2 h a layer forward, 12 with backward.
  for (const char* name : {"llama2-70b", "llama3-8b", "llama3.1-405b"}) {
    CAPTURE(std::string_view(name));
    const TransformerSpec spec = preset(name);
    const std::int64_t s = spec.sequence, l = spec.layers, h = spec.hidden;
    const std::int64_t gemm_weights = parameter_count(spec) - embedding_parameters(spec, 1) -
                                      final_norm_parameters(spec) - l * 2 * h;
    CHECK(model_sample_flops(spec).count() == 6 * s * gemm_weights + 12 * l * s * s * h);
  }
  // GPT-3's 6 P D rule of thumb holds within the attention and embedding terms (a few percent).
  const TransformerSpec gpt3 = preset("gpt3-175b");
  const double rule = 6.0 * static_cast<double>(parameter_count(gpt3)) * 2048.0;
  CHECK(relative_error(static_cast<double>(model_sample_flops(gpt3).count()), rule) < 0.05);
}

TEST_CASE("a step beyond the int64 range of Flops is refused, not wrapped") {
  const TransformerSpec llama405 = preset("llama3.1-405b");
  CHECK_NOTHROW((void)model_step_flops(llama405, 16));
  CHECK_THROWS_AS((void)model_step_flops(llama405, 2048), std::overflow_error);
  CHECK_THROWS_AS((void)narayanan_step_flops(preset("gpt3-175b"), 4096, true), std::overflow_error);
}

}  // namespace
}  // namespace lockstep
