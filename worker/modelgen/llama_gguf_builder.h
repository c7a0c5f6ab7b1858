// LlamaGgufBuilder: assembles a GGUF file of the `llama` architecture (llama.cpp's metadata keys,
// tensor names and SentencePiece tokenizer keys) from tensors given as F32 row sources, encoding
// each row to its stored type while the file is written. Used by the model generator and the
// llama2.c converter. Not thread-safe: one builder per file, on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/dtype.h"
#include "shared/status.h"
#include "worker/modelgen/gguf_writer.h"
#include "worker/tokenizer/spm_tokenizer.h"
#include "worker/types/model_config.h"

namespace smallmind::worker {

// What a built file holds, for the command line to print.
struct GgufBuildSummary {
  ModelConfig config;
  kernels::DType file_type = kernels::DType::kF32;  // general.file_type's weight type
  uint64_t parameter_count = 0;                     // elements of every tensor
  uint64_t file_bytes = 0;
  std::map<std::string, int> tensors_per_type;  // "Q8_0" -> number of tensors stored so
  // Tensors stored in another type than asked, with the reason (one line per name pattern).
  std::vector<std::string> notes;
};

// Weight types a builder can store: F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K, IQ4_XS, MXFP4.
bool IsWritableWeightType(kernels::DType type);
// The type llama.cpp's quantizer (llama_tensor_get_type, src/llama-quant.cpp) stores a tensor of
// the 256-block `type` in when its row length is no multiple of 256: Q4_K -> Q5_0, Q5_K -> Q5_1,
// Q6_K -> Q8_0, Q2_K / Q3_K / IQ4_XS -> IQ4_NL; nullopt for any other type.
std::optional<kernels::DType> RowFallbackType(kernels::DType type);
// "f32", "f16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl", "q2_k", "q3_k", "q4_k", "q5_k",
// "q6_k", "iq4_xs", "mxfp4" (either case) -> the type; InvalidArgument names the choices.
shared::Result<kernels::DType> ParseWeightType(std::string_view name);
// llama.cpp's general.file_type (LLAMA_FTYPE_ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q4_0 2,
// MOSTLY_Q8_0 7, MOSTLY_Q5_0 8, MOSTLY_IQ4_NL 25, MOSTLY_Q4_K_S 14, MOSTLY_Q5_K_S 16, MOSTLY_Q6_K
// 18, MOSTLY_IQ4_XS 30, MOSTLY_Q4_1 3, MOSTLY_Q5_1 9, MOSTLY_Q2_K 10, MOSTLY_Q3_K_S 11,
// MOSTLY_MXFP4_MOE 38) for a file
// whose 2-D weights are `type`.
uint32_t LlamaFileType(kernels::DType type);
// Encodes x: [n] floats as n elements of `type` (n a multiple of its block size) into out:
// [RowBytes(type, n)] bytes. Q8_0, Q4_0 and MXFP4 use ggml's reference quantizers bit for bit, the
// K-quants, IQ4_XS and the low-bit types smallmind's (kernels/ref/dequant_ref.h, low_bit_ref.h).
void EncodeF32Row(std::span<const float> x, kernels::DType type, uint8_t* out);

class LlamaGgufBuilder {
 public:
  // Fills out: [cols] with the F32 values of row `row` of a tensor. Called while the file is
  // written, rows in order; must not fail.
  using RowSource = std::function<void(int64_t row, std::span<float> out)>;

  // Writes general.* and llama.* hyperparameter keys of `config` (which the caller has
  // validated). `name` is general.name; `file_type` the type most 2-D weights are stored in;
  // general.file_type is LlamaFileType(file_type) unless `llama_file_type` says otherwise (a
  // mix such as MOSTLY_Q4_K_M, 15).
  LlamaGgufBuilder(const ModelConfig& config, std::string_view name, kernels::DType file_type,
                   std::optional<uint32_t> llama_file_type = std::nullopt);

  // tokenizer.ggml.* keys (model "llama"): pieces with ' ' written as U+2581, scores, token
  // types, special ids, add_bos_token and add_space_prefix from `vocab`.
  void AddSpmVocab(const SpmVocab& vocab);
  // tokenizer.chat_template: a Jinja chat template's source.
  void AddChatTemplate(std::string_view source);
  // One more line for the summary's notes (what the caller changed, e.g. the vocabulary's).
  void AddNote(std::string note) { summary_.notes.push_back(std::move(note)); }

  // One more `{arch}.<suffix>` hyperparameter key (a family's own: phi3's
  // rope.scaling.original_context_length, attention.sliding_window, rope.scaling.attn_factor).
  void AddArchU32(std::string_view suffix, uint32_t value);
  void AddArchF32(std::string_view suffix, float value);
  void AddArchString(std::string_view suffix, std::string_view value);

  // A [rows, cols] matrix stored as `type`, or as F32 when cols is not a multiple of the type's
  // block size (recorded in the summary's notes). K-quants (blocks of 256) store such rows in
  // RowFallbackType(type) as llama.cpp's quantizer does (noted too; then F32 if cols is no
  // multiple of 32 either); a 256-block type without a fallback would refuse them, failing
  // WriteFile.
  void AddMatrix(std::string_view name, int64_t rows, int64_t cols, kernels::DType type,
                 RowSource source);
  // A mixture of experts' 3-D tensor [n_experts, rows, cols] (dims {cols, rows, n_experts}), its
  // rows numbered expert by expert (row e * rows + r is row r of expert e); `type` must hold whole
  // rows of cols (no fallback: llama.cpp's quantizer would pick one for the whole tensor).
  void AddExperts(std::string_view name, int64_t n_experts, int64_t rows, int64_t cols,
                  kernels::DType type, RowSource source);
  // A [n] vector (norm weights), always F32 as llama.cpp stores them.
  void AddVector(std::string_view name, int64_t n, RowSource source);

  // The first error of any Add call fails these.
  shared::Result<GgufBuildSummary> WriteFile(const std::string& path,
                                             const GgufWriter::Progress& progress = {});
  shared::Result<std::vector<uint8_t>> WriteBuffer(GgufBuildSummary* summary = nullptr);

 private:
  void AddTensor(std::string_view name, std::vector<int64_t> dims, kernels::DType type,
                 RowSource source);
  // Records that `name` (rows of `cols`) is stored as `stored` instead of `wanted`.
  void Note(std::string_view name, int64_t cols, kernels::DType wanted, kernels::DType stored);

  shared::Status status_;  // the builder's own first error (the writer keeps its own)
  GgufWriter writer_;
  GgufBuildSummary summary_;
};

}  // namespace smallmind::worker
