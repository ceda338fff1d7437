// JSON string literals written without a JSON tree (the hot answers): what the JSON parser
// reads back is the text, quotes, backslashes and control characters included; valid
// UTF-8 passes through and invalid bytes become U+FFFD, as the library's own writer does.
#include "core/text.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace boxoffice {
namespace {

std::string Literal(std::string_view text) {
  std::string out;
  AppendJsonString(&out, text);
  return out;
}

TEST(AppendJsonString, ReadsBackAsTheSameText) {
  for (std::string_view text : {std::string_view(""), std::string_view("A12"),
                                std::string_view("say \"hi\" \\ back"),
                                std::string_view("tab\there\nnewline\x01\x1f"),
                                std::string_view("caf\xc3\xa9 \xe2\x82\xac 12,50")}) {
    const std::string literal = Literal(text);
    EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), text) << literal;
  }
  EXPECT_EQ(Literal("a\"b"), R"("a\"b")");
  EXPECT_EQ(Literal("\x01"), R"("\u0001")");
}

TEST(AppendJsonString, InvalidUtf8BecomesTheReplacementCharacter) {
  const std::string literal = Literal("bad \xff byte");
  EXPECT_EQ(nlohmann::json::parse(literal).get<std::string>(), "bad \xef\xbf\xbd byte");
}

}  // namespace
}  // namespace boxoffice
