#include "worker/sched/sequence.h"

namespace smallmind::worker {

Sequence::Sequence(uint64_t id, SequenceRequest req, const Tokenizer& tokenizer, int vocab_size,
                   SequenceSink* sink)
    : id(id),
      request(std::move(req)),
      num_prompt_tokens(static_cast<int>(request.prompt.size())),
      sampler(request.sampling, vocab_size),
      stop(request.stopping),
      detokenizer(tokenizer, request.prompt.empty() ? -1 : request.prompt.back()),
      sink(sink) {
  tokens.reserve(request.prompt.size() + request.stopping.max_new_tokens + 1);
  tokens = request.prompt;
  sampler.AddPromptTokens(request.prompt);
  text_scratch.reserve(64);
  emit_scratch.reserve(256);
}

}  // namespace smallmind::worker
