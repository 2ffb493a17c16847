#include "log/thread_name.h"

#include <pthread.h>

#include <string>

namespace parley::log {

void name_current_thread(std::string_view name) {
  // 16 bytes with the terminating zero; pthread_setname_np refuses more.
  const std::string cut(name.substr(0, 15));
  (void)pthread_setname_np(pthread_self(), cut.c_str());
}

}  // namespace parley::log
