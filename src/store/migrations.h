// The versioned SQL migrations in migrations/<dialect>/NNNN_name.sql, compiled into the
// binary by CMake (cmake/embed_migrations.cmake) so a deployed binary carries its schema.
#pragma once

#include <string_view>
#include <vector>

namespace boxoffice {

struct Migration {
  int version;
  std::string_view name;
  std::string_view sql;
};

// Ascending by version.
const std::vector<Migration>& PostgresMigrations();
const std::vector<Migration>& SqliteMigrations();

}  // namespace boxoffice
