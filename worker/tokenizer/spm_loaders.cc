// The SpmTokenizer loaders declared in spm_tokenizer.h: llama2.c tokenizer.bin and the builtin
// byte-level vocabulary.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <utility>

#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

namespace {

// A llama2.c vocabulary of 32000 tokens is ~0.5 MB; anything past this is not a tokenizer.bin.
constexpr int64_t kMaxTokenizerFileBytes = int64_t{1} << 30;

// Bounds-checked little-endian reader over the file bytes.
class ByteReader {
 public:
  explicit ByteReader(std::string_view data) : data_(data) {}
  size_t offset() const { return offset_; }
  size_t remaining() const { return data_.size() - offset_; }
  bool ReadU32(uint32_t* v) {
    if (remaining() < 4) return false;
    const auto* p = reinterpret_cast<const uint8_t*>(data_.data() + offset_);
    *v = uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
    offset_ += 4;
    return true;
  }
  bool ReadF32(float* v) {
    uint32_t bits = 0;
    if (!ReadU32(&bits)) return false;
    std::memcpy(v, &bits, sizeof(*v));
    return true;
  }
  bool ReadBytes(size_t n, std::string_view* v) {
    if (remaining() < n) return false;
    *v = data_.substr(offset_, n);
    offset_ += n;
    return true;
  }

 private:
  std::string_view data_;
  size_t offset_ = 0;
};

shared::Result<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) {
    return shared::NotFound("cannot open tokenizer file '" + path + "': " + std::strerror(errno));
  }
  const std::streamoff size = in.tellg();
  if (size < 0 || size > kMaxTokenizerFileBytes) {
    return shared::InvalidArgument("tokenizer file '" + path + "' has an implausible size (" +
                                   std::to_string(size) + " bytes)");
  }
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) {
    return shared::InvalidArgument("cannot read tokenizer file '" + path + "'");
  }
  return bytes;
}

// Sets the type of token `i` from its llama2.c spelling and rewrites BOS/EOS to "<s>"/"</s>".
void ClassifyLlama2cPiece(TokenId i, SpmVocab* vocab) {
  std::string& piece = vocab->pieces[i];
  SpmTokenType type = SpmTokenType::kNormal;
  if (piece == "\n<s>\n") {
    type = SpmTokenType::kControl;
    piece = "<s>";
    if (vocab->bos_id < 0) vocab->bos_id = i;
  } else if (piece == "\n</s>\n") {
    type = SpmTokenType::kControl;
    piece = "</s>";
    if (vocab->eos_id < 0) vocab->eos_id = i;
  } else if (piece == "<unk>") {
    type = SpmTokenType::kUnknown;
    if (vocab->unk_id < 0) vocab->unk_id = i;
  } else if (piece.size() == 6 && piece.compare(0, 3, "<0x") == 0 && piece[5] == '>' &&
             std::isxdigit(static_cast<unsigned char>(piece[3])) &&
             std::isxdigit(static_cast<unsigned char>(piece[4]))) {
    type = SpmTokenType::kByte;
  }
  vocab->types.push_back(type);
}

shared::Result<SpmVocab> ParseLlama2cVocab(const std::string& path, std::string_view bytes,
                                           int vocab_size) {
  const std::string file = "tokenizer file '" + path + "'";
  ByteReader reader(bytes);
  uint32_t max_token_length = 0;
  if (!reader.ReadU32(&max_token_length)) {
    return shared::InvalidArgument(file + " is truncated: no max_token_length header");
  }
  // Every token takes at least 8 bytes (score + length), so the file bounds the count before
  // anything is reserved.
  if (static_cast<uint64_t>(vocab_size) > reader.remaining() / 8) {
    return shared::InvalidArgument(file + " is truncated: " + std::to_string(bytes.size()) +
                                   " bytes cannot hold the model's " + std::to_string(vocab_size) +
                                   " tokens");
  }
  if (max_token_length == 0 || max_token_length > reader.remaining()) {
    return shared::InvalidArgument(file + " has an implausible max_token_length " +
                                   std::to_string(max_token_length));
  }
  SpmVocab vocab;
  vocab.pieces.reserve(vocab_size);
  vocab.scores.reserve(vocab_size);
  vocab.types.reserve(vocab_size);
  for (TokenId i = 0; i < vocab_size; ++i) {
    const std::string where =
        file + " token " + std::to_string(i) + " at byte " + std::to_string(reader.offset());
    float score = 0;
    uint32_t len = 0;
    std::string_view piece;
    if (!reader.ReadF32(&score) || !reader.ReadU32(&len)) {
      return shared::InvalidArgument(where + ": truncated (file ends inside the token header)");
    }
    if (std::isnan(score)) return shared::InvalidArgument(where + ": score is NaN");
    if (len == 0 || len > max_token_length) {
      return shared::InvalidArgument(
          where + ": length " + std::to_string(len) +
          " is outside [1, max_token_length=" + std::to_string(max_token_length) + "]");
    }
    if (!reader.ReadBytes(len, &piece)) {
      return shared::InvalidArgument(where + ": truncated (" + std::to_string(len) +
                                     " piece bytes declared, " +
                                     std::to_string(reader.remaining()) + " left)");
    }
    vocab.pieces.emplace_back(piece);
    vocab.scores.push_back(score);
    ClassifyLlama2cPiece(i, &vocab);
  }
  if (reader.remaining() != 0) {
    return shared::InvalidArgument(file + " has " + std::to_string(reader.remaining()) +
                                   " bytes after the model's " + std::to_string(vocab_size) +
                                   " tokens: it belongs to a larger vocabulary");
  }
  return vocab;
}

}  // namespace

shared::Result<std::unique_ptr<SpmTokenizer>> LoadLlama2cTokenizer(const std::string& path,
                                                                   int vocab_size) {
  if (vocab_size <= 0) {
    return shared::InvalidArgument("tokenizer file '" + path + "': model vocab_size " +
                                   std::to_string(vocab_size) + " must be positive");
  }
  SM_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  return LoadLlama2cTokenizerFromMemory(bytes, path, vocab_size);
}

shared::Result<std::unique_ptr<SpmTokenizer>> LoadLlama2cTokenizerFromMemory(
    std::string_view bytes, const std::string& name, int vocab_size) {
  if (vocab_size <= 0) {
    return shared::InvalidArgument("tokenizer file '" + name + "': model vocab_size " +
                                   std::to_string(vocab_size) + " must be positive");
  }
  SM_ASSIGN_OR_RETURN(SpmVocab vocab, ParseLlama2cVocab(name, bytes, vocab_size));
  vocab.add_bos = true;
  vocab.add_space_prefix = true;
  auto tokenizer = SpmTokenizer::Create(std::move(vocab), TokenizerKind::kSpm);
  if (!tokenizer.ok()) {
    return shared::InvalidArgument("tokenizer file '" + name +
                                   "': " + tokenizer.status().message());
  }
  return tokenizer;
}

std::unique_ptr<SpmTokenizer> MakeByteLevelTokenizer() {
  constexpr int kVocab = 259;
  constexpr char kHex[] = "0123456789ABCDEF";
  SpmVocab vocab;
  vocab.pieces = {"<unk>", "<s>", "</s>"};
  vocab.types = {SpmTokenType::kUnknown, SpmTokenType::kControl, SpmTokenType::kControl};
  for (int b = 0; b < 256; ++b) {
    vocab.pieces.push_back(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">");
    vocab.types.push_back(SpmTokenType::kByte);
  }
  vocab.scores.assign(kVocab, 0.0f);
  vocab.unk_id = 0;
  vocab.bos_id = 1;
  vocab.eos_id = 2;
  vocab.add_bos = true;
  vocab.add_space_prefix = false;  // a <0x20> prefix would survive decoding as a visible space
  auto tokenizer = SpmTokenizer::Create(std::move(vocab), TokenizerKind::kByte);
  SM_CHECK(tokenizer.ok()) << tokenizer.status().ToString();
  return std::move(tokenizer).value();
}

}  // namespace smallmind::worker
