// Greedy agreement of quantized models with an F32 copy of the same weights (issue 3): the model
// generator writes one preset (bench-110M by default) as F32, Q8_0, Q6_K, Q4_K and Q4_0 from the
// same seed; the F32 model's greedy continuation of a fixed prompt is the reference. For each type:
//   top1_agreement    teacher-forced: fed the reference tokens, the fraction of positions where
//                     the model's argmax is the reference's next token
//   free_run_match    running on its own tokens, the fraction of positions equal to the reference
//   first_divergence  the first generated position where it differs (tokens if never)
//   logit_rel_rmse    RMS(logits - F32 logits) / RMS(F32 logits - their mean), teacher-forced
//   unexplained_flips teacher-forced disagreements where the F32 top-1 margin was above 4x that
//                     position's RMS logit error (0 when every flip is within the error)
//   items_per_second  decode tok/s of the free run
// Flags besides Google Benchmark's: --preset=NAME --tokens=N (256) --threads=N (1) --ref (scalar
// reference kernels instead of the best for this CPU) --dir=DIR
// (where the model files are written, reused when present; default a temp folder); or
// --llama2c=model.bin --tokenizer=tok.bin to compare conversions of a trained checkpoint instead.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/bench_support.h"
#include "shared/command_line.h"
#include "worker/engine/engine.h"
#include "worker/model/gguf/gguf_loader.h"
#include "worker/modelgen/llama2c_to_gguf.h"
#include "worker/modelgen/model_generator.h"

namespace smallmind::worker {
namespace {

using kernels::DType;

constexpr int kBlockSize = 16;
constexpr char kPrompt[] = "Once upon a time, there was a little girl named Lily. She loved to";

struct Setup {
  std::string preset = "bench-110M";  // or the checkpoint's name with --llama2c
  std::string llama2c;                // a llama2.c checkpoint to convert instead of a preset
  std::string tokenizer;              // its tokenizer.bin
  std::string dir;
  int tokens = 256;
  int threads = 1;
  kernels::Isa isa = kernels::Isa::kBest;  // --ref: the scalar reference kernels
};

// The F32 model's run: prompt ids, its generated tokens, and their logits.
struct Reference {
  std::vector<TokenId> prompt;
  std::vector<TokenId> tokens;  // [n] generated, greedy
  std::vector<float> logits;    // [n, vocab]: logits that chose tokens[i]
};

TokenId Argmax(std::span<const float> logits) {
  int best = 0;
  for (int i = 1; i < static_cast<int>(logits.size()); i++) {
    if (logits[i] > logits[best]) best = i;
  }
  return best;
}

// One loaded model with an engine and a KV table for one sequence of `positions`.
class Runner {
 public:
  Runner(GgufModel model, int positions, int threads, kernels::Isa isa) : model_(std::move(model)) {
    const int blocks = (positions + kBlockSize - 1) / kBlockSize;
    pool_ = std::make_unique<KvPool>(model_.llama.config, blocks, kBlockSize);
    EngineOptions options;
    options.max_step_tokens = 128;
    options.max_seqs = 1;
    options.num_threads = threads;
    options.isa = isa;
    engine_ =
        std::make_unique<Engine>(model_.llama.config, model_.llama.weights, pool_.get(), options);
    for (int b = 0; b < blocks; b++) table_.push_back(b);
  }

  const Tokenizer& tokenizer() const { return *model_.tokenizer; }

  // Runs `tokens` at positions pos, pos + 1, ...; returns the last one's logits.
  std::span<const float> Feed(std::span<const TokenId> tokens, int pos) {
    StepPlan plan;
    plan.seqs.push_back(SeqStep{tokens, pos, table_, true});
    engine_->Step(plan);
    return engine_->Logits(0);
  }

 private:
  GgufModel model_;
  std::unique_ptr<KvPool> pool_;
  std::unique_ptr<Engine> engine_;
  std::vector<int32_t> table_;
};

std::string ModelPath(const Setup& s, DType type) {
  const char* name = kernels::GetDTypeTraits(static_cast<uint32_t>(type))->name;
  return (std::filesystem::path(s.dir) / (s.preset + "-" + name + ".gguf")).string();
}

// Writes the preset (or converts the checkpoint) as `type` unless the file is there; loads it.
// Writes the model file of `type` unless it exists; an error when the type cannot encode the model
// (K-quants need rows of whole 256-element super-blocks).
shared::Status Prepare(const Setup& s, DType type) {
  const std::string path = ModelPath(s, type);
  if (std::filesystem::exists(path)) return shared::Status::Ok();
  if (!s.llama2c.empty()) {
    return ConvertLlama2cToGguf(Llama2cConversion{s.llama2c, s.tokenizer, type, ""}, path).status();
  }
  SM_ASSIGN_OR_RETURN(GeneratorOptions options, GeneratorPreset(s.preset));
  options.weight_type = type;
  return WriteGeneratedModel(options, path).status();
}

std::unique_ptr<Runner> Load(const Setup& s, DType type) {
  const shared::Status prepared = Prepare(s, type);
  SM_CHECK(prepared.ok()) << prepared.ToString();
  auto model = LoadGgufModel(ModelPath(s, type));
  SM_CHECK(model.ok()) << model.status().ToString();
  return std::make_unique<Runner>(std::move(model).value(), 128 + s.tokens, s.threads, s.isa);
}

// Greedy: prefill the prompt, then `n` tokens each fed back. Fills logits when given.
std::vector<TokenId> Greedy(Runner& r, const std::vector<TokenId>& prompt, int n,
                            std::vector<float>* logits) {
  std::vector<TokenId> out;
  std::span<const float> l = r.Feed(prompt, 0);
  for (int i = 0; i < n; i++) {
    if (logits != nullptr) logits->insert(logits->end(), l.begin(), l.end());
    out.push_back(Argmax(l));
    if (i + 1 < n) {
      l = r.Feed(std::span<const TokenId>(&out.back(), 1), static_cast<int>(prompt.size()) + i);
    }
  }
  return out;
}

double Seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

void BM_Reference(benchmark::State& state, const Setup* s, Reference* ref) {
  for (auto _ : state) {
    std::unique_ptr<Runner> r = Load(*s, DType::kF32);
    ref->prompt = r->tokenizer().Encode(kPrompt, true);
    ref->logits.clear();
    const auto start = std::chrono::steady_clock::now();
    ref->tokens = Greedy(*r, ref->prompt, s->tokens, &ref->logits);
    state.SetIterationTime(Seconds(start));
    // How varied the reference is: a model stuck on one token would make agreement trivial.
    std::vector<bool> seen(ref->logits.size() / s->tokens, false);
    int distinct = 0;
    for (TokenId t : ref->tokens) {
      if (!seen[t]) distinct++;
      seen[t] = true;
    }
    state.counters["distinct_tokens"] = distinct;
  }
  state.SetItemsProcessed(state.iterations() * s->tokens);
}

// Top-1 and top-2 logits of `l`.
std::pair<float, float> TopTwo(std::span<const float> l) {
  float a = -INFINITY, b = -INFINITY;
  for (float v : l) {
    if (v > a) {
      b = a;
      a = v;
    } else if (v > b) {
      b = v;
    }
  }
  return {a, b};
}

// Teacher-forced top-1 agreement and logit error against the reference. A disagreement is
// "unexplained" when the reference's top-1 margin exceeded 4x this position's RMS logit error.
void TeacherForced(Runner& r, const Reference& ref, benchmark::State& state) {
  const size_t vocab = ref.logits.size() / ref.tokens.size();
  int agree = 0, unexplained = 0;
  double err_sq = 0, ref_sq = 0;
  std::span<const float> l = r.Feed(ref.prompt, 0);
  for (size_t i = 0; i < ref.tokens.size(); i++) {
    const std::span<const float> want(ref.logits.data() + i * vocab, vocab);
    double mean = 0, pos_err_sq = 0;
    for (float v : want) mean += v;
    mean /= static_cast<double>(vocab);
    for (size_t v = 0; v < vocab; v++) {
      pos_err_sq += (double{l[v]} - want[v]) * (double{l[v]} - want[v]);
      ref_sq += (want[v] - mean) * (want[v] - mean);
    }
    err_sq += pos_err_sq;
    const auto [top1, top2] = TopTwo(want);
    if (Argmax(l) == ref.tokens[i]) {
      agree++;
    } else if (top1 - top2 > 4 * std::sqrt(pos_err_sq / vocab)) {
      unexplained++;
    }
    if (i + 1 < ref.tokens.size()) {
      l = r.Feed(std::span<const TokenId>(&ref.tokens[i], 1),
                 static_cast<int>(ref.prompt.size() + i));
    }
  }
  state.counters["top1_agreement"] = static_cast<double>(agree) / ref.tokens.size();
  state.counters["logit_rel_rmse"] = std::sqrt(err_sq / ref_sq);
  state.counters["unexplained_flips"] = unexplained;
}

void BM_Quantized(benchmark::State& state, const Setup* s, const Reference* ref, DType type) {
  for (auto _ : state) {
    if (ref->tokens.empty()) {
      state.SkipWithError("the F32 reference did not run (filter it in)");
      return;
    }
    if (const shared::Status prepared = Prepare(*s, type); !prepared.ok()) {
      state.SkipWithError(prepared.ToString().c_str());
      return;
    }
    std::unique_ptr<Runner> r = Load(*s, type);
    const auto start = std::chrono::steady_clock::now();
    const std::vector<TokenId> got = Greedy(*r, ref->prompt, s->tokens, nullptr);
    state.SetIterationTime(Seconds(start));
    int match = 0, first = s->tokens;
    for (int i = 0; i < s->tokens; i++) {
      match += got[i] == ref->tokens[i] ? 1 : 0;
      if (got[i] != ref->tokens[i] && first == s->tokens) first = i;
    }
    state.counters["free_run_match"] = static_cast<double>(match) / s->tokens;
    state.counters["first_divergence"] = first;
    r = Load(*s, type);  // a fresh KV cache for the forced run
    TeacherForced(*r, *ref, state);
  }
  state.SetItemsProcessed(state.iterations() * s->tokens);
}

}  // namespace
}  // namespace smallmind::worker

int main(int argc, char** argv) {
  using smallmind::worker::Setup;
  Setup setup;
  setup.dir = (std::filesystem::temp_directory_path() / "smallmind-quant-agreement").string();
  CLI::App app("quant_agreement_bench");
  smallmind::shared::ConfigureCommandLine(app);
  app.add_option("--preset", setup.preset, "model generator preset written in every type");
  app.add_option("--llama2c", setup.llama2c,
                 "a llama2.c checkpoint to convert instead of a preset (needs --tokenizer)")
      ->type_name("PATH");
  app.add_option("--tokenizer", setup.tokenizer, "the checkpoint's tokenizer.bin")
      ->type_name("PATH");
  app.add_flag_callback(
      "--ref", [&setup] { setup.isa = smallmind::kernels::Isa::kRef; },
      "the scalar reference kernels instead of the best for this CPU");
  app.add_option("--dir", setup.dir, "where the model files are written, reused when present")
      ->type_name("DIR");
  app.add_option("--tokens", setup.tokens, "greedy tokens generated after the prompt");
  app.add_option("--threads", setup.threads, "engine threads");
  if (const std::optional<int> exit_code =
          smallmind::worker::bench::ParseBenchCommandLine(app, &argc, argv)) {
    return *exit_code;
  }
  if (!setup.llama2c.empty()) {
    setup.preset = std::filesystem::path(setup.llama2c).stem().string();
  }
  std::filesystem::create_directories(setup.dir);
  benchmark::Initialize(&argc, argv);
  smallmind::worker::Reference ref;
  const std::string name = "BM_Greedy/" + setup.preset + "/";
  benchmark::RegisterBenchmark((name + "F32").c_str(), smallmind::worker::BM_Reference, &setup,
                               &ref)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kSecond);
  for (auto type : {smallmind::kernels::DType::kQ8_0, smallmind::kernels::DType::kQ6_K,
                    smallmind::kernels::DType::kQ4_K, smallmind::kernels::DType::kQ4_0}) {
    const char* type_name = smallmind::kernels::GetDTypeTraits(static_cast<uint32_t>(type))->name;
    benchmark::RegisterBenchmark((name + type_name).c_str(), smallmind::worker::BM_Quantized,
                                 &setup, &ref, type)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kSecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
