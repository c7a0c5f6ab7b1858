#include "worker/worker_config.h"

#include <cstdlib>

#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>
#include <CLI/CLI.hpp>

#include "shared/command_line.h"
#include "shared/cpu_topology.h"
#include "shared/log.h"
#include "shared/shm_segment.h"

namespace smallmind::worker {
namespace {

constexpr char kModelHelp[] = R"(Models (--model):
  builtin:stories260K  the shipped llama2.c story model (260K parameters, 512-token vocabulary)
  builtin:tiny         a tiny llama with seeded random weights and a byte-level vocabulary (tests)
  FILE.gguf            a GGUF v2/v3 file: llama (Llama 1/2/3, TinyLlama, Mistral-style, SmolLM2)
                       or qwen2; F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL,
                       Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4 tensors; its tokenizer comes
                       from the file
  FILE.bin             a llama2.c checkpoint; its tokenizer is --tokenizer, or tokenizer.bin /
                       tok<vocab>.bin beside it
)";

// The names --isa takes, one entry each (kernels::kAllIsas; kernels::IsaNames() is the same list
// as one string, for messages).
std::vector<std::string> IsaChoices() {
  std::vector<std::string> names;
  for (kernels::Isa isa : kernels::kAllIsas) names.emplace_back(kernels::IsaName(isa));
  return names;
}

shared::Status CheckRange(std::string_view flag, int value, int lo, int hi) {
  if (value >= lo && value <= hi) return shared::Status::Ok();
  return shared::InvalidArgument(
      fmt::format("{} must be in [{}, {}], got {}", flag, lo, hi, value));
}

void AddSpeculationFlags(CLI::App& app, WorkerConfig& c) {
  SchedulerOptions::Speculation& spec = c.scheduler.speculation;
  app.add_option("--draft-model", c.draft_model.model,
                 "speculative decoding with a draft model (a GGUF path or builtin: name with the "
                 "target's vocabulary): before each step it drafts for every decoding stream, "
                 "batched, picking as the request's sampler picks, and one step verifies the "
                 "drafts (the tokens are those of "
                 "plain decoding); with --spec-ngram too, prompt lookup drafts where the draft "
                 "model has nothing")
      ->type_name("SPEC");
  app.add_option("--draft-kv-memory-mb", c.draft_kv_memory_mb,
                 "the draft model's KV cache, taken out of --kv-memory-mb; 0 = a full draft "
                 "context for each of --spec-max-batch streams, at most a quarter of the budget");
  app.add_option("--spec-draft-cost", c.draft_step_cost,
                 "one draft-model step's time over one target decode step, which the "
                 "draft-length controller weighs drafts with (worker/spec/draft_controller.h); "
                 "default: the ratio of the two models' weight bytes")
      ->type_name("R");
  app.add_option("--spec-verify-cost", spec.draft.verify_token_cost,
                 "what each draft token adds to a verification step, in target decode steps "
                 "(compute: decode_bench's pp9@d64 against tg64; about 0.2 on 2 Zen 1 cores)")
      ->type_name("V");
  app.add_option("--spec-ngram", spec.ngram,
                 "speculative decoding by prompt lookup: a decoding stream whose last N or more "
                 "tokens occurred before drafts what followed them, and one step verifies the "
                 "drafts (the tokens are those of plain decoding); 0 = off")
      ->type_name("N");
  app.add_option("--spec-max-draft", spec.draft.max_draft,
                 "most draft tokens a stream verifies in one step (it adapts below this to "
                 "what its drafts get accepted)")
      ->type_name("K");
  app.add_option("--spec-max-batch", spec.max_batch,
                 "steps decoding more streams than this draft nothing (their matmuls are "
                 "compute-bound: docs/speculation.md)");
}

// The KV cache: its blocks, element type, shared-memory segment and where its name is kept.
void AddKvFlags(CLI::App& app, WorkerConfig& c) {
  app.add_option("--runtime-dir", c.kv.runtime_dir,
                 "where a worker without --kv-segment keeps its segment's name, in "
                 "smallmind-kv-<uid>/ (mode 0700), for a warm restart")
      ->type_name("DIR")
      ->default_str("$TMPDIR or /tmp");
  app.add_option("--kv-block-size", c.kv.block_size, "tokens per KV cache block");
  app.add_option("--kv-blocks", c.kv.num_blocks, "KV cache blocks; 0 = as many as --kv-memory-mb");
  app.add_option("--kv-memory-mb", c.kv.memory_mb, "KV cache budget in MiB (with --kv-blocks 0)");
  app.add_option_function<std::string>(
         "--kv-dtype", [&c](const std::string& v) { c.kv.dtype = *kernels::KvTypeFromName(v); },
         "element type of the cached K/V rows: f16 (half the memory and the bytes each decode "
         "step reads of f32), q8 (8-bit quants with a scale per 32 values: 0.56x the memory and "
         "bytes of f16, so more tokens per MiB and faster attention over long contexts, "
         "docs/kv-cache.md); "
         "heads of 32, 64, ... 256 dims) or f32")
      ->transform(CLI::IsMember({"f16", "q8", "f32"}, CLI::ignore_case))
      ->type_name("TYPE")
      ->default_str("f16");
  app.add_option("--kv-segment", c.kv.segment,
                 "shared-memory name of the KV cache (/dev/shm/NAME), kept after a crash for a "
                 "warm restart and removed on a clean exit; none = process memory")
      ->type_name("NAME")
      ->default_str("smallmind-kv-<--listen with / and : as ->-<16 random hex digits>");
}

void AddWorkerFlags(CLI::App& app, WorkerConfig& c) {
  app.add_option("--model", c.model.model, "the model to serve (see Models below)")
      ->type_name("SPEC");
  app.add_option("--tokenizer", c.model.tokenizer, "tokenizer.bin of a llama2.c checkpoint")
      ->type_name("PATH")
      ->default_str("found beside the model");
  app.add_option("--listen", c.listen, "where to serve worker.proto: unix:/path or host:port")
      ->type_name("ADDR");
  app.add_option("--worker-id", c.worker_id, "id reported in stats, logs and timings");
  app.add_option("--cpus", c.cpus, "CPU list to pin the compute threads to, e.g. 0-3,8")
      ->type_name("LIST")
      ->default_str("every CPU this process may use");
  app.add_option("--threads", c.threads, "compute threads; 0 = one per CPU of --cpus");
  app.add_option_function<std::string>(
         "--isa", [&c](const std::string& v) { c.isa = *kernels::IsaFromName(v); },
         "kernel set: best (the best this CPU runs: avx512 = AVX-512 VNNI, else avxvnni = "
         "AVX-VNNI, else avx2), amx (AVX-512 with AMX-INT8 Q8_0 matmuls; by name only: not "
         "measured faster), avx512, avxvnni, avx2 or ref (the scalar reference "
         "kernels, slow); amx, avx512 and avxvnni give avx2's bits")
      ->transform(CLI::IsMember(IsaChoices(), CLI::ignore_case))
      ->type_name("ISA")
      ->default_str("best");
  app.add_option("--log-level", c.log_level, std::string("one of ") + shared::kLogLevelNames)
      ->type_name("LEVEL");
  app.add_flag("--exit-with-parent", c.exit_with_parent,
               "terminate when the parent process (the gateway) dies");
  AddKvFlags(app, c);
  app.add_flag_callback(
      "--no-prefix-cache", [&c] { c.scheduler.prefix_cache.enabled = false; },
      "recompute every prompt instead of reusing cached KV blocks of prefixes seen before");
  app.add_option("--max-step-tokens", c.scheduler.max_step_tokens,
                 "tokens per engine step (decodes + prefill chunks)");
  app.add_option("--max-prefill-tokens-while-decoding",
                 c.scheduler.max_prefill_tokens_while_decoding,
                 "prompt tokens a step that decodes d streams may add: max(this, 2 d) (small "
                 "chunks keep the streams' inter-token latency smooth while long prompts arrive; "
                 "docs/kv-cache.md); 0 = only --max-step-tokens");
  app.add_option("--max-seqs", c.scheduler.max_seqs, "sequences per engine step");
  app.add_option("--max-waiting", c.scheduler.max_waiting,
                 "queued requests before new ones get RESOURCE_EXHAUSTED");
  AddSpeculationFlags(app, c);
  app.footer(kModelHelp);
}

}  // namespace

shared::Status WorkerConfig::Validate() const {
  if (model.model.empty()) return shared::InvalidArgument("--model must not be empty");
  if (listen.empty()) return shared::InvalidArgument("--listen must be unix:/path or host:port");
  if (!cpus.empty()) {
    if (auto parsed = shared::ParseCpuList(cpus); !parsed.ok()) {
      return shared::InvalidArgument("--cpus: " + parsed.status().message());
    }
  }
  SM_RETURN_IF_ERROR(CheckRange("--threads", threads, 0, 1024));
  if (!kernels::CpuSupports(isa)) {
    return shared::InvalidArgument(fmt::format("--isa {}: this CPU does not run it (best: {})",
                                               kernels::IsaName(isa),
                                               kernels::IsaName(kernels::BestIsa())));
  }
  if (!shared::IsLogLevelName(log_level)) {
    return shared::InvalidArgument(
        fmt::format("--log-level must be one of {}, got '{}'", shared::kLogLevelNames, log_level));
  }
  SM_RETURN_IF_ERROR(CheckRange("--kv-block-size", kv.block_size, 1, 1024));
  SM_RETURN_IF_ERROR(CheckRange("--kv-blocks", kv.num_blocks, 0, 1 << 24));
  SM_RETURN_IF_ERROR(CheckRange("--kv-memory-mb", kv.memory_mb, 1, 1 << 24));
  if (!kv.segment.empty() && kv.segment != "none") {
    if (shared::Status name = shared::ShmSegment::CheckName(kv.segment); !name.ok()) {
      return shared::InvalidArgument("--kv-segment: " + name.message());
    }
  }
  SM_RETURN_IF_ERROR(CheckRange("--max-step-tokens", scheduler.max_step_tokens, 1, 1 << 20));
  SM_RETURN_IF_ERROR(CheckRange("--max-prefill-tokens-while-decoding",
                                scheduler.max_prefill_tokens_while_decoding, 0, 1 << 20));
  SM_RETURN_IF_ERROR(CheckRange("--max-seqs", scheduler.max_seqs, 1, 4096));
  SM_RETURN_IF_ERROR(CheckRange("--max-waiting", scheduler.max_waiting, 1, 1 << 20));
  SM_RETURN_IF_ERROR(CheckRange("--spec-ngram", scheduler.speculation.ngram, 0, 64));
  SM_RETURN_IF_ERROR(CheckRange("--spec-max-draft", scheduler.speculation.draft.max_draft, 1, 32));
  SM_RETURN_IF_ERROR(CheckRange("--spec-max-batch", scheduler.speculation.max_batch, 1, 4096));
  SM_RETURN_IF_ERROR(CheckRange("--draft-kv-memory-mb", draft_kv_memory_mb, 0, 1 << 24));
  if (!(draft_step_cost < 0 || draft_step_cost <= 16) ||
      !(scheduler.speculation.draft.verify_token_cost >= 0 &&
        scheduler.speculation.draft.verify_token_cost <= 16)) {
    return shared::InvalidArgument(
        "--spec-draft-cost and --spec-verify-cost must be in [0, 16] target decode steps");
  }
  if (draft_kv_memory_mb > 0 && kv.num_blocks == 0 && draft_kv_memory_mb >= kv.memory_mb) {
    return shared::InvalidArgument(fmt::format(
        "--draft-kv-memory-mb {} leaves nothing of --kv-memory-mb {} for the target's cache",
        draft_kv_memory_mb, kv.memory_mb));
  }
  return shared::Status::Ok();
}

shared::Result<WorkerConfig> ParseWorkerFlags(int argc, char** argv) {
  WorkerConfig c;
  CLI::App app{
      "smallmind-worker: serves one model over worker.proto (started by the gateway, or "
      "on its own for --worker-endpoints)",
      "smallmind-worker"};
  shared::ConfigureCommandLine(app);
  AddWorkerFlags(app, c);
  // main prints the message as it is: name the program and point at the help.
  auto usage_error = [](const shared::Status& status) {
    return shared::InvalidArgument("smallmind-worker: " + status.message() +
                                   "\nsee 'smallmind-worker --help'");
  };
  const shared::Result<shared::CommandLineAction> action =
      shared::ParseCommandLine(app, argc, argv);
  if (!action.ok()) return usage_error(action.status());
  // Help and version are NotFound: main prints the message to stdout and exits 0.
  if (*action == shared::CommandLineAction::kShowHelp) {
    return shared::NotFound(shared::HelpText(app));
  }
  if (*action == shared::CommandLineAction::kShowVersion) {
    return shared::NotFound(shared::VersionTextOf(app));
  }
  if (shared::Status valid = c.Validate(); !valid.ok()) return usage_error(valid);
  if (c.kv.runtime_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    c.kv.runtime_dir = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
  return c;
}

}  // namespace smallmind::worker
