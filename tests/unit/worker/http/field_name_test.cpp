#include "worker/http/field_name.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

const std::vector<std::pair<std::string, FieldName>>& knownNames() {
  static const std::vector<std::pair<std::string, FieldName>> names = {
      {"connection", FieldName::kConnection},
      {"content-length", FieldName::kContentLength},
      {"date", FieldName::kDate},
      {"expect", FieldName::kExpect},
      {"forwarded", FieldName::kForwarded},
      {"host", FieldName::kHost},
      {"keep-alive", FieldName::kKeepAlive},
      {"proxy-connection", FieldName::kProxyConnection},
      {"server", FieldName::kServer},
      {"te", FieldName::kTe},
      {"trailer", FieldName::kTrailer},
      {"transfer-encoding", FieldName::kTransferEncoding},
      {"upgrade", FieldName::kUpgrade},
      {"via", FieldName::kVia},
      {"x-forwarded-for", FieldName::kXForwardedFor},
      {"x-forwarded-host", FieldName::kXForwardedHost},
      {"x-forwarded-proto", FieldName::kXForwardedProto},
  };
  return names;
}

TEST(FieldNameTest, RecognisesEveryKnownNameInAnyCase) {
  for (const auto& [name, id] : knownNames()) {
    EXPECT_EQ(classifyFieldName(name), id) << name;
    std::string upper = name;
    for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 32 : c);
    EXPECT_EQ(classifyFieldName(upper), id) << upper;
    std::string mixed = name;
    for (size_t i = 0; i < mixed.size(); i += 2) mixed[i] = upper[i];
    EXPECT_EQ(classifyFieldName(mixed), id) << mixed;
  }
}

// A name is read as overlapping words: a change of any byte, wherever it lies, must make
// it another name (only a letter's other case keeps it).
TEST(FieldNameTest, AnyOtherByteAtAnyOffsetMakesItAnotherName) {
  for (const auto& [name, id] : knownNames()) {
    for (size_t at = 0; at < name.size(); ++at) {
      for (int x = 0; x < 256; ++x) {
        std::string changed = name;
        changed[at] = static_cast<char>(x);
        bool same = asciiLower(static_cast<char>(x)) == name[at];
        ASSERT_EQ(classifyFieldName(changed), same ? id : FieldName::kOther)
            << name << " with byte " << x << " at " << at;
      }
    }
  }
}

TEST(FieldNameTest, NamesOfOtherLengthsAreOther) {
  for (const auto& [name, id] : knownNames()) {
    EXPECT_EQ(classifyFieldName(name + "s"), FieldName::kOther) << name;
    EXPECT_EQ(classifyFieldName(name.substr(1)), FieldName::kOther) << name;
  }
  EXPECT_EQ(classifyFieldName(""), FieldName::kOther);
  EXPECT_EQ(classifyFieldName("content-type"), FieldName::kOther);
  EXPECT_EQ(classifyFieldName("x-forwarded-port"), FieldName::kOther);
  EXPECT_EQ(classifyFieldName(std::string("te\0", 3)), FieldName::kOther);
}

TEST(FieldNameTest, SetsHoldWhatTheyWereGiven) {
  constexpr FieldNameSet hop = {FieldName::kConnection, FieldName::kTe};
  static_assert(hop.contains(FieldName::kTe));
  EXPECT_TRUE(hop.contains(FieldName::kConnection));
  EXPECT_FALSE(hop.contains(FieldName::kOther));
  EXPECT_FALSE(hop.contains(FieldName::kXForwardedProto));
}

}  // namespace
}  // namespace scalws::worker
