// Several processes at once, for the examples whose real setting is many clients of one server
// (crawlers sharing one visited set in Redis): start them, let them run, collect what each found.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace bloomery::examples {

// Runs fn(0), ..., fn(n - 1) at once, each in a child process of its own, and returns their
// results in order. A result comes back through a pipe, so Result must be trivially copyable. A
// child whose fn throws prints "NAME: error: process I: ..." on standard error and fails; once
// every child has ended, a failure (or a process that could not start) throws
// std::runtime_error saying how many failed.
template <class Result, class Fn>
std::vector<Result> run_in_processes(unsigned n, const std::string& name, Fn&& fn) {
  static_assert(std::is_trivially_copyable_v<Result>, "results come back through a pipe");
  std::fflush(nullptr);  // else output still buffered here would be written by every child too
  std::vector<std::pair<pid_t, int>> children;  // pid, read end of its pipe
  for (unsigned i = 0; i < n; ++i) {
    int fds[2];
    if (pipe(fds) != 0) break;
    const pid_t pid = fork();
    if (pid < 0) {
      close(fds[0]);
      close(fds[1]);
      break;
    }
    if (pid == 0) {
      close(fds[0]);
      int status = 2;
      try {
        const Result r = fn(i);
        if (write(fds[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r)) status = 0;
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: error: process %u: %s\n", name.c_str(), i, e.what());
      }
      _exit(status);  // no destructors or atexit handlers of the parent's state
    }
    close(fds[1]);
    children.emplace_back(pid, fds[0]);
  }
  std::vector<Result> results(children.size());
  std::size_t failed = n - children.size();
  for (std::size_t i = 0; i < children.size(); ++i) {
    const auto got = read(children[i].second, &results[i], sizeof(Result));
    close(children[i].second);
    int status = 0;
    const bool ended = waitpid(children[i].first, &status, 0) == children[i].first;
    const bool ok = ended && WIFEXITED(status) && WEXITSTATUS(status) == 0;
    failed += !(ok && got == static_cast<ssize_t>(sizeof(Result)));
  }
  if (failed != 0) {
    throw std::runtime_error(std::to_string(failed) + " of " + std::to_string(n) +
                             " processes failed");
  }
  return results;
}

}  // namespace bloomery::examples
