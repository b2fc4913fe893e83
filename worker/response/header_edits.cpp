#include "worker/response/header_edits.h"

#include <algorithm>

namespace scalws::worker {
namespace {

using common::config::HeaderPair;
using common::config::HeaderRulesConfig;

bool nameListed(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool setBy(const HeaderRulesConfig* rules, std::string_view name) {
  return rules != nullptr && std::any_of(rules->set.begin(), rules->set.end(),
                                         [&](const HeaderPair& h) { return h.name == name; });
}

void addName(std::vector<std::string>& names, const std::string& name) {
  if (!nameListed(names, name)) names.push_back(name);
}

}  // namespace

HeaderEdits::HeaderEdits(const HeaderRulesConfig* site, const HeaderRulesConfig* route) {
  // What the route overrides of the site's: names it sets or removes.
  auto overridden = [&](const std::string& name) {
    return route != nullptr && (setBy(route, name) || nameListed(route->remove, name));
  };
  std::vector<HeaderPair> set;
  std::vector<HeaderPair> add;
  if (site != nullptr) {
    for (const HeaderPair& h : site->set) {
      if (!overridden(h.name)) set.push_back(h);
    }
    for (const HeaderPair& h : site->add) {
      if (!overridden(h.name)) add.push_back(h);
    }
    for (const std::string& name : site->remove) addName(drop_, name);
  }
  if (route != nullptr) {
    for (const HeaderPair& h : route->set) set.push_back(h);
    for (const HeaderPair& h : route->add) add.push_back(h);
    for (const std::string& name : route->remove) addName(drop_, name);
  }
  for (const HeaderPair& h : set) addName(drop_, h.name);
  append_ = std::move(set);
  append_.insert(append_.end(), add.begin(), add.end());
}

void HeaderEdits::apply(std::span<const HeaderField> in, std::vector<HeaderField>& out) const {
  out.clear();
  for (const HeaderField& h : in) {
    bool dropped = false;
    for (const std::string& name : drop_) {
      if (equalsIgnoreCase(h.name, name)) {
        dropped = true;
        break;
      }
    }
    if (!dropped) out.push_back(h);
  }
  for (const HeaderPair& h : append_) out.push_back(HeaderField{h.name, h.value});
}

}  // namespace scalws::worker
