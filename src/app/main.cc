// boxoffice: a cinema ticketing service. See README.md and API.md.
#include <CLI/CLI.hpp>

#include "app/commands.h"

// CMakeLists.txt defines it from project(VERSION); a compile outside CMake (the
// thread-safety analysis) says so.
#ifndef BOXOFFICE_VERSION
#define BOXOFFICE_VERSION "unversioned"
#endif

int main(int argc, char** argv) {
  CLI::App app{"boxoffice: cinema ticketing that never sells a seat twice"};
  // BOXOFFICE_VERSION: project(VERSION) in CMakeLists.txt, also the Debian package's.
  app.set_version_flag("--version", "boxoffice " BOXOFFICE_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  boxoffice::app::AddCommands(&app, &exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
