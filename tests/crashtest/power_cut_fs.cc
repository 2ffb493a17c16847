#include "tests/crashtest/power_cut_fs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace parley::crashtest {

namespace {

namespace fs = std::filesystem;
using rocksdb::IODebugContext;
using rocksdb::IOOptions;
using rocksdb::IOStatus;
using rocksdb::Slice;

std::string directory_of(const std::string& name) {
  return fs::path(name).parent_path().lexically_normal().string();
}

std::string normal_directory(const std::string& name) {
  std::string normal = fs::path(name).lexically_normal().string();
  while (normal.size() > 1 && normal.back() == '/') normal.pop_back();
  return normal;
}

// The number of the RocksDB WAL file `name` (NNNNNN.log), if it is one.
std::optional<std::uint64_t> wal_number(const std::string& name) {
  const fs::path path(name);
  if (path.extension() != ".log") return std::nullopt;
  const std::string stem = path.stem().string();
  if (stem.empty() ||
      stem.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return std::stoull(stem);
}

std::optional<std::string> read_whole(const std::string& name) {
  std::ifstream in(name, std::ios::binary);
  if (!in) return std::nullopt;
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A writable file that tells its file system what was written and synced.
class TrackedFile : public rocksdb::FSWritableFileOwnerWrapper {
 public:
  TrackedFile(std::unique_ptr<rocksdb::FSWritableFile> file,
              PowerCutFileSystem& owner, std::string name)
      : FSWritableFileOwnerWrapper(std::move(file)),
        owner_(owner),
        name_(std::move(name)) {}

  IOStatus Append(const Slice& data, const IOOptions& options,
                  IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kAppend, "append to"); !fault.ok()) {
      return fault;
    }
    IOStatus status = target()->Append(data, options, debug);
    return status.ok() ? owner_.appended(name_, data.size()) : status;
  }
  IOStatus Append(const Slice& data, const IOOptions& options,
                  const rocksdb::DataVerificationInfo& info,
                  IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kAppend, "append to"); !fault.ok()) {
      return fault;
    }
    IOStatus status = target()->Append(data, options, info, debug);
    return status.ok() ? owner_.appended(name_, data.size()) : status;
  }
  IOStatus PositionedAppend(const Slice&, std::uint64_t, const IOOptions&,
                            IODebugContext*) override {
    return IOStatus::NotSupported("PowerCutFileSystem: positioned append");
  }
  IOStatus PositionedAppend(const Slice&, std::uint64_t, const IOOptions&,
                            const rocksdb::DataVerificationInfo&,
                            IODebugContext*) override {
    return IOStatus::NotSupported("PowerCutFileSystem: positioned append");
  }
  IOStatus Truncate(std::uint64_t size, const IOOptions& options,
                    IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kAppend, "truncate of");
        !fault.ok()) {
      return fault;
    }
    IOStatus status = target()->Truncate(size, options, debug);
    return status.ok() ? owner_.truncated(name_, size) : status;
  }
  IOStatus Flush(const IOOptions& options, IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    return target()->Flush(options, debug);
  }
  // A sync makes durable what was written before it began (appends made
  // meanwhile by another thread stay unsynced: RocksDB syncs WALs beside
  // their writer), once it returns before the power is cut; one the cut
  // overtakes makes nothing durable.
  IOStatus Sync(const IOOptions& options, IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kSync, "sync of"); !fault.ok()) {
      return fault;
    }
    const std::uint64_t written = owner_.written(name_);
    IOStatus status = target()->Sync(options, debug);
    if (owner_.down()) return IOStatus::IOError("power cut");
    return status.ok() ? owner_.synced(name_, written) : status;
  }
  IOStatus Fsync(const IOOptions& options, IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kSync, "sync of"); !fault.ok()) {
      return fault;
    }
    const std::uint64_t written = owner_.written(name_);
    IOStatus status = target()->Fsync(options, debug);
    if (owner_.down()) return IOStatus::IOError("power cut");
    return status.ok() ? owner_.synced(name_, written) : status;
  }
  // sync_file_range makes nothing durable; a later Sync does.
  IOStatus RangeSync(std::uint64_t offset, std::uint64_t bytes,
                     const IOOptions& options, IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(IoFault::kSync, "range sync of");
        !fault.ok()) {
      return fault;
    }
    owner_.range_synced(name_);
    return target()->RangeSync(offset, bytes, options, debug);
  }
  bool IsSyncThreadSafe() const override {
    return target()->IsSyncThreadSafe();
  }

 private:
  IOStatus fault_on(IoFault::Op op, std::string_view what) {
    return owner_.faults().check(op, name_, what);
  }

  PowerCutFileSystem& owner_;
  const std::string name_;
};

class TrackedDirectory : public rocksdb::FSDirectoryWrapper {
 public:
  TrackedDirectory(std::unique_ptr<rocksdb::FSDirectory> directory,
                   PowerCutFileSystem& owner, std::string name)
      : FSDirectoryWrapper(std::move(directory)),
        owner_(owner),
        name_(std::move(name)) {}

  IOStatus Fsync(const IOOptions& options, IODebugContext* debug) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(); !fault.ok()) return fault;
    IOStatus status = FSDirectoryWrapper::Fsync(options, debug);
    return status.ok() ? owner_.directory_synced(name_) : status;
  }
  IOStatus FsyncWithDirOptions(
      const IOOptions& options, IODebugContext* debug,
      const rocksdb::DirFsyncOptions& dir_options) override {
    if (owner_.down()) return IOStatus::IOError("power cut");
    if (IOStatus fault = fault_on(); !fault.ok()) return fault;
    IOStatus status =
        FSDirectoryWrapper::FsyncWithDirOptions(options, debug, dir_options);
    return status.ok() ? owner_.directory_synced(name_) : status;
  }

 private:
  IOStatus fault_on() {
    return owner_.faults().check(IoFault::kCreate, name_,
                                 "fsync of the directory");
  }

  PowerCutFileSystem& owner_;
  const std::string name_;
};

// Files opened to read, failing reads when a fault says so.
class FaultySequentialFile : public rocksdb::FSSequentialFileOwnerWrapper {
 public:
  FaultySequentialFile(std::unique_ptr<rocksdb::FSSequentialFile> file,
                       FaultSwitch& faults, std::string name)
      : FSSequentialFileOwnerWrapper(std::move(file)),
        faults_(faults),
        name_(std::move(name)) {}

  IOStatus Read(size_t n, const IOOptions& options, Slice* result,
                char* scratch, IODebugContext* debug) override {
    if (IOStatus fault = fault_on(); !fault.ok()) return fault;
    return target()->Read(n, options, result, scratch, debug);
  }
  IOStatus PositionedRead(std::uint64_t offset, size_t n,
                          const IOOptions& options, Slice* result,
                          char* scratch, IODebugContext* debug) override {
    if (IOStatus fault = fault_on(); !fault.ok()) return fault;
    return target()->PositionedRead(offset, n, options, result, scratch, debug);
  }

 private:
  IOStatus fault_on() {
    return faults_.check(IoFault::kRead, name_, "sequential read of");
  }
  FaultSwitch& faults_;
  const std::string name_;
};

class FaultyRandomAccessFile : public rocksdb::FSRandomAccessFileOwnerWrapper {
 public:
  FaultyRandomAccessFile(std::unique_ptr<rocksdb::FSRandomAccessFile> file,
                         FaultSwitch& faults, std::string name)
      : FSRandomAccessFileOwnerWrapper(std::move(file)),
        faults_(faults),
        name_(std::move(name)) {}

  IOStatus Read(std::uint64_t offset, size_t n, const IOOptions& options,
                Slice* result, char* scratch,
                IODebugContext* debug) const override {
    if (IOStatus fault = fault_on(); !fault.ok()) return fault;
    return target()->Read(offset, n, options, result, scratch, debug);
  }
  IOStatus MultiRead(rocksdb::FSReadRequest* requests, size_t count,
                     const IOOptions& options, IODebugContext* debug) override {
    if (IOStatus fault = fault_on(); !fault.ok()) {
      for (size_t i = 0; i < count; ++i) requests[i].status = fault;
      return fault;
    }
    return target()->MultiRead(requests, count, options, debug);
  }

 private:
  IOStatus fault_on() const {
    return faults_.check(IoFault::kRead, name_, "random read of");
  }
  FaultSwitch& faults_;
  const std::string name_;
};

}  // namespace

IOStatus PowerCutFileSystem::power_is_off() {
  return IOStatus::IOError("power cut");
}

void PowerCutFileSystem::created(const std::string& name, bool existed) {
  files_[name] = FileState{};
  // Overwriting a file that was there keeps its entry; its old bytes are
  // not kept (nothing here overwrites a file it needs).
  if (!existed) entries_[directory_of(name)].push_back({.name = name});
}

IOStatus PowerCutFileSystem::NewWritableFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* file, IODebugContext* debug) {
  if (down_) return power_is_off();
  if (IOStatus fault = faults_.check(IoFault::kCreate, name, "creating");
      !fault.ok()) {
    return fault;
  }
  std::lock_guard lock(mutex_);
  const bool existed = fs::exists(name);
  IOStatus status = target()->NewWritableFile(name, options, file, debug);
  if (!status.ok()) return status;
  created(name, existed);
  *file = std::make_unique<TrackedFile>(std::move(*file), *this, name);
  return status;
}

IOStatus PowerCutFileSystem::ReopenWritableFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSWritableFile>* file, IODebugContext* debug) {
  if (down_) return power_is_off();
  if (IOStatus fault = faults_.check(IoFault::kCreate, name, "reopening");
      !fault.ok()) {
    return fault;
  }
  std::lock_guard lock(mutex_);
  const bool existed = fs::exists(name);
  IOStatus status = target()->ReopenWritableFile(name, options, file, debug);
  if (!status.ok()) return status;
  if (existed) {
    // What is there already counts as durable.
    const std::uint64_t size = fs::file_size(name);
    files_.try_emplace(name, FileState{.size = size, .synced = size});
  } else {
    created(name, false);
  }
  *file = std::make_unique<TrackedFile>(std::move(*file), *this, name);
  return status;
}

IOStatus PowerCutFileSystem::ReuseWritableFile(
    const std::string&, const std::string&, const rocksdb::FileOptions&,
    std::unique_ptr<rocksdb::FSWritableFile>*, IODebugContext*) {
  return IOStatus::NotSupported("PowerCutFileSystem: WAL recycling");
}

IOStatus PowerCutFileSystem::NewSequentialFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSSequentialFile>* file, IODebugContext* debug) {
  if (IOStatus fault = faults_.check(IoFault::kRead, name, "opening to read");
      !fault.ok()) {
    return fault;
  }
  IOStatus status = target()->NewSequentialFile(name, options, file, debug);
  if (status.ok()) {
    *file =
        std::make_unique<FaultySequentialFile>(std::move(*file), faults_, name);
  }
  return status;
}

IOStatus PowerCutFileSystem::NewRandomAccessFile(
    const std::string& name, const rocksdb::FileOptions& options,
    std::unique_ptr<rocksdb::FSRandomAccessFile>* file, IODebugContext* debug) {
  if (IOStatus fault = faults_.check(IoFault::kRead, name, "opening to read");
      !fault.ok()) {
    return fault;
  }
  IOStatus status = target()->NewRandomAccessFile(name, options, file, debug);
  if (status.ok()) {
    *file = std::make_unique<FaultyRandomAccessFile>(std::move(*file), faults_,
                                                     name);
  }
  return status;
}

IOStatus PowerCutFileSystem::NewRandomRWFile(
    const std::string&, const rocksdb::FileOptions&,
    std::unique_ptr<rocksdb::FSRandomRWFile>*, IODebugContext*) {
  return IOStatus::NotSupported("PowerCutFileSystem: random read-write files");
}

IOStatus PowerCutFileSystem::NewDirectory(
    const std::string& name, const IOOptions& options,
    std::unique_ptr<rocksdb::FSDirectory>* result, IODebugContext* debug) {
  IOStatus status = target()->NewDirectory(name, options, result, debug);
  if (status.ok()) {
    *result = std::make_unique<TrackedDirectory>(std::move(*result), *this,
                                                 normal_directory(name));
  }
  return status;
}

IOStatus PowerCutFileSystem::RenameFile(const std::string& source,
                                        const std::string& target_name,
                                        const IOOptions& options,
                                        IODebugContext* debug) {
  if (down_) return power_is_off();
  if (IOStatus fault =
          faults_.check(IoFault::kCreate, target_name, "rename to");
      !fault.ok()) {
    return fault;
  }
  std::lock_guard lock(mutex_);
  std::optional<std::string> previous = read_whole(target_name);
  IOStatus status = target()->RenameFile(source, target_name, options, debug);
  if (!status.ok()) return status;
  if (auto it = files_.find(source); it != files_.end()) {
    files_[target_name] = it->second;
    files_.erase(source);
  } else {
    files_.erase(target_name);
  }
  entries_[directory_of(target_name)].push_back(
      {.name = target_name,
       .renamed_from = source,
       .previous_target = std::move(previous)});
  return status;
}

IOStatus PowerCutFileSystem::LinkFile(const std::string& source,
                                      const std::string& target_name,
                                      const IOOptions& options,
                                      IODebugContext* debug) {
  if (down_) return power_is_off();
  if (IOStatus fault = faults_.check(IoFault::kCreate, target_name, "link to");
      !fault.ok()) {
    return fault;
  }
  std::lock_guard lock(mutex_);
  IOStatus status = target()->LinkFile(source, target_name, options, debug);
  if (status.ok()) {
    entries_[directory_of(target_name)].push_back({.name = target_name});
  }
  return status;
}

IOStatus PowerCutFileSystem::DeleteFile(const std::string& name,
                                        const IOOptions& options,
                                        IODebugContext* debug) {
  if (down_) return power_is_off();
  std::lock_guard lock(mutex_);
  IOStatus status = target()->DeleteFile(name, options, debug);
  if (status.ok()) files_.erase(name);
  return status;
}

IOStatus PowerCutFileSystem::CreateDir(const std::string& name,
                                       const IOOptions& options,
                                       IODebugContext* debug) {
  if (down_) return power_is_off();
  return target()->CreateDir(name, options, debug);
}

IOStatus PowerCutFileSystem::CreateDirIfMissing(const std::string& name,
                                                const IOOptions& options,
                                                IODebugContext* debug) {
  if (down_) return power_is_off();
  return target()->CreateDirIfMissing(name, options, debug);
}

IOStatus PowerCutFileSystem::Truncate(const std::string& name, size_t size,
                                      const IOOptions& options,
                                      IODebugContext* debug) {
  if (down_) return power_is_off();
  IOStatus status = target()->Truncate(name, size, options, debug);
  return status.ok() ? truncated(name, size) : status;
}

bool PowerCutFileSystem::newer_wal_cut_due(const std::string& name) const {
  const NewerWalCut mode = newer_wal_cut_;
  if (mode == NewerWalCut::kNone) return false;
  const std::optional<std::uint64_t> number = wal_number(name);
  if (!number) return false;
  const std::string directory = directory_of(name);
  for (const auto& [other, file] : files_) {
    const std::optional<std::uint64_t> other_number = wal_number(other);
    if (!other_number || *other_number >= *number ||
        directory_of(other) != directory) {
      continue;
    }
    if (mode == NewerWalCut::kOlderExists || file.synced < file.size) {
      return true;
    }
  }
  return false;
}

IOStatus PowerCutFileSystem::appended(const std::string& name,
                                      std::uint64_t bytes) {
  bool cut_now = false;
  {
    std::lock_guard lock(mutex_);
    files_[name].size += bytes;
    cut_now = newer_wal_cut_due(name);
  }
  if (appends_to_cut_ > 0 && --appends_to_cut_ == 0) cut_now = true;
  if (cut_now) cut();
  return IOStatus::OK();
}

std::uint64_t PowerCutFileSystem::written(const std::string& name) {
  std::lock_guard lock(mutex_);
  return files_[name].size;
}

IOStatus PowerCutFileSystem::synced(const std::string& name,
                                    std::uint64_t up_to) {
  std::lock_guard lock(mutex_);
  FileState& file = files_[name];
  file.synced = std::max(file.synced, std::min(up_to, file.size));
  return IOStatus::OK();
}

IOStatus PowerCutFileSystem::truncated(const std::string& name,
                                       std::uint64_t size) {
  std::lock_guard lock(mutex_);
  FileState& file = files_[name];
  file.size = std::min(file.size, size);
  file.synced = std::min(file.synced, size);
  return IOStatus::OK();
}

IOStatus PowerCutFileSystem::directory_synced(const std::string& directory) {
  std::lock_guard lock(mutex_);
  entries_.erase(directory);
  return IOStatus::OK();
}

void PowerCutFileSystem::range_synced(const std::string& name) {
  if (wal_number(name)) ++wal_range_syncs_;
}

PowerCutFileSystem::Losses PowerCutFileSystem::restore_power(
    std::mt19937_64& random) {
  return restore_power(
      [&](const std::string&, std::uint64_t synced, std::uint64_t size) {
        if (!std::bernoulli_distribution(0.5)(random)) return synced;
        return synced + std::uniform_int_distribution<std::uint64_t>(
                            0, size - synced - 1)(random);
      },
      [&](const std::string&, std::size_t count) -> std::size_t {
        if (!std::bernoulli_distribution(0.5)(random)) return 0;
        return std::uniform_int_distribution<std::size_t>(0, count)(random);
      });
}

PowerCutFileSystem::Losses PowerCutFileSystem::restore_power(
    const KeptBytes& kept_bytes, const KeptChanges& kept_changes) {
  std::lock_guard lock(mutex_);
  Losses losses;
  std::error_code ignored;
  for (auto& [directory, entries] : entries_) {
    const std::size_t kept =
        std::min(kept_changes(directory, entries.size()), entries.size());
    // Undone newest first, down to the ones that survive.
    for (auto entry = entries.rbegin();
         entry != entries.rend() - static_cast<std::ptrdiff_t>(kept); ++entry) {
      if (entry->renamed_from) {
        if (!fs::exists(entry->name)) continue;
        fs::rename(entry->name, *entry->renamed_from, ignored);
        if (auto it = files_.find(entry->name); it != files_.end()) {
          files_[*entry->renamed_from] = it->second;
          files_.erase(it);
        }
        if (entry->previous_target) {
          std::ofstream(entry->name, std::ios::binary | std::ios::trunc)
              << *entry->previous_target;
        }
        ++losses.renames_undone;
      } else {
        if (fs::remove(entry->name, ignored)) ++losses.files_removed;
        files_.erase(entry->name);
      }
    }
  }
  entries_.clear();
  for (const auto& [name, file] : files_) {
    if (!fs::exists(name)) continue;
    const std::uint64_t size = fs::file_size(name);
    if (size <= file.synced) continue;
    const std::uint64_t keep =
        std::clamp(kept_bytes(name, file.synced, size), file.synced, size);
    if (keep == size) continue;
    if (keep > file.synced) ++losses.files_torn;
    fs::resize_file(name, keep);
    ++losses.files_cut;
    losses.bytes_dropped += size - keep;
  }
  files_.clear();
  down_ = false;
  return losses;
}

}  // namespace parley::crashtest
