// The FastCGI PARAMS of one request: the RFC 3875 meta-variables plus what PHP expects
// (SCRIPT_FILENAME, REQUEST_URI, DOCUMENT_ROOT, HTTPS, REDIRECT_STATUS), and each request
// header as HTTP_*. Appended as encoded name-value pairs (record_writer.h) to a buffer the
// caller owns; the caller wraps them into PARAMS records.
//
// Headers: "Proxy" is never passed (httpoxy: PHP code reads HTTP_PROXY as a proxy setting);
// names with anything but letters, digits and "-" are dropped, because after conversion
// "X_Foo" and "X-Foo" would both be HTTP_X_FOO and a client could forge the one a proxy in
// front of us set. Repeated headers are joined (", "; "; " for Cookie) into one variable.
// Content-Type and Content-Length travel as CONTENT_TYPE and CONTENT_LENGTH only.
#pragma once

#include <string>
#include <string_view>

#include "worker/handlers/fastcgi/script_resolver.h"
#include "worker/http/request.h"

namespace scalws::worker::fastcgi {

struct CgiSite {
  std::string_view document_root;    // without a trailing "/"
  std::string_view server_software;  // "scalws"
};

void appendCgiParams(std::string& out, const Request& request, const ScriptMatch& script,
                     const CgiSite& site);

}  // namespace scalws::worker::fastcgi
