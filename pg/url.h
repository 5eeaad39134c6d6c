// pg/url.h — a PostgreSQL connection URL as skillbox shows it: never with its password.
#pragma once

#include <string>
#include <string_view>

namespace skillbox::pg {

/// `url` with the password of its userinfo replaced by "***" ("postgres://u:***@h:5432/db"), and any
/// `password=` query parameter too; anything that is not a postgres:// or postgresql:// URL is shown as
/// "(a connection string)", since a keyword string may hold a password anywhere. Used in every message
/// that names a database.
[[nodiscard]] std::string redact_url(std::string_view url);

/// Whether `url` starts with postgres:// or postgresql:// (the only form `--database` accepts).
[[nodiscard]] bool is_postgres_url(std::string_view url);

/// `text` with every occurrence of the password of `url` (when it has one) replaced by "***": for
/// messages from libpq, which may echo parts of the connection string.
[[nodiscard]] std::string without_password(std::string text, std::string_view url);

}  // namespace skillbox::pg
