// bert: BERT-family encoders as llama.cpp reads architecture `bert` (bge, MiniLM, e5, gte):
// learned positions, post-LayerNorm blocks, bidirectional attention, ungated GELU feed-forward,
// pooled into one embedding per input, or scored by a classification head (pooling rank: a
// cross-encoder reranker; docs/embeddings.md). Separate attn_q/k/v with biases;
// a fused attn_qkv, nomic-bert and jina-bert are other architectures the loader refuses by name.
#include <array>

#include "worker/model/arch/arch_description.h"

namespace smallmind::worker {
namespace {

// Read by the loader's encoder path (gguf_loader.cc): the LayerNorm epsilon and attention.causal
// (which must be false); a reranker's label names (classifier.output_labels) are only names.
constexpr std::array<std::string_view, 3> kBertKeys = {
    "attention.layer_norm_epsilon", "attention.causal", "classifier.output_labels"};

}  // namespace

const ArchDescription kBertArch = {
    .name = "bert",
    .qkv_bias = true,
    .ffn_activation = FfnActivation::kGeluTanh,
    .encoder = true,
    .extra_keys = kBertKeys,
};

}  // namespace smallmind::worker
