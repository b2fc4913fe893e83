// The dashboard's page: controller/dashboard/page/{index.html, dashboard.css,
// dashboard.js}, compiled into the controller (cmake/embed_files.cmake), so it needs no
// file, CDN or network at run time. The script fetches /api/v1/overview and each
// instance's series, and builds the page with textContent only: a tenant's string (an
// instance name, an event message) is never parsed as HTML.
#pragma once

#include <string_view>

namespace scalws::controller::dashboard {

std::string_view pageHtml();
std::string_view pageCss();
std::string_view pageScript();

}  // namespace scalws::controller::dashboard
