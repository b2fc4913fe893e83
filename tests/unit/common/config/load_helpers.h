// Helpers for the config loader tests: load a snippet as "t.toml" and get either the
// config or the whole error text.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "common/config/config_loader.h"

namespace scalws::common::config::testing {

// A listen appended after the snippet, so a snippet without one still loads and the
// positions in the snippet are the ones written in the test.
inline std::string withListen(std::string_view snippet) {
  return std::string(snippet) + "\n[[listen]]\naddress = \"127.0.0.1:8080\"\n";
}

// The error text of loading `text` as "t.toml", or "ok".
inline std::string errorsOf(std::string_view text, LoadOptions options = {}) {
  Result<SiteConfig> site = loadSiteConfigString(text, "t.toml", options);
  if (site.ok()) return "ok";
  EXPECT_EQ(site.status().code(), StatusCode::kInvalidArgument);
  return site.status().message();
}

// Like errorsOf() with a listen appended.
inline std::string snippetErrors(std::string_view snippet) {
  return errorsOf(withListen(snippet));
}

// Loads a snippet (listen appended) that must be valid.
inline SiteConfig loadSnippet(std::string_view snippet) {
  Result<SiteConfig> site = loadSiteConfigString(withListen(snippet), "/etc/scalws/t.toml");
  EXPECT_TRUE(site.ok()) << site.status().message();
  return site.ok() ? std::move(site).value() : SiteConfig{};
}

}  // namespace scalws::common::config::testing
