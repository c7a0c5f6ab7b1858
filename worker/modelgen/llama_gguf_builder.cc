// Keys follow llama.cpp's expectations for the llama architecture (llama-arch.cpp / gguf-py
// constants): {arch}.context_length, embedding_length, block_count, feed_forward_length,
// rope.dimension_count, attention.head_count(_kv), attention.layer_norm_rms_epsilon,
// rope.freq_base, vocab_size; tokenizer.ggml.* for a SentencePiece ("llama") vocabulary.
#include "worker/modelgen/llama_gguf_builder.h"

#include <cctype>
#include <cstring>
#include <filesystem>
#include <utility>

#include "kernels/quant_blocks.h"
#include "kernels/ref/dequant_ref.h"
#include "kernels/ref/low_bit_ref.h"

namespace smallmind::worker {

using kernels::DType;

namespace {

constexpr char kArch[] = "llama";
constexpr uint32_t kQuantizationVersion = 2;   // ggml's GGML_QNT_VERSION
constexpr char kSpaceMark[] = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

const kernels::DTypeTraits& Traits(DType type) {
  const kernels::DTypeTraits* t = kernels::GetDTypeTraits(static_cast<uint32_t>(type));
  SM_CHECK(t != nullptr) << "unknown dtype " << static_cast<uint32_t>(type);
  return *t;
}

std::string SpaceToMark(std::string_view piece) {
  std::string out;
  for (char ch : piece) {
    if (ch == ' ') {
      out += kSpaceMark;
    } else {
      out += ch;
    }
  }
  return out;
}

// "blk.12.ffn_down.weight" -> "blk.*.ffn_down.weight", so one note covers every layer.
std::string NamePattern(std::string_view name) {
  constexpr std::string_view kBlk = "blk.";
  if (name.substr(0, kBlk.size()) != kBlk) return std::string(name);
  size_t end = kBlk.size();
  while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) end++;
  return std::string(kBlk) + "*" + std::string(name.substr(end));
}

}  // namespace

bool IsWritableWeightType(DType type) {
  return type == DType::kF32 || type == DType::kF16 || type == DType::kQ8_0 ||
         type == DType::kQ4_0 || type == DType::kQ5_0 || type == DType::kIQ4_NL ||
         type == DType::kQ4_K || type == DType::kQ5_K || type == DType::kQ6_K ||
         type == DType::kIQ4_XS || type == DType::kQ4_1 || type == DType::kQ5_1 ||
         type == DType::kQ2_K || type == DType::kQ3_K || type == DType::kMXFP4;
}

std::optional<DType> RowFallbackType(DType type) {
  switch (type) {
    case DType::kQ4_K: return DType::kQ5_0;
    case DType::kQ5_K: return DType::kQ5_1;
    case DType::kQ6_K: return DType::kQ8_0;
    case DType::kQ2_K:
    case DType::kQ3_K:
    case DType::kIQ4_XS: return DType::kIQ4_NL;
    default: return std::nullopt;
  }
}

shared::Result<DType> ParseWeightType(std::string_view name) {
  std::string lower(name);
  for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (lower == "f32") return DType::kF32;
  if (lower == "f16") return DType::kF16;
  if (lower == "q8_0") return DType::kQ8_0;
  if (lower == "q4_0") return DType::kQ4_0;
  if (lower == "q5_0") return DType::kQ5_0;
  if (lower == "iq4_nl") return DType::kIQ4_NL;
  if (lower == "q4_k") return DType::kQ4_K;
  if (lower == "q5_k") return DType::kQ5_K;
  if (lower == "q6_k") return DType::kQ6_K;
  if (lower == "iq4_xs") return DType::kIQ4_XS;
  if (lower == "q4_1") return DType::kQ4_1;
  if (lower == "q5_1") return DType::kQ5_1;
  if (lower == "q2_k") return DType::kQ2_K;
  if (lower == "q3_k") return DType::kQ3_K;
  if (lower == "mxfp4") return DType::kMXFP4;
  return shared::InvalidArgument("weight type '" + std::string(name) +
                                 "' is not one of f32, f16, q8_0, q4_0, q4_1, q5_0, q5_1, iq4_nl, "
                                 "q2_k, q3_k, q4_k, q5_k, q6_k, iq4_xs, mxfp4");
}

uint32_t LlamaFileType(DType type) {
  switch (type) {
    case DType::kF32: return 0;
    case DType::kF16: return 1;
    case DType::kQ4_0: return 2;
    case DType::kQ8_0: return 7;
    case DType::kQ5_0: return 8;     // MOSTLY_Q5_0
    case DType::kIQ4_NL: return 25;  // MOSTLY_IQ4_NL
    case DType::kQ4_K: return 14;    // MOSTLY_Q4_K_S: every 2-D weight Q4_K
    case DType::kQ5_K: return 16;    // MOSTLY_Q5_K_S: every 2-D weight Q5_K
    case DType::kQ6_K: return 18;
    case DType::kIQ4_XS: return 30;  // MOSTLY_IQ4_XS
    case DType::kQ4_1: return 3;     // MOSTLY_Q4_1
    case DType::kQ5_1: return 9;     // MOSTLY_Q5_1
    case DType::kQ2_K: return 10;    // MOSTLY_Q2_K (its mix aside, every 2-D weight Q2_K)
    case DType::kQ3_K: return 11;    // MOSTLY_Q3_K_S: every 2-D weight Q3_K
    case DType::kMXFP4: return 38;   // MOSTLY_MXFP4_MOE
    default: break;
  }
  SM_CHECK(false) << "no llama file type for dtype " << static_cast<uint32_t>(type);
  return 0;
}

void EncodeF32Row(std::span<const float> x, DType type, uint8_t* out) {
  const auto n = static_cast<int64_t>(x.size());
  switch (type) {
    case DType::kF32: std::memcpy(out, x.data(), x.size() * sizeof(float)); return;
    case DType::kF16:
      for (int64_t i = 0; i < n; i++) {
        const uint16_t h = kernels::Fp32ToFp16(x[i]);
        std::memcpy(out + 2 * i, &h, sizeof(h));
      }
      return;
    case DType::kQ8_0:
      // Blocks are 2-byte aligned structs: `out` is a row start inside a heap buffer, at a
      // multiple of the (even) block size, so the cast is to a suitably aligned address.
      kernels::QuantizeQ8_0Ref(x.data(), reinterpret_cast<kernels::BlockQ8_0*>(out), n);
      return;
    case DType::kQ4_0:
      kernels::QuantizeQ4_0Ref(x.data(), reinterpret_cast<kernels::BlockQ4_0*>(out), n);
      return;
    case DType::kQ5_0:
      kernels::QuantizeQ5_0Ref(x.data(), reinterpret_cast<kernels::BlockQ5_0*>(out), n);
      return;
    case DType::kIQ4_NL:
      kernels::QuantizeIQ4_NLRef(x.data(), reinterpret_cast<kernels::BlockIQ4_NL*>(out), n);
      return;
    case DType::kMXFP4:  // 1-byte aligned blocks
      kernels::QuantizeMXFP4Ref(x.data(), reinterpret_cast<kernels::BlockMXFP4*>(out), n);
      return;
    case DType::kQ4_K:
      kernels::QuantizeQ4_KRef(x.data(), reinterpret_cast<kernels::BlockQ4_K*>(out), n);
      return;
    case DType::kQ5_K:
      kernels::QuantizeQ5_KRef(x.data(), reinterpret_cast<kernels::BlockQ5_K*>(out), n);
      return;
    case DType::kQ6_K:
      kernels::QuantizeQ6_KRef(x.data(), reinterpret_cast<kernels::BlockQ6_K*>(out), n);
      return;
    case DType::kIQ4_XS:
      kernels::QuantizeIQ4_XSRef(x.data(), reinterpret_cast<kernels::BlockIQ4_XS*>(out), n);
      return;
    case DType::kQ4_1:
      kernels::QuantizeQ4_1Ref(x.data(), reinterpret_cast<kernels::BlockQ4_1*>(out), n);
      return;
    case DType::kQ5_1:
      kernels::QuantizeQ5_1Ref(x.data(), reinterpret_cast<kernels::BlockQ5_1*>(out), n);
      return;
    case DType::kQ2_K:
      kernels::QuantizeQ2_KRef(x.data(), reinterpret_cast<kernels::BlockQ2_K*>(out), n);
      return;
    case DType::kQ3_K:
      kernels::QuantizeQ3_KRef(x.data(), reinterpret_cast<kernels::BlockQ3_K*>(out), n);
      return;
    default: break;
  }
  SM_CHECK(false) << "cannot encode dtype " << static_cast<uint32_t>(type);
}

LlamaGgufBuilder::LlamaGgufBuilder(const ModelConfig& c, std::string_view name, DType file_type,
                                   std::optional<uint32_t> llama_file_type) {
  SM_CHECK(IsWritableWeightType(file_type)) << "unsupported file type";
  summary_.config = c;
  summary_.file_type = file_type;
  const std::string a = c.architecture.empty() ? std::string(kArch) : c.architecture;
  summary_.config.architecture = a;
  writer_.AddString("general.architecture", a);
  writer_.AddString("general.name", name);
  writer_.AddU32("general.file_type", llama_file_type.value_or(LlamaFileType(file_type)));
  writer_.AddU32("general.quantization_version", kQuantizationVersion);
  writer_.AddU32(a + ".vocab_size", static_cast<uint32_t>(c.vocab_size));
  writer_.AddU32(a + ".context_length", static_cast<uint32_t>(c.context_length));
  writer_.AddU32(a + ".embedding_length", static_cast<uint32_t>(c.dim));
  writer_.AddU32(a + ".block_count", static_cast<uint32_t>(c.n_layers));
  writer_.AddU32(a + ".feed_forward_length", static_cast<uint32_t>(c.hidden_dim));
  writer_.AddU32(a + ".rope.dimension_count", static_cast<uint32_t>(c.rotary_dims()));
  writer_.AddU32(a + ".attention.head_count", static_cast<uint32_t>(c.n_heads));
  writer_.AddU32(a + ".attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  if (c.head_size > 0) {  // an explicit head size: what llama.cpp's converter writes for it
    writer_.AddU32(a + ".attention.key_length", static_cast<uint32_t>(c.head_size));
    writer_.AddU32(a + ".attention.value_length", static_cast<uint32_t>(c.head_size));
  }
  if (c.moe()) {  // what llama.cpp's converters write for Mixtral, Qwen3-MoE, Qwen2-MoE, OLMoE
    writer_.AddU32(a + ".expert_count", static_cast<uint32_t>(c.n_experts));
    writer_.AddU32(a + ".expert_used_count", static_cast<uint32_t>(c.n_experts_used));
    if (a == "qwen3moe" || a == "gpt-oss" || a == "qwen2moe") {
      writer_.AddU32(a + ".expert_feed_forward_length", static_cast<uint32_t>(c.expert_ffn_dim));
    }
    if (c.shared_expert_ffn_dim >
        0) {  // qwen2moe's converter, from shared_expert_intermediate_size
      writer_.AddU32(a + ".expert_shared_feed_forward_length",
                     static_cast<uint32_t>(c.shared_expert_ffn_dim));
    }
  }
  writer_.AddF32(a + ".attention.layer_norm_rms_epsilon", c.rms_norm_eps);
  writer_.AddF32(a + ".rope.freq_base", c.rope_theta);
  // Gemma's keys, as llama.cpp's converter writes them (only those set).
  if (c.sliding_window > 0) {
    writer_.AddU32(a + ".attention.sliding_window", static_cast<uint32_t>(c.sliding_window));
  }
  if (c.attn_softcap > 0) writer_.AddF32(a + ".attn_logit_softcapping", c.attn_softcap);
  if (c.final_softcap > 0) writer_.AddF32(a + ".final_logit_softcapping", c.final_softcap);
}

void LlamaGgufBuilder::AddArchU32(std::string_view suffix, uint32_t value) {
  writer_.AddU32(summary_.config.architecture + "." + std::string(suffix), value);
}

void LlamaGgufBuilder::AddArchF32(std::string_view suffix, float value) {
  writer_.AddF32(summary_.config.architecture + "." + std::string(suffix), value);
}

void LlamaGgufBuilder::AddArchString(std::string_view suffix, std::string_view value) {
  writer_.AddString(summary_.config.architecture + "." + std::string(suffix), value);
}

void LlamaGgufBuilder::AddSpmVocab(const SpmVocab& v) {
  std::vector<std::string> pieces;
  pieces.reserve(v.pieces.size());
  for (const std::string& p : v.pieces) pieces.push_back(SpaceToMark(p));
  std::vector<int32_t> types;
  types.reserve(v.types.size());
  for (SpmTokenType t : v.types) types.push_back(static_cast<int32_t>(t));
  writer_.AddString("tokenizer.ggml.model", "llama");
  writer_.AddStringArray("tokenizer.ggml.tokens", pieces);
  writer_.AddF32Array("tokenizer.ggml.scores", v.scores);
  writer_.AddI32Array("tokenizer.ggml.token_type", types);
  for (auto [key, id] : {std::pair{"tokenizer.ggml.bos_token_id", v.bos_id},
                         std::pair{"tokenizer.ggml.eos_token_id", v.eos_id},
                         std::pair{"tokenizer.ggml.unknown_token_id", v.unk_id}}) {
    if (id >= 0) writer_.AddU32(key, static_cast<uint32_t>(id));
  }
  writer_.AddBool("tokenizer.ggml.add_bos_token", v.add_bos);
  writer_.AddBool("tokenizer.ggml.add_eos_token", false);
  writer_.AddBool("tokenizer.ggml.add_space_prefix", v.add_space_prefix);
}

void LlamaGgufBuilder::AddChatTemplate(std::string_view source) {
  writer_.AddString("tokenizer.chat_template", source);
}

void LlamaGgufBuilder::Note(std::string_view name, int64_t cols, DType wanted, DType stored) {
  const kernels::DTypeTraits& t = Traits(wanted);
  std::string note = NamePattern(name) + (stored == DType::kF32 ? " kept F32" : " stored ") +
                     (stored == DType::kF32 ? "" : Traits(stored).name) + ": its row length " +
                     std::to_string(cols) + " is not a multiple of the " + t.name + " block (" +
                     std::to_string(t.block_elems) + ")" +
                     (stored == DType::kF32 ? "" : ", llama.cpp's fallback type");
  for (const std::string& n : summary_.notes) {
    if (n == note) return;
  }
  summary_.notes.push_back(std::move(note));
}

void LlamaGgufBuilder::AddMatrix(std::string_view name, int64_t rows, int64_t cols, DType type,
                                 RowSource source) {
  SM_CHECK(IsWritableWeightType(type)) << "unsupported weight type for " << name;
  const kernels::DTypeTraits& t = Traits(type);
  if (cols % t.block_elems != 0 && t.block_elems == kernels::kQkK) {
    const std::optional<DType> fallback = RowFallbackType(type);
    if (!fallback && status_.ok()) {
      status_ = shared::InvalidArgument(
          std::string(name) + ": " + t.name + " stores rows in blocks of " +
          std::to_string(t.block_elems) + " elements, but its row length " + std::to_string(cols) +
          " is not a multiple of " + std::to_string(t.block_elems) +
          " and it has no fallback type (choose another type)");
    }
    if (!fallback) return;
    Note(name, cols, type, *fallback);
    type = *fallback;
  }
  if (cols % Traits(type).block_elems != 0) {
    Note(name, cols, type, DType::kF32);
    type = DType::kF32;
  }
  AddTensor(name, {cols, rows}, type, std::move(source));
}

void LlamaGgufBuilder::AddExperts(std::string_view name, int64_t n_experts, int64_t rows,
                                  int64_t cols, DType type, RowSource source) {
  SM_CHECK(IsWritableWeightType(type)) << "unsupported weight type for " << name;
  if (cols % Traits(type).block_elems != 0 && status_.ok()) {
    status_ = shared::InvalidArgument(std::string(name) + ": the experts' row length " +
                                      std::to_string(cols) + " is not a multiple of the " +
                                      Traits(type).name + " block (" +
                                      std::to_string(Traits(type).block_elems) + ")");
    return;
  }
  AddTensor(name, {cols, rows, n_experts}, type, std::move(source));
}

void LlamaGgufBuilder::AddVector(std::string_view name, int64_t n, RowSource source) {
  AddTensor(name, {n}, DType::kF32, std::move(source));
}

void LlamaGgufBuilder::AddTensor(std::string_view name, std::vector<int64_t> dims, DType type,
                                 RowSource source) {
  const int64_t cols = dims[0];
  int64_t rows = 1;  // every dimension past the row's
  for (size_t i = 1; i < dims.size(); i++) rows *= dims[i];
  summary_.parameter_count += static_cast<uint64_t>(rows * cols);
  summary_.tensors_per_type[Traits(type).name]++;
  const size_t row_bytes = kernels::RowBytes(Traits(type), cols);
  // Generates one row at a time into a [cols] scratch row, so a tensor costs its encoded bytes
  // (the writer's buffer) plus one F32 row.
  writer_.AddTensor(
      name, type, dims,
      [rows, cols, type, row_bytes, source = std::move(source)](std::span<uint8_t> out) {
        SM_CHECK(out.size() == row_bytes * static_cast<size_t>(rows))
            << "tensor bytes do not match its shape";
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows; r++) {
          source(r, row);
          EncodeF32Row(row, type, out.data() + r * row_bytes);
        }
      });
}

shared::Result<GgufBuildSummary> LlamaGgufBuilder::WriteFile(const std::string& path,
                                                             const GgufWriter::Progress& progress) {
  SM_RETURN_IF_ERROR(status_);
  SM_RETURN_IF_ERROR(writer_.WriteFile(path, progress));
  GgufBuildSummary summary = summary_;
  std::error_code ec;
  const uintmax_t size = std::filesystem::file_size(path, ec);
  summary.file_bytes = ec ? 0 : static_cast<uint64_t>(size);
  return summary;
}

shared::Result<std::vector<uint8_t>> LlamaGgufBuilder::WriteBuffer(GgufBuildSummary* summary) {
  SM_RETURN_IF_ERROR(status_);
  SM_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, writer_.WriteBuffer());
  if (summary != nullptr) {
    *summary = summary_;
    summary->file_bytes = bytes.size();
  }
  return bytes;
}

}  // namespace smallmind::worker
