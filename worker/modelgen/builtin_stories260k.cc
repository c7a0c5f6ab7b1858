#include "worker/modelgen/builtin_stories260k.h"

#include <string>
#include <string_view>
#include <utility>

#include "worker/model/llama2c/llama2c_reader.h"
#include "worker/tokenizer/spm_tokenizer.h"

namespace smallmind::worker {

shared::Result<BuiltinModel> MakeBuiltinStories260K() {
  BuiltinModel m;
  SM_ASSIGN_OR_RETURN(m.llama, LoadLlama2cCheckpointFromMemory(Stories260KCheckpointBytes(),
                                                               "builtin:stories260K"));
  const std::span<const std::byte> tok = Stories260KTokenizerBytes();
  SM_ASSIGN_OR_RETURN(m.tokenizer,
                      LoadLlama2cTokenizerFromMemory(
                          std::string_view(reinterpret_cast<const char*>(tok.data()), tok.size()),
                          "builtin:stories260K tok512.bin", m.llama.config.vocab_size));
  return m;
}

}  // namespace smallmind::worker
