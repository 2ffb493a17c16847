// log::name_current_thread: the name the kernel shows for the thread.
#include "log/thread_name.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace parley {
namespace {

std::string comm_of(pid_t thread) {
  std::ifstream file("/proc/self/task/" + std::to_string(thread) + "/comm");
  std::string name;
  std::getline(file, name);
  return name;
}

TEST_CASE("a thread names itself, and names past 15 bytes are cut") {
  std::string short_name;
  std::string long_name;
  std::thread([&] {
    log::name_current_thread("parley-test");
    short_name = comm_of(gettid());
    log::name_current_thread("parley-test-naming-long");
    long_name = comm_of(gettid());
  }).join();
  CHECK(short_name == "parley-test");
  CHECK(long_name == "parley-test-nam");
}

}  // namespace
}  // namespace parley
