#include "cli/tokenize_command.h"

#include <charconv>
#include <cstdint>
#include <cstdio>

namespace smallmind::cli {
namespace {

shared::Result<uint32_t> ParseTokenId(const std::string& text) {
  uint32_t id = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc() || end != text.data() + text.size()) {
    return shared::InvalidArgument("--decode takes token ids, got '" + text + "'");
  }
  return id;
}

}  // namespace

TokenizeCommand::TokenizeCommand(CLI::App& parent)
    : Command(parent, "tokenize", "text -> token ids, or --decode ids -> text") {
  text_.AddFlags(app(), "text", "the text to encode (with --decode: the ids)");
  CLI::Option* decode = app().add_flag("--decode", decode_, "decode the token ids given instead");
  app()
      .add_option("--add-bos", add_bos_, "prepend BOS: true or false")
      ->default_str("the model's rule")
      ->excludes(decode);
  decode->excludes("--prompt-file");
  AddClientFlags(app(), client_);
}

shared::Status TokenizeCommand::Validate() const {
  if (!decode_) return text_.Validate();
  if (text_.arguments().empty()) return shared::InvalidArgument("--decode needs token ids");
  for (const std::string& text : text_.arguments()) SM_RETURN_IF_ERROR(ParseTokenId(text).status());
  return shared::Status::Ok();
}

shared::Result<int> TokenizeCommand::Run() const {
  v1::TokenizeRequest request;
  if (decode_) {
    for (const std::string& text : text_.arguments()) {
      SM_ASSIGN_OR_RETURN(uint32_t id, ParseTokenId(text));
      request.mutable_token_ids()->add_ids(id);
    }
  } else {
    SM_ASSIGN_OR_RETURN(std::string text, text_.Read());
    request.set_text(std::move(text));
    if (add_bos_) request.set_add_bos(*add_bos_);
  }
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  grpc::ClientContext context;
  client.Prepare(&context);
  v1::TokenizeResponse response;
  const grpc::Status status = client.stub().Tokenize(&context, request, &response);
  if (!status.ok()) return PrintRpcError(status);
  if (decode_) {
    std::fwrite(response.text().data(), 1, response.text().size(), stdout);
    std::fputc('\n', stdout);
  } else {
    for (int i = 0; i < response.token_ids_size(); ++i) {
      std::printf(i ? " %u" : "%u", response.token_ids(i));
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace smallmind::cli
