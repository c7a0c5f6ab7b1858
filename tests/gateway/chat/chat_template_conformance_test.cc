// Conformance: every line of ../shared/chat-templates/cases.jsonl renders byte-identical, or fails
// with the message of its `skipped` field, with strftime_now pinned to 2026-01-15.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gateway/chat/chat_template.h"
#include "tests/testing/shared_data.h"

namespace smallmind::gateway {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

std::string ReadFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(ChatTemplateConformanceTest, RendersEverySharedCaseByteForByte) {
  SM_REQUIRE_SHARED_DATA("chat-templates/cases.jsonl");
  const fs::path dir = testing::SharedDataPath("chat-templates");
  std::map<std::string, ChatTemplate> templates;
  std::ifstream cases(dir / "cases.jsonl");
  std::string line;
  int rendered = 0, refused = 0;
  while (std::getline(cases, line)) {
    if (line.empty()) continue;
    const ordered_json c = ordered_json::parse(line);
    const std::string name = c["template"].get<std::string>();
    const std::string label = name + " case " + c["case"].get<std::string>();
    auto it = templates.find(name);
    if (it == templates.end()) {
      auto parsed = ChatTemplate::Parse(ReadFile(dir / name));
      ASSERT_TRUE(parsed.ok()) << name << ": " << parsed.status().ToString();
      it = templates.emplace(name, std::move(parsed).value()).first;
    }
    ChatRenderInput in;
    in.messages = c["messages"];
    in.bos_token = c["bos_token"].get<std::string>();
    in.eos_token = c["eos_token"].get<std::string>();
    in.add_generation_prompt = c["add_generation_prompt"].get<bool>();
    in.now = std::chrono::sys_days(std::chrono::year{2026} / 1 / 15);
    auto out = it->second.Render(in);
    if (c.contains("expected")) {
      ASSERT_TRUE(out.ok()) << label << ": " << out.status().ToString();
      EXPECT_EQ(out.value(), c["expected"].get<std::string>()) << label;
      ++rendered;
    } else {
      ASSERT_FALSE(out.ok()) << label << " rendered, but the template should refuse it";
      EXPECT_EQ(out.status().message(), c["skipped"].get<std::string>()) << label;
      ++refused;
    }
  }
  EXPECT_EQ(rendered, 27);
  EXPECT_EQ(refused, 3);
}

}  // namespace
}  // namespace smallmind::gateway
