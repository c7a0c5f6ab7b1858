// smallmind-modelgen: writes llama-shaped GGUF models for tests and benchmarks.
//   smallmind-modelgen [--preset tiny|bench-110M|bench-1B] [--type T] [--seed N]
//                      [--dim N] [--layers N] [--heads N] [--kv-heads N] [--ffn N] [--vocab N]
//                      [--context N] [--embd-type T] [--name S]
//                      [--arch llama|qwen3|qwen3moe|phi3|smollm3|gemma2|gemma3|gpt-oss|
//                              qwen2moe|olmoe]
//                      [--experts N --experts-used K [--shared-ffn N]] [--window N]
//                      [--attn-softcap X]
//                      [--final-softcap X] [--grow-layers N [--grow-epsilon E]]
//                      [--chat-template FILE] [--special-token TEXT]... [--bos-token TEXT]
//                      [--eos-token TEXT] -o out.gguf
//   smallmind-modelgen --from-llama2c model.bin --tokenizer tok.bin [--type T] -o out.gguf
//   smallmind-modelgen --bert bert-tiny|bert-tiny-rerank|bench-110M-bert[-rerank]
//                      [--bert-vocab VOCAB.gguf]
//                      [--pooling mean|cls|last] [--type f32|f16|q8_0] [--seed N] -o out.gguf
// T: f32 | f16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | iq4_nl | q3_k | q4_k | q5_k | q6_k | iq4_xs |
// mxfp4,
// every 2-D weight that type, or one of llama.cpp's mixes q4_k_m | q5_k_m | q2_k | q3_k_s | q3_k_m
// | mxfp4_moe (worker/modelgen/quant_mix.h); a K-quant matrix whose rows are no multiple of 256
// takes llama.cpp's fallback type (Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K / Q3_K / IQ4_XS
// -> IQ4_NL). Prints what it wrote (shapes, tensor types, parameter count, bytes); errors go to
// stderr, exit 1.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "shared/command_line.h"
#include "shared/status.h"
#include "worker/modelgen/bert_generator.h"
#include "worker/modelgen/llama2c_to_gguf.h"
#include "worker/modelgen/model_generator.h"

namespace {

using smallmind::shared::Result;
namespace w = smallmind::worker;

struct Flags {
  std::string out;
  std::optional<std::string> bert;  // a BERT preset: write a bert model instead
  std::string bert_vocab;           // a bert vocabulary GGUF to copy; empty: synthetic
  std::string pooling;  // --bert: empty keeps the preset's (mean; rank for the -rerank ones)
  std::optional<std::string> preset;  // default tiny
  std::string type = "f32";
  std::optional<std::string> embd_type;
  std::optional<uint64_t> seed;
  std::optional<std::string> name;
  std::optional<int> dim, layers, heads, kv_heads, head_dim, ffn, vocab, context;
  std::optional<int> experts, experts_used, shared_ffn;
  std::optional<float> classifier_gain;
  std::optional<float> rope_theta, embd_spread;
  std::optional<int> grow_layers;
  std::optional<float> grow_epsilon;
  std::optional<int> window;
  std::optional<float> attn_softcap, final_softcap;
  bool tied = false;
  std::string rope_freqs;  // "" or "llama3"
  std::optional<std::string> arch;
  std::optional<int> rope_dims, rope_orig_context, sliding_window;  // phi3
  std::optional<float> yarn_factor;                                 // gpt-oss
  bool longrope = false;
  std::string chat_template;  // a file
  std::optional<std::string> bos_token, eos_token;
  std::vector<std::string> special_tokens;
  std::string from_llama2c;
  std::string tokenizer;
};

// "1234567" -> "1,234,567".
std::string Grouped(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); i++) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

void PrintSummary(const std::string& path, const w::GgufBuildSummary& s) {
  const w::ModelConfig& c = s.config;
  std::printf("wrote %s\n", path.c_str());
  std::printf(
      "  %s: dim %d, ffn %d, %d layers, %d heads, %d kv heads, head size %d, vocab %d, "
      "context %d\n",
      c.architecture.c_str(), c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads,
      c.head_dim(), c.vocab_size, c.context_length);
  if (c.moe()) {
    std::printf("  experts: %d, %d used per token, each ffn %d\n", c.n_experts, c.n_experts_used,
                c.expert_ffn_dim);
    if (c.shared_expert_ffn_dim > 0) {
      std::printf("  shared expert: ffn %d, sigmoid-gated\n", c.shared_expert_ffn_dim);
    }
  }
  std::printf("  file type %s; tensors:",
              smallmind::kernels::GetDTypeTraits(static_cast<uint32_t>(s.file_type))->name);
  for (const auto& [type, count] : s.tensors_per_type) std::printf(" %d %s", count, type.c_str());
  std::printf("\n  parameters %s (%.1f M); %s bytes (%.1f MiB)\n",
              Grouped(s.parameter_count).c_str(), static_cast<double>(s.parameter_count) / 1e6,
              Grouped(s.file_bytes).c_str(), static_cast<double>(s.file_bytes) / (1 << 20));
  for (const std::string& note : s.notes) std::printf("  note: %s\n", note.c_str());
}

// The whole file at `path` (a chat template).
Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return smallmind::shared::InvalidArgument("cannot read '" + path + "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return smallmind::shared::InvalidArgument("cannot read '" + path + "'");
  return text;
}

// --chat-template and the vocabulary's chat tokens.
smallmind::shared::Status SetChatOptions(const Flags& f, w::GeneratorOptions* o) {
  if (!f.chat_template.empty()) {
    SM_ASSIGN_OR_RETURN(o->chat_template, ReadTextFile(f.chat_template));
    if (o->chat_template.empty()) {
      return smallmind::shared::InvalidArgument("chat template '" + f.chat_template + "' is empty");
    }
  }
  o->bos_token = f.bos_token.value_or("");
  o->eos_token = f.eos_token.value_or("");
  o->special_tokens = f.special_tokens;
  return smallmind::shared::Status::Ok();
}

Result<w::GeneratorOptions> OptionsFromFlags(const Flags& f) {
  SM_ASSIGN_OR_RETURN(w::GeneratorOptions o, w::GeneratorPreset(f.preset.value_or("tiny")));
  SM_RETURN_IF_ERROR(w::SetWeightScheme(f.type, &o));
  if (f.embd_type) {
    SM_ASSIGN_OR_RETURN(o.embedding_type, w::ParseWeightType(*f.embd_type));
  }
  if (f.seed) o.seed = *f.seed;
  if (f.name) o.name = *f.name;
  if (f.arch) o.architecture = *f.arch;
  for (auto [flag, field] :
       {std::pair{&f.dim, &o.dim}, std::pair{&f.layers, &o.n_layers},
        std::pair{&f.heads, &o.n_heads}, std::pair{&f.kv_heads, &o.n_kv_heads},
        std::pair{&f.head_dim, &o.head_dim}, std::pair{&f.ffn, &o.hidden_dim},
        std::pair{&f.vocab, &o.vocab_size}, std::pair{&f.context, &o.context_length},
        std::pair{&f.experts, &o.n_experts}, std::pair{&f.experts_used, &o.n_experts_used},
        std::pair{&f.shared_ffn, &o.shared_expert_ffn_dim}, std::pair{&f.rope_dims, &o.rope_dims},
        std::pair{&f.rope_orig_context, &o.rope_orig_context},
        std::pair{&f.sliding_window, &o.sliding_window}}) {
    if (*flag) *field = **flag;
  }
  if (f.classifier_gain) o.classifier_gain = *f.classifier_gain;
  if (f.rope_theta) o.rope_theta = *f.rope_theta;
  if (f.embd_spread) o.embedding_spread = *f.embd_spread;
  if (f.tied || o.architecture.starts_with("gemma")) o.tied_embeddings = true;
  if (o.architecture == "gpt-oss" && !f.tied) o.tied_embeddings = false;  // always untied
  o.longrope = f.longrope;
  if (f.yarn_factor) o.yarn_factor = *f.yarn_factor;
  if (f.grow_epsilon && !f.grow_layers) {
    return smallmind::shared::InvalidArgument("--grow-epsilon needs --grow-layers N");
  }
  if (f.grow_layers) {
    o.grow_layers = *f.grow_layers;
    o.grow_epsilon = f.grow_epsilon.value_or(0.0f);
    if (!f.name) o.name += "-grown-" + std::to_string(o.n_layers + o.grow_layers);
  }
  o.window = f.window;
  o.attn_softcap = f.attn_softcap;
  o.final_softcap = f.final_softcap;
  if (!f.rope_freqs.empty() && f.rope_freqs != "llama3") {
    return smallmind::shared::InvalidArgument("--rope-freqs '" + f.rope_freqs +
                                              "' is not one modelgen writes (llama3)");
  }
  o.llama3_rope_freqs = f.rope_freqs == "llama3";
  SM_RETURN_IF_ERROR(SetChatOptions(f, &o));
  // Overriding the heads of a preset without its kv heads keeps plain multi-head attention.
  if (f.heads && !f.kv_heads) o.n_kv_heads = o.n_heads;
  SM_RETURN_IF_ERROR(w::ValidateGeneratorOptions(o));
  return o;
}

// "writing tensors 12/201, 35% of 1.2 GiB" on one stderr line redrawn in place, when stderr is a
// terminal; nothing otherwise (a log or a test reading the output sees the summary only).
w::GgufWriter::Progress TerminalProgress() {
  if (!isatty(STDERR_FILENO)) return {};
  return [](size_t done, size_t total, uint64_t bytes_done, uint64_t bytes_total) {
    const double percent = bytes_total > 0 ? 100.0 * bytes_done / bytes_total : 100.0;
    std::fprintf(stderr, "\rwriting tensors %zu/%zu, %.0f%% of %.2f GiB", done, total, percent,
                 bytes_total / 1073741824.0);
    if (done == total) std::fputc('\n', stderr);
    std::fflush(stderr);
  };
}

Result<w::GgufBuildSummary> Run(const Flags& f) {
  if (f.from_llama2c.empty()) {
    SM_ASSIGN_OR_RETURN(w::GeneratorOptions o, OptionsFromFlags(f));
    return w::WriteGeneratedModel(o, f.out, TerminalProgress());
  }
  if (f.preset || f.embd_type || f.seed || f.dim || f.layers || f.heads || f.kv_heads ||
      f.head_dim || f.ffn || f.vocab || f.context || f.classifier_gain || f.rope_theta ||
      f.embd_spread || f.tied || !f.rope_freqs.empty() || f.arch || f.experts || f.experts_used ||
      f.shared_ffn || f.rope_dims || f.rope_orig_context || f.sliding_window || f.longrope ||
      f.yarn_factor || f.grow_layers || f.grow_epsilon || f.window || f.attn_softcap ||
      f.final_softcap || !f.chat_template.empty() || f.bos_token || f.eos_token ||
      !f.special_tokens.empty()) {
    return smallmind::shared::InvalidArgument(
        "--from-llama2c takes its shapes, weights and vocabulary from the checkpoint: drop "
        "--preset, --seed, --embd-type, the shape flags and the chat flags");
  }
  if (f.tokenizer.empty()) {
    return smallmind::shared::InvalidArgument("--from-llama2c needs --tokenizer tok.bin");
  }
  w::Llama2cConversion conv;
  conv.model_path = f.from_llama2c;
  conv.tokenizer_path = f.tokenizer;
  SM_ASSIGN_OR_RETURN(conv.type, w::ParseWeightType(f.type));
  if (f.name) conv.name = *f.name;
  return w::ConvertLlama2cToGguf(conv, f.out);
}

// The rope flags, and the attention flags of architectures beyond llama (phi3's).
void AddArchFlags(CLI::App& app, Flags& f) {
  app.add_option("--rope-theta", f.rope_theta, "rope.freq_base")->default_str("10000");
  app.add_option("--rope-freqs", f.rope_freqs,
                 "write rope_freqs.weight: llama3 (Llama 3.1/3.2's rope scaling divisors)")
      ->type_name("KIND");
  app.add_option("--rope-dims", f.rope_dims,
                 "rope.dimension_count: rotated dims per head (phi3: fewer than the head size is "
                 "partial rotary)")
      ->default_str("the head size");
  app.add_flag("--longrope", f.longrope,
               "phi3: write LongRoPE's rope_factors_long/short.weight and rope.scaling.attn_factor "
               "for --context over --rope-orig-context");
  app.add_option("--rope-orig-context", f.rope_orig_context,
                 "phi3: rope.scaling.original_context_length (LongRoPE's long factors apply when "
                 "the context exceeds it); gpt-oss: yarn's original context")
      ->default_str("--context");
  app.add_option("--yarn-factor", f.yarn_factor,
                 "gpt-oss: rope.scaling.type yarn with this rope.scaling.factor (gpt-oss-20b: 32)")
      ->default_str("no rope scaling");
  app.add_option("--sliding-window", f.sliding_window,
                 "phi3: attention.sliding_window (read and not applied, as llama.cpp does)");
}

// --grow-layers / --grow-epsilon: a speculation benchmark's target grown deep from its draft.
void AddGrowFlags(CLI::App& app, Flags& f) {
  app.add_option("--grow-layers", f.grow_layers,
                 "grow the model deep: after its layers, this many copies of them (extra layer j "
                 "copies layer j mod --layers) whose attn_output and ffn_down are scaled by "
                 "--grow-epsilon; with epsilon 0 it computes the ungrown model's function, which "
                 "is its speculative draft")
      ->default_str("0");
  app.add_option("--grow-epsilon", f.grow_epsilon,
                 "scale of the grown layers' attn_output and ffn_down (>= 0)")
      ->default_str("0");
}

// The chat template and the vocabulary tokens it needs.
void AddChatFlags(CLI::App& app, Flags& f) {
  app.add_option("--chat-template", f.chat_template,
                 "write this Jinja file as tokenizer.chat_template; its <|name|> literals become "
                 "control tokens of the vocabulary")
      ->type_name("FILE");
  app.add_option("--special-token", f.special_tokens,
                 "one more control token the template writes (e.g. <start_of_turn>, [INST]); "
                 "new tokens take the ids of the vocabulary's last pieces")
      ->type_name("TEXT")
      // One text per flag, taken as it is: CLI11 would otherwise read "[INST]" as a list.
      ->allow_extra_args(false);
  app.add_option("--bos-token", f.bos_token, "BOS's text (e.g. <bos>, <|begin_of_text|>)")
      ->type_name("TEXT")
      ->default_str("<s>");
  app.add_option("--eos-token", f.eos_token, "EOS's text (e.g. <eos>, <|im_end|>)")
      ->type_name("TEXT")
      ->default_str("</s>");
}

// The architecture, and gemma's window and soft-caps.
void AddFamilyFlags(CLI::App& app, Flags& f) {
  app.add_option(
         "--arch", f.arch,
         "general.architecture: llama; qwen3 (NeoX RoPE, per-head q/k RMSNorm); qwen3moe "
         "(qwen3 with --experts); phi3 (NeoX RoPE, fused attn_qkv and gate/up ffn_up); "
         "smollm3 (no RoPE in every 4th layer); gemma2 (embedding scale, post-attention/FFN "
         "norms, GeGLU, soft-capping, every other layer windowed) or gemma3 (gemma2 with "
         "q/k norms, 5 windowed layers to 1 global, no attention soft-cap); gemma "
         "embeddings are always tied; gpt-oss (--experts with biases, top-k then softmax, "
         "clamped SwiGLU; q/k/v/o biases, attention sinks, even layers windowed, yarn with "
         "--yarn-factor; untied); qwen2moe (q/k/v biases, --experts not renormalised plus a "
         "sigmoid-gated shared expert of --shared-ffn); olmoe (q/k RMSNorm over whole rows, "
         "--experts not renormalised)")
      ->default_str("llama");
  app.add_option("--window", f.window, "attention.sliding_window (gemma2, gemma3, gpt-oss)")
      ->default_str("gemma2 4096, gemma3 none, gpt-oss 128");
  app.add_option("--attn-softcap", f.attn_softcap, "attn_logit_softcapping (gemma2)")
      ->default_str("50");
  app.add_option("--final-softcap", f.final_softcap, "final_logit_softcapping (gemma2, gemma3)")
      ->default_str("gemma2 30, gemma3 none");
}

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("-o,--output", f.out, "the GGUF file to write")->type_name("FILE")->required();
  app.add_option("--preset", f.preset, "shapes to start from: tiny | bench-110M | bench-1B")
      ->type_name("NAME")
      ->default_str("tiny");
  app.add_option(
         "--type", f.type,
         "2-D weight type: f32 | f16 | q8_0 | q4_0 | q4_1 | q5_0 | q5_1 | iq4_nl | q3_k | "
         "q4_k | q5_k | q6_k | iq4_xs | mxfp4, or llama.cpp's mixes q4_k_m | q5_k_m | q2_k | "
         "q3_k_s | q3_k_m (output.weight Q6_K, some attn_v / ffn_down / attn_output "
         "matrices in more bits, as its quantizer does) | mxfp4_moe (the experts MXFP4, "
         "output.weight Q6_K, the other matrices Q8_0: gpt-oss's files); K-quant rows that are no "
         "multiple "
         "of 256 take llama.cpp's fallback: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, "
         "Q2_K / Q3_K / IQ4_XS -> IQ4_NL)")
      ->type_name("TYPE");
  app.add_option("--embd-type", f.embd_type, "token_embd type")
      ->type_name("TYPE")
      ->default_str("--type");
  app.add_option("--seed", f.seed, "weight seed")->default_str("builtin:tiny's");
  app.add_option("--name", f.name, "general.name")->default_str("the preset's");
  for (auto [flag, field, meaning] :
       {std::tuple{"--dim", &f.dim, "embedding width"},
        std::tuple{"--layers", &f.layers, "transformer blocks"},
        std::tuple{"--heads", &f.heads, "query heads"},
        std::tuple{"--kv-heads", &f.kv_heads,
                   "key/value heads (follows --heads when only that is given)"},
        std::tuple{"--head-dim", &f.head_dim,
                   "width of each head (attention.key_length); may differ from dim / heads"},
        std::tuple{"--ffn", &f.ffn, "feed-forward width"},
        std::tuple{"--vocab", &f.vocab, "vocabulary size (>= 259)"},
        std::tuple{"--context", &f.context, "context length"},
        std::tuple{"--experts", &f.experts,
                   "mixture of experts: experts per layer, each --ffn wide (llama: Mixtral-style; "
                   "qwen3moe, gpt-oss, qwen2moe and olmoe need it)"},
        std::tuple{"--experts-used", &f.experts_used, "experts the router picks per token"},
        std::tuple{"--shared-ffn", &f.shared_ffn,
                   "qwen2moe: the shared expert's width (expert_shared_feed_forward_length; "
                   "default --ffn)"}}) {
    app.add_option(flag, *field, meaning)->default_str("the preset's");
  }
  app.add_option("--classifier-gain", f.classifier_gain,
                 "spread of the logits on a unit-RMS final state (output.weight's spread times "
                 "sqrt(dim)); smaller makes the distribution flatter")
      ->default_str("the preset's");
  app.add_flag("--tied", f.tied, "no output.weight: the classifier is token_embd");
  AddFamilyFlags(app, f);
  AddArchFlags(app, f);
  AddChatFlags(app, f);
  app.add_option("--embd-spread", f.embd_spread,
                 "spread of token_embd's values (and so of a tied classifier's)")
      ->default_str("the preset's");
  AddGrowFlags(app, f);
  CLI::Option* from = app.add_option("--from-llama2c", f.from_llama2c,
                                     "convert this llama2.c checkpoint instead of generating");
  from->type_name("FILE");
  app.add_option("--tokenizer", f.tokenizer, "the checkpoint's tokenizer.bin")
      ->type_name("FILE")
      ->needs(from);
}

void AddBertFlags(CLI::App& app, Flags& f) {
  app.add_option("--bert", f.bert,
                 "write a bert (encoder, embeddings) model of this preset instead: bert-tiny | "
                 "bert-tiny-rerank (a cross-encoder reranker: rank pooling, classification "
                 "head) | bench-110M-bert (BERT-base's shape) | bench-110M-bert-rerank; takes "
                 "--type f32|f16|q8_0 and --seed")
      ->type_name("PRESET");
  app.add_option("--bert-vocab", f.bert_vocab,
                 "--bert: copy the WordPiece vocabulary of this GGUF (e.g. "
                 "ggml-vocab-bert-bge.gguf)")
      ->type_name("FILE")
      ->default_str("a synthetic one");
  app.add_option("--pooling", f.pooling, "--bert: bert.pooling_type: mean | cls | last")
      ->default_str("the preset's: mean, rank for the -rerank presets");
}

smallmind::shared::Status RunBert(const Flags& f) {
  SM_ASSIGN_OR_RETURN(w::BertGeneratorOptions o, w::BertGeneratorPreset(*f.bert));
  SM_ASSIGN_OR_RETURN(o.weight_type, w::ParseWeightType(f.type));
  o.vocab_file = f.bert_vocab;
  if (f.seed) o.seed = *f.seed;
  if (f.pooling.empty()) {
    // the preset's
  } else if (f.pooling == "mean") {
    o.pooling = w::PoolingType::kMean;
  } else if (f.pooling == "cls") {
    o.pooling = w::PoolingType::kCls;
  } else if (f.pooling == "last") {
    o.pooling = w::PoolingType::kLast;
  } else {
    return smallmind::shared::InvalidArgument("--pooling '" + f.pooling +
                                              "' is none of mean, cls, last");
  }
  SM_RETURN_IF_ERROR(w::WriteBertModel(o, f.out));
  std::printf("wrote %s: bert %s, dim %d, %d layers, %d heads, ffn %d, pooling %s, %s\n",
              f.out.c_str(), f.bert->c_str(), o.dim, o.n_layers, o.n_heads, o.hidden_dim,
              std::string(w::PoolingTypeName(o.pooling)).c_str(), f.type.c_str());
  return smallmind::shared::Status::Ok();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "smallmind-modelgen: writes llama-shaped GGUF models (seeded random weights, or "
      "converted from llama2.c)",
      "smallmind-modelgen"};
  smallmind::shared::ConfigureCommandLine(app);
  Flags flags;
  AddFlags(app, flags);
  AddBertFlags(app, flags);
  if (auto exit_code = smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  try {
    if (flags.bert) {
      const smallmind::shared::Status bert = RunBert(flags);
      if (!bert.ok()) std::fprintf(stderr, "smallmind-modelgen: %s\n", bert.message().c_str());
      return bert.ok() ? 0 : 1;
    }
    Result<w::GgufBuildSummary> summary = Run(flags);
    if (!summary.ok()) {
      std::fprintf(stderr, "smallmind-modelgen: %s\n", summary.status().message().c_str());
      return 1;
    }
    PrintSummary(flags.out, *summary);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smallmind-modelgen: %s\n", e.what());
    return 1;
  }
  return 0;
}
