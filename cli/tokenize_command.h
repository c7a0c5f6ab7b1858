// `smallmind tokenize`: text -> token ids, or with --decode ids -> text. See cli/command.h.
#pragma once

#include <optional>

#include "cli/client.h"
#include "cli/command.h"
#include "cli/prompt_source.h"

namespace smallmind::cli {

class TokenizeCommand : public Command {
 public:
  explicit TokenizeCommand(CLI::App& parent);
  shared::Status Validate() const override;
  shared::Result<int> Run() const override;

 private:
  ClientFlags client_;
  PromptSource text_;  // with --decode: the ids
  bool decode_ = false;
  std::optional<bool> add_bos_;
};

}  // namespace smallmind::cli
