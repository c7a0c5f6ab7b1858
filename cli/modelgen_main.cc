// smallmind-modelgen: writes llama-shaped GGUF models for tests and benchmarks.
//   smallmind-modelgen [--preset tiny|bench-110M|bench-1B] [--type T] [--seed N]
//                      [--dim N] [--layers N] [--heads N] [--kv-heads N] [--ffn N] [--vocab N]
//                      [--context N] [--embd-type T] [--name S] -o out.gguf
//   smallmind-modelgen --from-llama2c model.bin --tokenizer tok.bin [--type T] -o out.gguf
// T: f32 | f16 | q8_0 | q4_0 | q4_k | q5_k | q6_k | iq4_xs | q4_k_m | q5_k_m (Q4_K / Q5_K with Q6_K
// for output.weight and the attn_v / ffn_down of some layers, as llama.cpp's Q4_K_M / Q5_K_M);
// K-quants need dim and ffn to be
// multiples of 256 (not tiny). Prints what it wrote (shapes, tensor types, parameter count,
// bytes); errors go to stderr, exit 1.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <CLI/CLI.hpp>

#include "shared/command_line.h"
#include "shared/status.h"
#include "worker/modelgen/llama2c_to_gguf.h"
#include "worker/modelgen/model_generator.h"

namespace {

using smallmind::shared::Result;
namespace w = smallmind::worker;

struct Flags {
  std::string out;
  std::optional<std::string> preset;  // default tiny
  std::string type = "f32";
  std::optional<std::string> embd_type;
  std::optional<uint64_t> seed;
  std::optional<std::string> name;
  std::optional<int> dim, layers, heads, kv_heads, ffn, vocab, context;
  std::optional<float> classifier_gain;
  std::optional<float> rope_theta, embd_spread;
  bool tied = false;
  std::string rope_freqs;  // "" or "llama3"
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
  std::printf("  file type %s; tensors:",
              smallmind::kernels::GetDTypeTraits(static_cast<uint32_t>(s.file_type))->name);
  for (const auto& [type, count] : s.tensors_per_type) std::printf(" %d %s", count, type.c_str());
  std::printf("\n  parameters %s (%.1f M); %s bytes (%.1f MiB)\n",
              Grouped(s.parameter_count).c_str(), static_cast<double>(s.parameter_count) / 1e6,
              Grouped(s.file_bytes).c_str(), static_cast<double>(s.file_bytes) / (1 << 20));
  for (const std::string& note : s.notes) std::printf("  note: %s\n", note.c_str());
}

Result<w::GeneratorOptions> OptionsFromFlags(const Flags& f) {
  SM_ASSIGN_OR_RETURN(w::GeneratorOptions o, w::GeneratorPreset(f.preset.value_or("tiny")));
  SM_RETURN_IF_ERROR(w::SetWeightScheme(f.type, &o));
  if (f.embd_type) {
    SM_ASSIGN_OR_RETURN(o.embedding_type, w::ParseWeightType(*f.embd_type));
  }
  if (f.seed) o.seed = *f.seed;
  if (f.name) o.name = *f.name;
  for (auto [flag, field] : {std::pair{&f.dim, &o.dim}, std::pair{&f.layers, &o.n_layers},
                             std::pair{&f.heads, &o.n_heads}, std::pair{&f.kv_heads, &o.n_kv_heads},
                             std::pair{&f.ffn, &o.hidden_dim}, std::pair{&f.vocab, &o.vocab_size},
                             std::pair{&f.context, &o.context_length}}) {
    if (*flag) *field = **flag;
  }
  if (f.classifier_gain) o.classifier_gain = *f.classifier_gain;
  if (f.rope_theta) o.rope_theta = *f.rope_theta;
  if (f.embd_spread) o.embedding_spread = *f.embd_spread;
  if (f.tied) o.tied_embeddings = true;
  if (!f.rope_freqs.empty() && f.rope_freqs != "llama3") {
    return smallmind::shared::InvalidArgument("--rope-freqs '" + f.rope_freqs +
                                              "' is not one modelgen writes (llama3)");
  }
  o.llama3_rope_freqs = f.rope_freqs == "llama3";
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
  if (f.preset || f.embd_type || f.seed || f.dim || f.layers || f.heads || f.kv_heads || f.ffn ||
      f.vocab || f.context || f.classifier_gain || f.rope_theta || f.embd_spread || f.tied ||
      !f.rope_freqs.empty()) {
    return smallmind::shared::InvalidArgument(
        "--from-llama2c takes its shapes and weights from the checkpoint: drop --preset, --seed, "
        "--embd-type and the shape flags");
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

void AddFlags(CLI::App& app, Flags& f) {
  app.add_option("-o,--output", f.out, "the GGUF file to write")->type_name("FILE")->required();
  app.add_option("--preset", f.preset, "shapes to start from: tiny | bench-110M | bench-1B")
      ->type_name("NAME")
      ->default_str("tiny");
  app.add_option(
         "--type", f.type,
         "2-D weight type: f32 | f16 | q8_0 | q4_0 | q4_k | q5_k | q6_k | iq4_xs | q4_k_m | "
         "q5_k_m "
         "(K-quants need dim and ffn multiples of 256; q4_k_m / q5_k_m are Q4_K / Q5_K "
         "with Q6_K for output.weight and the attn_v / ffn_down of llama.cpp's _K_M "
         "layers)")
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
        std::tuple{"--ffn", &f.ffn, "feed-forward width"},
        std::tuple{"--vocab", &f.vocab, "vocabulary size (>= 259)"},
        std::tuple{"--context", &f.context, "context length"}}) {
    app.add_option(flag, *field, meaning)->default_str("the preset's");
  }
  app.add_option("--classifier-gain", f.classifier_gain,
                 "spread of the logits on a unit-RMS final state (output.weight's spread times "
                 "sqrt(dim)); smaller makes the distribution flatter")
      ->default_str("the preset's");
  app.add_option("--rope-theta", f.rope_theta, "rope.freq_base")->default_str("10000");
  app.add_option("--rope-freqs", f.rope_freqs,
                 "write rope_freqs.weight: llama3 (Llama 3.1/3.2's rope scaling divisors)")
      ->type_name("KIND");
  app.add_flag("--tied", f.tied, "no output.weight: the classifier is token_embd");
  app.add_option("--embd-spread", f.embd_spread,
                 "spread of token_embd's values (and so of a tied classifier's)")
      ->default_str("the preset's");
  CLI::Option* from = app.add_option("--from-llama2c", f.from_llama2c,
                                     "convert this llama2.c checkpoint instead of generating");
  from->type_name("FILE");
  app.add_option("--tokenizer", f.tokenizer, "the checkpoint's tokenizer.bin")
      ->type_name("FILE")
      ->needs(from);
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
  if (auto exit_code = smallmind::shared::ParseCommandLineOrExitCode(app, argc, argv)) {
    return *exit_code;
  }
  try {
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
