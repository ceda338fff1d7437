#include "support/process.h"

#include <fcntl.h>
#include <spawn.h>

extern char** environ;

namespace boxoffice::testing {

pid_t Spawn(const std::vector<std::string>& args, const std::string& log_path,
            const std::vector<std::string>& env) {
  std::vector<std::string> owned_args = args;
  std::vector<char*> argv;
  for (auto& a : owned_args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> owned_env = env;
  std::vector<char*> envp;
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  for (auto& e : owned_env) envp.push_back(e.data());
  envp.push_back(nullptr);
  const std::string sink = log_path.empty() ? "/dev/null" : log_path;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, sink.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()) != 0) pid = 0;
  posix_spawn_file_actions_destroy(&actions);
  return pid;
}

}  // namespace boxoffice::testing
