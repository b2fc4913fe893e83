// A route's `rewrite`: the request's path and query become the template's expansion, and
// the dispatcher routes it again (nginx's `rewrite ... last`).
//
// The query follows nginx's rule: a template without "?" keeps the request's query; one
// with "?" sets a new query and appends the old one after "&", unless it ends in "?" (the
// old one is dropped) or places it itself ({query}, {uri}). The target the client sent
// stays what access logs and PHP's REQUEST_URI show (Request::originalUri()).
#pragma once

#include "common/config/uri_template.h"
#include "worker/http/request.h"

namespace scalws::worker {

// Null when done; otherwise why the template gave no usable path (the request is then
// unchanged): too long, or a path that does not normalise.
const char* applyRewrite(Request& request, const common::config::UriTemplate& rewrite, bool first);

// The placeholders' values for `request` ({uri} as the client sent it).
common::config::UriTemplate::Values templateValues(const Request& request);

}  // namespace scalws::worker
