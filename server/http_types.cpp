// server/http_types.cpp — see http_types.h.
#include "server/http_types.h"

#include <nlohmann/json.hpp>

#include "base/json_text.h"

namespace skillbox::server {

HttpResponse error_response(unsigned status, std::string_view code, std::string_view message) {
  nlohmann::ordered_json error;
  error["code"] = std::string(code);
  error["message"] = std::string(message);
  nlohmann::ordered_json body;
  body["error"] = std::move(error);
  // base::json_text::write: a message quoting request bytes may hold ill-formed UTF-8.
  return HttpResponse{.status = status,
                      .body = base::json_text::write(body),
                      .content_type = {},
                      .headers = {},
                      .tenant = {},
                      .outcome = {},
                      .facts = {}};
}

HttpResponse with_header(HttpResponse r, std::string name, std::string value) {
  r.headers.emplace_back(std::move(name), std::move(value));
  return r;
}

HttpResponse empty_response(unsigned status) {
  return HttpResponse{.status = status,
                      .body = {},
                      .content_type = {},
                      .headers = {},
                      .tenant = {},
                      .outcome = {},
                      .facts = {}};
}

}  // namespace skillbox::server
