// A hub on a really full file system (issue 16): full_fs_hub runs in a
// mount namespace of its own on a 24 MiB tmpfs, fills it, posts until the
// disk is full, frees space and posts again (tests/full_fs_hub.cc says what
// it checks). As root the namespace is a mount namespace; otherwise an
// unprivileged user and mount namespace (`unshare --user --map-root-user`).
// Where neither can mount a tmpfs the test says so and passes; the README
// ("Reliability") shows the same run by hand.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "tests/test_support.h"

namespace parley {
namespace {

struct Run {
  int status = -1;
  std::string output;
};

Run run(const std::string& command) {
  Run out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buffer[4096];
  while (std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) {
    out.output.append(buffer, n);
  }
  out.status = pclose(pipe);
  return out;
}

TEST_CASE("a hub on a really full file system (a small tmpfs)") {
  testing::ScratchDir scratch;
  // The shell mounts the tmpfs over the scratch directory, says so, and
  // becomes full_fs_hub; the mount goes with the namespace.
  const std::string script =
      " sh -c 'mount -t tmpfs -o size=24m parley-full \"$0\" 2>&1 && "
      "echo mounted && exec \"$1\" \"$0\"' " +
      scratch.path().string() + " " PARLEY_FULL_FS_HUB " 2>&1";
  Run result;
  if (geteuid() == 0) {
    result = run("unshare --mount --propagation private" + script);
  }
  if (result.output.find("mounted") == std::string::npos) {
    result = run("unshare --user --map-root-user --mount" + script);
  }
  if (result.output.find("mounted") == std::string::npos) {
    MESSAGE("skipped: no mount namespace with a tmpfs here (" << result.output
                                                              << ")");
    return;
  }
  MESSAGE(result.output);
  CHECK(result.status == 0);
  CHECK(result.output.find("problem") == std::string::npos);
  CHECK(result.output.find("enospc: accepted again after space was freed") !=
        std::string::npos);
  CHECK(result.output.find("guard: accepted again after space was freed") !=
        std::string::npos);
}

}  // namespace
}  // namespace parley
