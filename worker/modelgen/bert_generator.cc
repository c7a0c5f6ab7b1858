#include "worker/modelgen/bert_generator.h"

#include <cmath>
#include <functional>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/modelgen/llama_gguf_builder.h"
#include "worker/modelgen/random_draws.h"

namespace smallmind::worker {
namespace {

constexpr char kWordStart[] = "\xE2\x96\x81";  // U+2581
constexpr int kTokenTypes = 2;

// The seed of tensor `name`: `seed` and the name's FNV-1a hash, so each value depends only on
// the seed, the tensor's name and its index.
uint64_t NameSeed(uint64_t seed, std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : name) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ULL;
  return seed ^ h;
}

// Adds `name` ([rows, cols], stored as `type`) whose element i is center + spread * uniform.
void AddDrawn(const BertGeneratorOptions& o, GgufWriter* w, const std::string& name, int64_t rows,
              int64_t cols, kernels::DType type, float center, float spread) {
  const uint64_t seed = NameSeed(o.seed, name);
  const int64_t dims[2] = {cols, rows};
  const size_t row_bytes =
      kernels::RowBytes(*kernels::GetDTypeTraits(static_cast<uint32_t>(type)), cols);
  w->AddTensor(
      name, type, std::span<const int64_t>(dims, rows == 1 ? 1 : 2), [=](std::span<uint8_t> out) {
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; r++) {
          for (int64_t c = 0; c < cols; c++) {
            row[c] = center + spread * UniformSigned(DrawBits(seed, uint64_t(r * cols + c)));
          }
          EncodeF32Row(row, type, out.data() + r * row_bytes);
        }
      });
}

void AddNorm(const BertGeneratorOptions& o, GgufWriter* w, const std::string& prefix) {
  AddDrawn(o, w, prefix + ".weight", 1, o.dim, kernels::DType::kF32, 1.0f, 0.1f);
  AddDrawn(o, w, prefix + ".bias", 1, o.dim, kernels::DType::kF32, 0.0f, 0.05f);
}

// A [rows, cols] matrix with spread 1 / sqrt(cols) and its [rows] bias.
void AddLinear(const BertGeneratorOptions& o, GgufWriter* w, const std::string& prefix,
               int64_t rows, int64_t cols) {
  const float spread = 1.0f / std::sqrt(static_cast<float>(cols));
  AddDrawn(o, w, prefix + ".weight", rows, cols, o.weight_type, 0.0f, spread);
  AddDrawn(o, w, prefix + ".bias", 1, rows, kernels::DType::kF32, 0.0f, 0.02f);
}

void AddLayer(const BertGeneratorOptions& o, GgufWriter* w, int l) {
  const std::string p = "blk." + std::to_string(l) + ".";
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
    AddLinear(o, w, p + m, o.dim, o.dim);
  }
  AddNorm(o, w, p + "attn_output_norm");
  AddLinear(o, w, p + "ffn_up", o.hidden_dim, o.dim);
  AddLinear(o, w, p + "ffn_down", o.dim, o.hidden_dim);
  AddNorm(o, w, p + "layer_output_norm");
}

struct VocabKeys {
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  uint32_t unk = 1, cls = 2, sep = 3, pad = 0, mask = 4;
};

shared::Result<VocabKeys> ReadVocab(const BertGeneratorOptions& o) {
  VocabKeys v;
  if (o.vocab_file.empty()) {
    v.tokens = SyntheticWordPieceTokens();
    v.types.assign(v.tokens.size(), 1);
    for (int i = 0; i < 5; i++) v.types[i] = 3;  // control
    return v;
  }
  SM_ASSIGN_OR_RETURN(std::unique_ptr<GgufFile> f, GgufFile::Open(o.vocab_file));
  SM_ASSIGN_OR_RETURN(std::string model, f->GetString("tokenizer.ggml.model"));
  if (model != "bert") {
    return shared::InvalidArgument(o.vocab_file + ": tokenizer.ggml.model is '" + model +
                                   "', not a bert (WordPiece) vocabulary");
  }
  SM_ASSIGN_OR_RETURN(v.tokens, f->GetStringArray("tokenizer.ggml.tokens"));
  SM_ASSIGN_OR_RETURN(v.types, f->GetI32Array("tokenizer.ggml.token_type"));
  SM_ASSIGN_OR_RETURN(v.unk, f->GetU32("tokenizer.ggml.unknown_token_id"));
  SM_ASSIGN_OR_RETURN(v.cls, f->GetU32("tokenizer.ggml.cls_token_id"));
  SM_ASSIGN_OR_RETURN(v.sep, f->GetU32("tokenizer.ggml.seperator_token_id"));
  SM_ASSIGN_OR_RETURN(v.pad, f->GetU32("tokenizer.ggml.padding_token_id"));
  SM_ASSIGN_OR_RETURN(v.mask, f->GetU32("tokenizer.ggml.mask_token_id"));
  return v;
}

void AddMetadata(const BertGeneratorOptions& o, const VocabKeys& v, GgufWriter* w) {
  w->AddString("general.architecture", "bert");
  w->AddString("general.name", o.name);
  w->AddU32("general.file_type", LlamaFileType(o.weight_type));
  w->AddU32("bert.context_length", static_cast<uint32_t>(o.context_length));
  w->AddU32("bert.embedding_length", static_cast<uint32_t>(o.dim));
  w->AddU32("bert.feed_forward_length", static_cast<uint32_t>(o.hidden_dim));
  w->AddU32("bert.block_count", static_cast<uint32_t>(o.n_layers));
  w->AddU32("bert.attention.head_count", static_cast<uint32_t>(o.n_heads));
  w->AddF32("bert.attention.layer_norm_epsilon", o.layer_norm_eps);
  w->AddBool("bert.attention.causal", false);
  w->AddU32("bert.pooling_type", static_cast<uint32_t>(o.pooling));
  if (o.rank_outputs > 1) {
    std::vector<std::string> labels;
    for (int i = 0; i < o.rank_outputs; i++) labels.push_back("LABEL_" + std::to_string(i));
    w->AddStringArray("bert.classifier.output_labels", labels);
  }
  w->AddU32("tokenizer.ggml.token_type_count", kTokenTypes);
  w->AddString("tokenizer.ggml.model", "bert");
  w->AddString("tokenizer.ggml.pre", "default");
  w->AddStringArray("tokenizer.ggml.tokens", v.tokens);
  w->AddI32Array("tokenizer.ggml.token_type", v.types);
  w->AddU32("tokenizer.ggml.unknown_token_id", v.unk);
  w->AddU32("tokenizer.ggml.seperator_token_id", v.sep);
  w->AddU32("tokenizer.ggml.padding_token_id", v.pad);
  w->AddU32("tokenizer.ggml.cls_token_id", v.cls);
  w->AddU32("tokenizer.ggml.bos_token_id", v.cls);  // llama.cpp's [CLS]: its BOS (default 101)
  w->AddU32("tokenizer.ggml.mask_token_id", v.mask);
}

}  // namespace

std::vector<std::string> SyntheticWordPieceTokens() {
  std::vector<std::string> t = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"};
  for (int c = 33; c < 127; c++) {
    if (c >= 'A' && c <= 'Z') continue;  // the normaliser lower-cases
    t.push_back(kWordStart + std::string(1, static_cast<char>(c)));
    t.push_back(std::string(1, static_cast<char>(c)));
  }
  for (const char* word : {"the", "hello", "world", "embed", "ding", "search", "query", "ment"}) {
    t.push_back(kWordStart + std::string(word));
    t.push_back(word);
  }
  return t;
}

shared::Result<BertGeneratorOptions> BertGeneratorPreset(std::string_view preset) {
  BertGeneratorOptions o;
  if (preset == "bert-tiny") return o;
  if (preset == "bert-tiny-rerank") {
    o.name = "smallmind-bert-tiny-rerank";
    o.pooling = PoolingType::kRank;
    o.rank_outputs = 1;
    return o;
  }
  if (preset == "bench-110M-bert" || preset == "bench-110M-bert-rerank") {
    o.name = "smallmind-" + std::string(preset);
    o.dim = 768;
    o.hidden_dim = 3072;
    o.n_layers = 12;
    o.n_heads = 12;
    o.context_length = 512;
    if (preset.ends_with("-rerank")) {
      o.pooling = PoolingType::kRank;
      o.rank_outputs = 1;
    }
    return o;
  }
  return shared::InvalidArgument(
      "unknown BERT preset '" + std::string(preset) +
      "' (presets: bert-tiny, bert-tiny-rerank, bench-110M-bert, bench-110M-bert-rerank)");
}

shared::Status ValidateBertGeneratorOptions(const BertGeneratorOptions& o) {
  if (o.dim < 1 || o.dim > 16384 || o.hidden_dim < 1 || o.hidden_dim > 65536 || o.n_layers < 1 ||
      o.n_layers > 256 || o.n_heads < 1 || o.dim % o.n_heads != 0 || o.context_length < 1 ||
      o.context_length > 65536) {
    return shared::InvalidArgument(
        "BERT shape out of range: dim, ffn, layers, heads (dividing dim) and context must be "
        "positive and at most 16384, 65536, 256, dim and 65536");
  }
  using kernels::DType;
  if (o.weight_type != DType::kF32 && o.weight_type != DType::kF16 &&
      o.weight_type != DType::kQ8_0) {
    return shared::InvalidArgument("BERT weights are written as f32, f16 or q8_0");
  }
  if (o.weight_type == DType::kQ8_0 && (o.dim % 32 != 0 || o.hidden_dim % 32 != 0)) {
    return shared::InvalidArgument("q8_0 needs dim and ffn multiples of 32");
  }
  if ((o.rank_outputs > 0) != (o.pooling == PoolingType::kRank) || o.rank_outputs < 0 ||
      o.rank_outputs > o.dim) {
    return shared::InvalidArgument(
        "a reranker needs pooling rank and 1..dim head outputs (rank_outputs), and rank "
        "pooling a head");
  }
  if (!std::isfinite(o.layer_norm_eps) || o.layer_norm_eps <= 0) {
    return shared::InvalidArgument("layer_norm_eps must be positive");
  }
  return shared::Status::Ok();
}

shared::Status WriteBertModel(const BertGeneratorOptions& o, const std::string& path) {
  SM_RETURN_IF_ERROR(ValidateBertGeneratorOptions(o));
  SM_ASSIGN_OR_RETURN(VocabKeys vocab, ReadVocab(o));
  GgufWriter w;
  AddMetadata(o, vocab, &w);
  const kernels::DType embd =
      o.weight_type == kernels::DType::kF16 ? kernels::DType::kF16 : kernels::DType::kF32;
  const auto n_vocab = static_cast<int64_t>(vocab.tokens.size());
  AddDrawn(o, &w, "token_embd.weight", n_vocab, o.dim, embd, 0.0f, 0.5f);
  AddDrawn(o, &w, "token_types.weight", kTokenTypes, o.dim, kernels::DType::kF32, 0.0f, 0.1f);
  AddDrawn(o, &w, "position_embd.weight", o.context_length, o.dim, embd, 0.0f, 0.1f);
  AddNorm(o, &w, "token_embd_norm");
  for (int l = 0; l < o.n_layers; l++) AddLayer(o, &w, l);
  if (o.rank_outputs > 0) {
    AddLinear(o, &w, "cls", o.dim, o.dim);
    // The classifier drawn 8x wider than a linear layer: random [CLS] states differ little
    // between documents, and scores spread over a few units tell a wrong ordering apart.
    AddDrawn(o, &w, "cls.output.weight", o.rank_outputs, o.dim, o.weight_type, 0.0f,
             8.0f / std::sqrt(static_cast<float>(o.dim)));
    AddDrawn(o, &w, "cls.output.bias", 1, o.rank_outputs, kernels::DType::kF32, 0.0f, 0.02f);
  }
  SM_RETURN_IF_ERROR(w.status());
  return w.WriteFile(path);
}

}  // namespace smallmind::worker
