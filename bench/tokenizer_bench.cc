// Google Benchmark of the tokenizers at real vocabulary sizes (issue 42): a Gemma-3-sized
// SentencePiece vocabulary (262,144 pieces, Gemma's layout: byte fallback, user-defined pieces, no
// dummy prefix) built from its GGUF metadata and encoding 10 kB of mixed text; byte-level BPE
// families (llama-bpe, qwen2, gpt-4o, tekken) encoding the same text. The vocabularies are the
// synthetic ones of worker/tokenizer/synthetic_vocab.h, so no model file is needed.
//
//   build/bin/tokenizer_bench --benchmark_filter=Spm
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "worker/model/gguf/gguf_reader.h"
#include "worker/model/gguf/gguf_vocab.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/tokenizer/bpe_tokenizer.h"
#include "worker/tokenizer/pre_tokenizer_families.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/tokenizer/synthetic_vocab.h"

namespace smallmind::worker {
namespace {

constexpr int kGemma3Pieces = 262144;
constexpr size_t kTextBytes = 10 * 1024;

const SpmVocab& GemmaVocab() {
  static const SpmVocab vocab = MakeSyntheticSpmVocab(SampleText(2048), 2000, kGemma3Pieces);
  return vocab;
}

// The vocabulary as a Gemma GGUF file stores it (tokens with '▁', scores, types, ids, flags).
std::vector<uint8_t> GemmaGguf() {
  const SpmVocab& v = GemmaVocab();
  std::vector<int32_t> types;
  for (SpmTokenType t : v.types) types.push_back(static_cast<int32_t>(t));
  GgufWriter w;
  w.AddString("general.architecture", "gemma3");
  w.AddString("tokenizer.ggml.model", "llama");
  w.AddString("tokenizer.ggml.pre", "default");
  w.AddStringArray("tokenizer.ggml.tokens", v.pieces);
  w.AddF32Array("tokenizer.ggml.scores", v.scores);
  w.AddI32Array("tokenizer.ggml.token_type", types);
  w.AddU32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(v.bos_id));
  w.AddU32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(v.eos_id));
  w.AddU32("tokenizer.ggml.unknown_token_id", static_cast<uint32_t>(v.unk_id));
  w.AddBool("tokenizer.ggml.add_bos_token", true);
  w.AddBool("tokenizer.ggml.add_space_prefix", false);
  auto bytes = w.WriteBuffer();
  SM_CHECK(bytes.ok()) << bytes.status().ToString();
  return std::move(bytes).value();
}

// SpmTokenizer::Create alone (the vocabulary copy it consumes is made outside the timing).
void BM_SpmCreate(benchmark::State& state) {
  for (auto _ : state) {
    state.PauseTiming();
    SpmVocab copy = GemmaVocab();
    state.ResumeTiming();
    auto tok = SpmTokenizer::Create(std::move(copy));
    SM_CHECK(tok.ok()) << tok.status().ToString();
    benchmark::DoNotOptimize(tok);
  }
}
BENCHMARK(BM_SpmCreate)->Unit(benchmark::kMillisecond);

// What loading a Gemma 3 file costs the tokenizer: parse the GGUF header and metadata from memory
// (the reader's copy of the buffer included), read the keys and build the tokenizer.
void BM_SpmLoadFromGguf(benchmark::State& state) {
  const std::vector<uint8_t> bytes = GemmaGguf();
  for (auto _ : state) {
    auto file = GgufFile::FromBuffer(bytes, "gemma3-vocab.gguf");
    SM_CHECK(file.ok()) << file.status().ToString();
    auto tok = GgufTokenizer(**file);
    SM_CHECK(tok.ok()) << tok.status().ToString();
    benchmark::DoNotOptimize(tok);
  }
  state.counters["gguf_MiB"] = static_cast<double>(bytes.size()) / (1 << 20);
}
BENCHMARK(BM_SpmLoadFromGguf)->Unit(benchmark::kMillisecond);

void BM_SpmEncode10kB(benchmark::State& state) {
  auto tok = SpmTokenizer::Create(GemmaVocab());
  SM_CHECK(tok.ok()) << tok.status().ToString();
  const std::string text = SampleText(kTextBytes);
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<TokenId> ids = (*tok)->Encode(text, true);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK(BM_SpmEncode10kB)->Unit(benchmark::kMillisecond);

void BM_BpeEncode10kB(benchmark::State& state, const char* pre) {
  BpeVocab vocab = MakeSyntheticBpeVocab(SampleText(4096), 2000, {});
  auto family = FindPreTokenizerFamily(pre);
  SM_CHECK(family.ok()) << family.status().ToString();
  vocab.pre = std::move(family).value();
  auto tok = BpeTokenizer::Create(std::move(vocab));
  SM_CHECK(tok.ok()) << tok.status().ToString();
  const std::string text = SampleText(kTextBytes);
  size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<TokenId> ids = (*tok)->Encode(text, false);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}
BENCHMARK_CAPTURE(BM_BpeEncode10kB, llama_bpe, "llama-bpe")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BpeEncode10kB, qwen2, "qwen2")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BpeEncode10kB, gpt_4o, "gpt-4o")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_BpeEncode10kB, tekken, "tekken")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace smallmind::worker

BENCHMARK_MAIN();
