#include "worker/tokenizer/rerank_pair.h"

namespace smallmind::worker {

std::vector<TokenId> JoinRerankPair(const RerankPairFormat& f, std::span<const TokenId> query,
                                    std::span<const TokenId> doc) {
  const TokenId end = f.eos >= 0 ? f.eos : f.sep;  // llama.cpp: SEP when the vocabulary has no EOS
  std::vector<TokenId> out;
  out.reserve(query.size() + doc.size() + 4);
  if (f.add_bos && f.bos >= 0) out.push_back(f.bos);
  out.insert(out.end(), query.begin(), query.end());
  if (f.add_eos && end >= 0) out.push_back(end);
  if (f.add_sep && f.sep >= 0) out.push_back(f.sep);
  out.insert(out.end(), doc.begin(), doc.end());
  if (f.add_eos && end >= 0) out.push_back(end);
  return out;
}

}  // namespace smallmind::worker
