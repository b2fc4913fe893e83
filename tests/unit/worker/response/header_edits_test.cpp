#include "worker/response/header_edits.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace scalws::worker {
namespace {

using common::config::HeaderRulesConfig;

std::string renderEdited(const HeaderEdits& edits, std::vector<HeaderField> in) {
  std::vector<HeaderField> out;
  edits.apply(in, out);
  std::string s;
  for (const HeaderField& h : out) s += std::string(h.name) + ": " + std::string(h.value) + "\n";
  return s;
}

TEST(HeaderEdits, RemoveThenSetThenAdd) {
  HeaderRulesConfig route;
  route.set = {{"x-frame-options", "DENY"}};
  route.add = {{"link", "<a>"}, {"link", "<b>"}};
  route.remove = {"x-powered-by"};
  HeaderEdits edits(nullptr, &route);
  EXPECT_EQ(renderEdited(edits, {{"Content-Type", "text/html"},
                                 {"X-Powered-By", "PHP/8.2"},
                                 {"X-Frame-Options", "SAMEORIGIN"},
                                 {"Link", "<c>"}}),
            "Content-Type: text/html\nLink: <c>\nx-frame-options: DENY\nlink: <a>\nlink: <b>\n");
}

TEST(HeaderEdits, RouteLayersOverSite) {
  HeaderRulesConfig site;
  site.set = {{"strict-transport-security", "max-age=1"}, {"x-site", "s"}};
  site.add = {{"x-trace", "site"}, {"x-gone", "site"}};
  site.remove = {"x-powered-by"};
  HeaderRulesConfig route;
  route.set = {{"strict-transport-security", "max-age=2"}};
  route.add = {{"x-trace", "route"}};
  route.remove = {"x-site", "x-gone"};
  HeaderEdits edits(&site, &route);
  EXPECT_EQ(renderEdited(edits, {{"x-powered-by", "1"}, {"x-site", "upstream"}, {"x-keep", "k"}}),
            "x-keep: k\nstrict-transport-security: max-age=2\nx-trace: site\nx-trace: route\n");
}

TEST(HeaderEdits, SiteAloneAndEmpty) {
  HeaderRulesConfig site;
  site.set = {{"x-a", "1"}};
  EXPECT_EQ(renderEdited(HeaderEdits(&site, nullptr), {{"X-A", "0"}}), "x-a: 1\n");
  HeaderRulesConfig none;
  EXPECT_TRUE(HeaderEdits(&none, nullptr).empty());
  EXPECT_FALSE(HeaderEdits(&site, nullptr).empty());
}

}  // namespace
}  // namespace scalws::worker
