#include "tests/crashtest/io_fault.h"

namespace parley::crashtest {

std::string_view to_string(IoFault::Kind kind) {
  return kind == IoFault::Kind::kNoSpace ? "ENOSPC" : "EIO";
}

std::string ops_name(unsigned ops) {
  std::string out;
  for (const auto& [op, name] :
       {std::pair{IoFault::kAppend, "append"},
        std::pair{IoFault::kSync, "sync"}, std::pair{IoFault::kRead, "read"},
        std::pair{IoFault::kCreate, "create"}}) {
    if ((ops & op) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out;
}

void FaultSwitch::arm(IoFault fault) {
  std::lock_guard lock(mutex_);
  random_.seed(fault.seed);
  fault_ = std::move(fault);
  calls_ = 0;
  fired_ = false;
  armed_ = true;
}

void FaultSwitch::disarm() {
  std::lock_guard lock(mutex_);
  armed_ = false;
  fired_ = false;
}

rocksdb::IOStatus FaultSwitch::check(IoFault::Op op, const std::string& name,
                                     std::string_view what) {
  if (!armed_) return rocksdb::IOStatus::OK();
  std::lock_guard lock(mutex_);
  if (!armed_ || (fault_.ops & op) == 0) return rocksdb::IOStatus::OK();
  if (fault_.files && !fault_.files(name)) return rocksdb::IOStatus::OK();
  ++calls_;
  bool fail = fired_ && fault_.sticky;
  if (!fail) {
    fail = fault_.nth > 0
               ? calls_ == fault_.nth
               : std::bernoulli_distribution(fault_.probability)(random_);
  }
  if (!fail) return rocksdb::IOStatus::OK();
  fired_ = true;
  if (!fault_.sticky && fault_.nth == 0) fault_.probability = 0;
  ++injected_;
  const bool no_space = fault_.kind == IoFault::Kind::kNoSpace;
  std::string message = std::string("injected ") +
                        (no_space ? "ENOSPC" : "EIO") + " on " +
                        std::string(what) + " " + name;
  if (!first_) first_ = message;
  return no_space ? rocksdb::IOStatus::NoSpace(message)
                  : rocksdb::IOStatus::IOError("Input/output error", message);
}

std::int64_t FaultSwitch::calls() const {
  std::lock_guard lock(mutex_);
  return calls_;
}

std::optional<std::string> FaultSwitch::first() const {
  std::lock_guard lock(mutex_);
  return first_;
}

}  // namespace parley::crashtest
