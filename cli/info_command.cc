#include "cli/info_command.h"

#include <cstdio>
#include <string>

#include <google/protobuf/text_format.h>

namespace smallmind::cli {

InfoCommand::InfoCommand(CLI::App& parent)
    : Command(parent, "info", "print the served model's description (GetModelInfo)") {
  AddClientFlags(app(), client_);
}

shared::Result<int> InfoCommand::Run() const {
  SM_ASSIGN_OR_RETURN(Client client, Client::Connect(client_));
  grpc::ClientContext context;
  client.Prepare(&context);
  v1::ModelInfo info;
  const grpc::Status status =
      client.stub().GetModelInfo(&context, v1::GetModelInfoRequest(), &info);
  if (!status.ok()) return PrintRpcError(status);
  // Every field, present or not, as "name: value" (repeated ones joined by spaces); the
  // tensor-type mix one type a line.
  const auto* descriptor = info.GetDescriptor();
  const auto* reflection = info.GetReflection();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const auto* field = descriptor->field(f);
    if (field->name() == "tensor_mix") continue;
    std::string line;
    const int n = field->is_repeated() ? reflection->FieldSize(info, field) : 1;
    for (int i = 0; i < n; ++i) {
      std::string value;
      google::protobuf::TextFormat::PrintFieldValueToString(info, field,
                                                            field->is_repeated() ? i : -1, &value);
      line += (i ? " " : "") + value;
    }
    std::printf("%-20s %s\n", (field->name() + ":").c_str(), line.c_str());
  }
  for (const v1::TensorTypeUse& use : info.tensor_mix()) {
    std::printf("%-20s %-8s %5u tensors %12.2f MiB\n", "tensor_mix:", use.type().c_str(),
                use.tensors(), static_cast<double>(use.bytes()) / (1 << 20));
  }
  return 0;
}

}  // namespace smallmind::cli
