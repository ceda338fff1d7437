// The subcommands of API.md "Running": serve, migrate, seed, token.
#pragma once

#include <CLI/CLI.hpp>

namespace boxoffice::app {

// Adds every subcommand to app; the chosen one runs from its callback and sets *exit_code.
void AddCommands(CLI::App* app, int* exit_code);

}  // namespace boxoffice::app
