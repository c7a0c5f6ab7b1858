#include "worker/model/model_format.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "worker/model/llama2c/llama2c_reader.h"

namespace smallmind::worker {
namespace {

constexpr char kGgufMagic[] = "GGUF";
constexpr size_t kHeadBytes = 28;  // the llama2.c header; the GGUF magic is its first 4

// The first bytes of a magic, printable characters as they are and others as \xHH.
std::string Printable(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes.first(std::min<size_t>(bytes.size(), 4))) {
    const auto c = static_cast<unsigned char>(b);
    if (c >= 0x20 && c < 0x7f && c != '\'' && c != '\\') {
      out += static_cast<char>(c);
    } else {
      char hex[5];
      std::snprintf(hex, sizeof(hex), "\\x%02X", c);
      out += hex;
    }
  }
  return out;
}

}  // namespace

shared::Result<ModelFormat> DetectModelFormat(std::span<const std::byte> head,
                                              const std::string& name) {
  if (head.size() >= 4 && std::memcmp(head.data(), kGgufMagic, 4) == 0) return ModelFormat::kGguf;
  const std::string problem = Llama2cHeaderProblem(head);
  if (problem.empty()) return ModelFormat::kLlama2c;
  if (head.empty()) {
    return shared::InvalidArgument(name +
                                   " is empty: neither a GGUF file nor a llama2.c checkpoint");
  }
  return shared::InvalidArgument(name + " is neither a GGUF file (magic 'GGUF', found '" +
                                 Printable(head) + "') nor a llama2.c checkpoint (" + problem +
                                 ")");
}

shared::Result<ModelFormat> DetectModelFormat(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      return shared::NotFound(path + " does not exist (a model is a .gguf file, a llama2.c " +
                              "checkpoint, or a builtin: name)");
    }
    return shared::InvalidArgument(path + ": cannot read the model file: " + std::strerror(errno));
  }
  if (S_ISDIR(st.st_mode)) {
    return shared::InvalidArgument(path + " is a directory; pass the model file inside it");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return shared::InvalidArgument(path + ": cannot read the model file: " + std::strerror(errno));
  }
  std::byte head[kHeadBytes];
  in.read(reinterpret_cast<char*>(head), kHeadBytes);
  return DetectModelFormat(std::span<const std::byte>(head, static_cast<size_t>(in.gcount())),
                           path);
}

}  // namespace smallmind::worker
