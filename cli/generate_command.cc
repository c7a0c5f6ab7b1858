#include "cli/generate_command.h"

#include <charconv>
#include <cstdio>
#include <optional>
#include <utility>

namespace smallmind::cli {

namespace {

// "TOKEN_ID=BIAS" (a decimal id and a number, nothing else), or nothing. The range is the
// server's to check, so that the CLI and the API say the same.
std::optional<std::pair<uint32_t, float>> ParseLogitBias(const std::string& arg) {
  const size_t eq = arg.find('=');
  if (eq == 0 || eq == std::string::npos) return std::nullopt;
  const char* mid = arg.data() + eq;
  const char* end = arg.data() + arg.size();
  uint32_t id = 0;
  float bias = 0;
  const auto [id_end, id_ec] = std::from_chars(arg.data(), mid, id);
  const auto [bias_end, bias_ec] = std::from_chars(mid + 1, end, bias);
  if (id_ec != std::errc() || id_end != mid || bias_ec != std::errc() || bias_end != end) {
    return std::nullopt;
  }
  return std::pair{id, bias};
}

}  // namespace

void SamplingFlags::SetJsonSchema(const std::string& arg) {
  if (!arg.empty() && arg.front() == '{') {
    json_schema = arg;
    return;
  }
  auto text = ReadFile("cannot read the schema file", arg);
  if (!text.ok()) throw CLI::ValidationError("--json-schema", text.status().message());
  if (text->empty()) {  // an empty file, or a directory: never "no schema"
    throw CLI::ValidationError("--json-schema", "cannot read the schema file " + arg + ": empty");
  }
  json_schema = std::move(*text);
}

std::vector<CLI::Option*> SamplingFlags::AddFlags(CLI::App& command) {
  return {
      command.add_option("--max-tokens", max_tokens,
                         "tokens to generate at most; 0 = 256, capped by the context"),
      command.add_option("--temperature", temperature, "0 = greedy")->default_str("1.0"),
      command.add_option("--seed", seed, "seed of the request's random draws")
          ->default_str("random"),
      command.add_option("--top-k", top_k, "keep the k most likely tokens; 0 = off"),
      command.add_option("--top-p", top_p, "nucleus sampling threshold in (0, 1]")
          ->default_str("1 = off"),
      command.add_flag("--deterministic", deterministic,
                       "the deterministic kernel path (bitwise reproducible logits)"),
      command.add_flag("--no-speculation", no_speculation,
                       "no speculative decoding for this request (runtime.speculation OFF; it "
                       "changes the speed only, never the tokens)"),
      command.add_flag("--json-object", json,
                       "the output is one JSON object (response_format JSON_OBJECT): tokens that "
                       "would break it are never drawn, and generation stops when it closes"),
      command
          .add_option_function<std::string>(
              "--json-schema", [this](const std::string& arg) { SetJsonSchema(arg); },
              "the output is one JSON object this JSON Schema allows (response_format "
              "JSON_SCHEMA): a file, or the schema itself when it starts with '{'")
          ->type_name("FILE|SCHEMA")
          ->excludes("--json-object"),
      command
          .add_option_function<std::vector<std::string>>(
              "--logit-bias",
              [this](const std::vector<std::string>& args) {
                for (const std::string& arg : args) {
                  const auto pair = ParseLogitBias(arg);
                  if (!pair) {
                    throw CLI::ValidationError("--logit-bias",
                                               "expected TOKEN_ID=BIAS (e.g. 13=-100), got " + arg);
                  }
                  logit_bias[pair->first] = pair->second;
                }
              },
              "add BIAS in [-100, 100] to the logit of token TOKEN_ID (-100 bans it, 100 "
              "forces it); repeat for several")
          ->type_name("TOKEN_ID=BIAS")
          ->allow_extra_args(false),
      command
          .add_option("--stop", stops,
                      "stop at this string (not part of the output); repeat for several")
          ->allow_extra_args(false)
          ->default_str("none"),
  };
}

v1::GenerateRequest SamplingFlags::BuildRequest(std::string prompt) const {
  v1::GenerateRequest request;
  request.set_prompt(std::move(prompt));
  auto* sampling = request.mutable_sampling();
  auto* stopping = request.mutable_stopping();
  stopping->set_max_new_tokens(max_tokens);
  if (temperature) sampling->set_temperature(*temperature);
  if (seed) sampling->set_seed(*seed);
  sampling->set_top_k(top_k);
  if (top_p) sampling->set_top_p(*top_p);
  if (deterministic) request.mutable_runtime()->set_deterministic(true);
  if (no_speculation) request.mutable_runtime()->set_speculation(v1::SPECULATION_OFF);
  if (json) request.set_response_format(v1::RESPONSE_FORMAT_JSON_OBJECT);
  if (!json_schema.empty()) {
    request.set_response_format(v1::RESPONSE_FORMAT_JSON_SCHEMA);
    request.set_json_schema(json_schema);
  }
  for (const std::string& stop : stops) stopping->add_stop(stop);
  for (const auto& [id, bias] : logit_bias) (*sampling->mutable_logit_bias())[id] = bias;
  return request;
}

GenerateCommand::GenerateCommand(CLI::App& parent)
    : Command(parent, "generate", "stream a completion of a prompt") {
  prompt_.AddFlags(app(), "prompt", "the text to continue");
  sampling_.AddFlags(app());
  app().add_flag("--ids", print_ids_, "also print the generated token ids");
  AddClientFlags(app(), client_);
}

shared::Status GenerateCommand::Validate() const { return prompt_.Validate(); }

shared::Result<int> GenerateCommand::Run() const {
  SM_ASSIGN_OR_RETURN(std::string prompt, prompt_.Read());
  const v1::GenerateRequest request = sampling_.BuildRequest(std::move(prompt));
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  grpc::ClientContext context;
  client.Prepare(&context);
  auto reader = client.stub().Generate(&context, request);
  v1::GenerateResponse message;
  v1::GenerateResponse last;
  std::vector<uint32_t> ids;
  while (reader->Read(&message)) {
    std::fwrite(message.text().data(), 1, message.text().size(), stdout);
    std::fflush(stdout);
    ids.insert(ids.end(), message.token_ids().begin(), message.token_ids().end());
    if (message.finish_reason() != v1::FINISH_REASON_UNSPECIFIED) last = message;
  }
  if (!ids.empty()) std::fputc('\n', stdout);
  if (print_ids_) {
    std::fputs("token ids:", stdout);
    for (uint32_t id : ids) std::printf(" %u", id);
    std::fputc('\n', stdout);
  }
  std::fflush(stdout);
  const grpc::Status status = reader->Finish();
  if (!status.ok()) return PrintRpcError(status);
  std::fprintf(stderr,
               "[%s] finish=%s prompt_tokens=%u tokens=%zu ttft_ms=%.1f decode_tok_s=%.1f "
               "worker=%u\n",
               last.request_id().c_str(), v1::FinishReason_Name(last.finish_reason()).c_str(),
               last.usage().prompt_tokens(), ids.size(), last.timings().ttft_ms(),
               last.timings().decode_tokens_per_s(), last.timings().worker_id());
  if (last.has_receipt()) {
    // What it takes to get these tokens again: the same prompt and flags with this seed.
    const v1::DeterminismReceipt& receipt = last.receipt();
    std::fprintf(stderr, "[%s] receipt: path=%s seed=%llu model=%s isa=%s kv=%s threads=%u\n",
                 last.request_id().c_str(), v1::KernelPath_Name(receipt.path()).c_str(),
                 static_cast<unsigned long long>(receipt.seed()),
                 receipt.model_fingerprint().c_str(), receipt.kernel_isa().c_str(),
                 receipt.kv_dtype().c_str(), receipt.threads());
  }
  return 0;
}

}  // namespace smallmind::cli
