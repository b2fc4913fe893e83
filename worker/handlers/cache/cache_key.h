// What the cache reads of a request: its primary key (cache.key), its URI (what purges
// and invalidations name), and the facts the storing rules need.
//
// The key is the configured parts in order, each followed by '\n' (no part can hold a
// line feed: the parsers refuse one in a target, a host or a field value), so
// ["host", "path"] of "a.example/b" is "a.example\n/b\n". The path is the target's as sent
// (still percent-encoded), as nginx's $request_uri; a header part is every line of that
// field joined with ", "; a cookie part the value of the first cookie of that name.
//
// The URI is "scheme://host" + path as sent + ("?" query), the host lower-case without
// its port: "https://shop.example/a/b?x=1".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/config/cache_config.h"
#include "worker/handlers/cache/cache_policy.h"
#include "worker/http/request.h"

namespace scalws::worker::cache {

void appendPrimaryKey(const std::vector<common::config::CacheKeyPart>& parts,
                      const Request& request, std::string& out);
void appendRequestUri(const Request& request, std::string& out);
// The primary key a GET of `uri` (appendRequestUri's form) has, into `out`; false when the
// key has header or cookie parts (a request's own fields, which a URI does not carry).
bool primaryKeyOfUri(const std::vector<common::config::CacheKeyPart>& parts, std::string_view uri,
                     std::string& out);
// "http" or "https" (a TLS connection).
std::string_view requestScheme(const Request& request);

// The value of cookie `name` in the request's Cookie lines (RFC 6265 §4.2.1), or empty.
std::string_view cookieValue(const Request& request, std::string_view name);

RequestFacts requestFacts(const Request& request);

}  // namespace scalws::worker::cache
