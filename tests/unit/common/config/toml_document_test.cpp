#include "common/config/toml_document.h"

#include <gtest/gtest.h>

namespace scalws::common::config {
namespace {

TEST(TomlDocument, ConvertsEveryValueTypeWithItsPosition) {
  Result<ConfigValue> doc = parseTomlDocument(
      "s = \"x\"\ni = -3\nf = 1.5\nb = true\nd = 1979-05-27\na = [1, \"two\"]\nt = { k = 1 }\n",
      "doc.toml");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  const ConfigValue& root = *doc;
  EXPECT_TRUE(root.is(ConfigValue::Type::kTable));
  EXPECT_EQ(root.where.toString(), "doc.toml:1:1");
  ASSERT_EQ(root.entries.size(), 7u);

  const ConfigEntry* s = root.find("s");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->where.toString(), "doc.toml:1:1");
  EXPECT_EQ(s->value.where.toString(), "doc.toml:1:5");
  EXPECT_TRUE(s->value.is(ConfigValue::Type::kString));
  EXPECT_EQ(s->value.string, "x");
  EXPECT_EQ(root.find("i")->value.integer, -3);
  EXPECT_TRUE(root.find("i")->value.is(ConfigValue::Type::kInteger));
  EXPECT_EQ(root.find("f")->value.floating, 1.5);
  EXPECT_TRUE(root.find("b")->value.boolean);
  EXPECT_TRUE(root.find("d")->value.is(ConfigValue::Type::kDateTime));
  const ConfigValue& a = root.find("a")->value;
  ASSERT_EQ(a.array.size(), 2u);
  EXPECT_EQ(a.array[1].string, "two");
  EXPECT_EQ(a.array[1].where.toString(), "doc.toml:6:9");
  const ConfigValue& t = root.find("t")->value;
  EXPECT_EQ(t.where.toString(), "doc.toml:7:5");
  EXPECT_EQ(t.find("k")->value.integer, 1);
  EXPECT_EQ(root.find("missing"), nullptr);
}

TEST(TomlDocument, EntriesKeepFileOrder) {
  Result<ConfigValue> doc = parseTomlDocument("zeta = 1\nalpha = 2\nmid = 3\n", "doc.toml");
  ASSERT_TRUE(doc.ok());
  ASSERT_EQ(doc->entries.size(), 3u);
  EXPECT_EQ(doc->entries[0].key, "zeta");
  EXPECT_EQ(doc->entries[1].key, "alpha");
  EXPECT_EQ(doc->entries[2].key, "mid");
}

TEST(TomlDocument, SyntaxErrorNamesFileLineAndColumn) {
  Result<ConfigValue> doc = parseTomlDocument("a = 1\nb = \"open\n", "bad.toml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(doc.status().message().rfind("bad.toml:2:", 0), 0u) << doc.status().message();
  EXPECT_NE(doc.status().message().find("TOML syntax error: "), std::string::npos);
}

TEST(TomlDocument, DeepTableHeadersAreBounded) {
  std::string header = "[a";
  for (int i = 0; i < 70; ++i) header += ".a";
  header += "]\n";
  Result<ConfigValue> doc = parseTomlDocument(header, "deep.toml");
  ASSERT_FALSE(doc.ok());
  EXPECT_EQ(doc.status().message(), "deep.toml:1:1: values are nested more than 64 levels deep");

  std::string fine = "[a";
  for (int i = 0; i < 60; ++i) fine += ".a";
  fine += "]\n";
  EXPECT_TRUE(parseTomlDocument(fine, "deep.toml").ok());
}

// toml++ 3.3.0 asserted (aborting the process) on table headers whose first character
// starts no key; found by fuzzing, fixed upstream in marzer/tomlplusplus#301.
TEST(TomlDocument, MalformedTableHeaderIsASyntaxErrorNotAnAbort) {
  for (std::string_view text : {"[.a]\n", "[[[1]]]\n", "[[[a]]]\n", "[[=\n", "[.0.0.1\"] }\n"}) {
    Result<ConfigValue> doc = parseTomlDocument(text, "h.toml");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_EQ(doc.status().message().rfind("h.toml:1:", 0), 0u) << doc.status().message();
    EXPECT_NE(doc.status().message().find("TOML syntax error: "), std::string::npos);
  }
  EXPECT_EQ(parseTomlDocument("[.a]\n", "h.toml").status().message(),
            "h.toml:1:2: TOML syntax error: Error while parsing key: expected bare key starting "
            "character or string delimiter, saw '.'");
}

// toml++ 3.3.0 reached __builtin_unreachable() classifying many non-ASCII code points as
// whitespace (undefined behaviour; marzer/tomlplusplus#190, #295); found by fuzzing. The
// sanitizer build turns a regression into an abort here.
TEST(TomlDocument, NonAsciiWhereWhitespaceMayBeIsNoUndefinedBehaviour) {
  Result<ConfigValue> continued = parseTomlDocument("s = \"\"\"\\\n\xc2\xa7\"\"\"\n", "u.toml");
  ASSERT_TRUE(continued.ok()) << continued.status().message();
  EXPECT_EQ(continued->find("s")->value.string, "\xc2\xa7");

  Result<ConfigValue> stray = parseTomlDocument("\xcc\xaa", "u.toml");
  ASSERT_FALSE(stray.ok());
  EXPECT_EQ(stray.status().message().rfind("u.toml:1:1: TOML syntax error: ", 0), 0u)
      << stray.status().message();

  // Cyrillic, CJK symbols and Arabic presentation forms after a key, each a syntax error.
  for (std::string_view text : {"[a.a\xd0\x9e]\n", "a \xe3\x80\x81= 1\n", "a\xef\xb9\xb0 = 1\n"}) {
    Result<ConfigValue> doc = parseTomlDocument(text, "u.toml");
    ASSERT_FALSE(doc.ok()) << text;
    EXPECT_NE(doc.status().message().find("TOML syntax error: "), std::string::npos);
  }
  // What is whitespace stays recognised as such (and refused by TOML 1.0).
  Result<ConfigValue> nbsp = parseTomlDocument(
      "a =\xc2\xa0"
      "1\n",
      "u.toml");
  ASSERT_FALSE(nbsp.ok());
  EXPECT_EQ(nbsp.status().message().rfind("u.toml:1:4: TOML syntax error: ", 0), 0u)
      << nbsp.status().message();
}

TEST(TomlDocument, DescribeType) {
  EXPECT_EQ(describeType(ConfigValue::Type::kString), "a string");
  EXPECT_EQ(describeType(ConfigValue::Type::kInteger), "an integer");
  EXPECT_EQ(describeType(ConfigValue::Type::kFloat), "a float");
  EXPECT_EQ(describeType(ConfigValue::Type::kBoolean), "a boolean");
  EXPECT_EQ(describeType(ConfigValue::Type::kDateTime), "a date-time");
  EXPECT_EQ(describeType(ConfigValue::Type::kArray), "an array");
  EXPECT_EQ(describeType(ConfigValue::Type::kTable), "a table");
}

}  // namespace
}  // namespace scalws::common::config
