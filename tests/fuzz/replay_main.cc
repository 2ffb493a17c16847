// The main of a fuzz_* program in builds without libFuzzer (GCC Release,
// ASan, TSan): runs LLVMFuzzerTestOneInput once over every file named on
// the command line and every regular file under every directory named
// (in sorted order), each input in a buffer of exactly its size so that
// an overread is caught. A failed invariant aborts naming the file; exit 0
// when every input ran, 64 on a usage error or an unreadable file.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_of(const fs::path& path) {
  std::vector<fs::path> files;
  if (fs::is_directory(path)) {
    for (const auto& entry : fs::recursive_directory_iterator(path)) {
      if (entry.is_regular_file()) files.push_back(entry.path());
    }
    std::ranges::sort(files);
  } else {
    files.push_back(path);
  }
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0] << " FILE_OR_DIR...\n"
              << "Runs the fuzz target once over each input.\n";
    return 64;
  }
  std::size_t ran = 0;
  for (int i = 1; i < argc; ++i) {
    for (const fs::path& file : inputs_of(argv[i])) {
      std::ifstream in(file, std::ios::binary);
      if (!in) {
        std::cerr << "cannot read " << file << '\n';
        return 64;
      }
      const std::string bytes{std::istreambuf_iterator<char>(in), {}};
      // A heap block of exactly the input's size (none for an empty one).
      auto buffer = std::make_unique<std::uint8_t[]>(bytes.size());
      std::memcpy(buffer.get(), bytes.data(), bytes.size());
      std::cerr << "running " << file.string() << '\n';
      LLVMFuzzerTestOneInput(bytes.empty() ? nullptr : buffer.get(),
                             bytes.size());
      ++ran;
    }
  }
  std::cerr << "fuzz replay: " << ran << " inputs ran\n";
  return 0;
}
