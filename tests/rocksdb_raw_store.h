// Direct RocksDB access to a closed Parley store, with its column families
// in rocksdb_layout.h's order (0 default, 1 log, 2 channel_index,
// 3 idempotency, 4 meta): for damage the store's own API cannot make.
#pragma once

#include <doctest/doctest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace parley::testing {

struct RawStore {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;

  explicit RawStore(const std::filesystem::path& dir) {
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (std::string name :
         {"default", "log", "channel_index", "idempotency", "meta"}) {
      families.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
    REQUIRE(rocksdb::DB::Open(rocksdb::Options(), dir.string(), families,
                              &handles, &db)
                .ok());
  }
  ~RawStore() {
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    delete db;
  }
  void put(int family, std::string_view key, std::string_view value) {
    REQUIRE(db->Put(rocksdb::WriteOptions(), handles[family],
                    rocksdb::Slice(key.data(), key.size()),
                    rocksdb::Slice(value.data(), value.size()))
                .ok());
  }
  std::string get(int family, std::string_view key) {
    std::string value;
    REQUIRE(db->Get(rocksdb::ReadOptions(), handles[family],
                    rocksdb::Slice(key.data(), key.size()), &value)
                .ok());
    return value;
  }
  // Every key and value of `family`, in key order.
  std::vector<std::pair<std::string, std::string>> entries(int family) {
    std::vector<std::pair<std::string, std::string>> all;
    std::unique_ptr<rocksdb::Iterator> it(
        db->NewIterator(rocksdb::ReadOptions(), handles[family]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      all.emplace_back(it->key().ToString(), it->value().ToString());
    }
    REQUIRE(it->status().ok());
    return all;
  }
};

}  // namespace parley::testing
