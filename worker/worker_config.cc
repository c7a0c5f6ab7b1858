#include "worker/worker_config.h"

#include <CLI/CLI.hpp>

#include "shared/cpu_topology.h"

namespace smallmind::worker {

shared::Status WorkerConfig::Validate() const {
  if (model.model.empty()) return shared::InvalidArgument("--model must not be empty");
  if (listen.empty()) return shared::InvalidArgument("--listen must be unix:/path or host:port");
  if (!cpus.empty()) SM_RETURN_IF_ERROR(shared::ParseCpuList(cpus).status());
  if (threads < 0 || threads > 1024)
    return shared::InvalidArgument("--threads must be in [0, 1024]");
  if (kv.block_size < 1 || kv.block_size > 1024) {
    return shared::InvalidArgument("--kv-block-size must be in [1, 1024]");
  }
  if (kv.num_blocks < 0) return shared::InvalidArgument("--kv-blocks must be >= 0");
  if (kv.memory_mb < 1) return shared::InvalidArgument("--kv-memory-mb must be >= 1");
  if (scheduler.max_step_tokens < 1)
    return shared::InvalidArgument("--max-step-tokens must be >= 1");
  if (scheduler.max_seqs < 1 || scheduler.max_seqs > 4096) {
    return shared::InvalidArgument("--max-seqs must be in [1, 4096]");
  }
  return shared::Status::Ok();
}

shared::Result<WorkerConfig> ParseWorkerFlags(int argc, char** argv) {
  WorkerConfig c;
  CLI::App app{"smallmind-worker: serves one model over worker.proto"};
  app.add_option("--model", c.model.model, "builtin:tiny or a model file (.bin llama2.c)");
  app.add_option("--tokenizer", c.model.tokenizer, "tokenizer.bin for llama2.c checkpoints");
  app.add_option("--listen", c.listen, "unix:/path or host:port");
  app.add_option("--worker-id", c.worker_id, "id reported in stats and timings");
  app.add_option("--cpus", c.cpus, "CPU list to pin to, e.g. 0-3");
  app.add_option("--threads", c.threads, "compute threads (0 = one per CPU)");
  app.add_option("--log-level", c.log_level, "trace|debug|info|warn|error");
  app.add_flag("--exit-with-parent", c.exit_with_parent,
               "terminate when the parent process (the gateway) dies");
  app.add_option("--kv-block-size", c.kv.block_size, "tokens per KV block");
  app.add_option("--kv-blocks", c.kv.num_blocks, "KV blocks (0 = from --kv-memory-mb)");
  app.add_option("--kv-memory-mb", c.kv.memory_mb, "KV pool budget in MiB");
  app.add_option("--max-step-tokens", c.scheduler.max_step_tokens, "token budget per step");
  app.add_option("--max-seqs", c.scheduler.max_seqs, "sequences per step");
  app.add_option("--max-waiting", c.scheduler.max_waiting, "queued requests before rejecting");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    return shared::NotFound(app.help());
  } catch (const CLI::ParseError& e) {
    return shared::InvalidArgument(e.what());
  }
  SM_RETURN_IF_ERROR(c.Validate());
  return c;
}

}  // namespace smallmind::worker
