// Child processes for tests: the boxoffice binary, redis-server.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace boxoffice::testing {

// Starts args[0] with args, stdout and stderr appended to log_path ("" : /dev/null), and
// env ("NAME=value") added to this process's environment. The pid, or 0 on failure.
pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path = "",
            const std::vector<std::string>& env = {});

}  // namespace boxoffice::testing
