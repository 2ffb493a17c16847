// fuzz_index_runs: a RocksDB channel-index value from raw bytes through
// decode_index_run, as every read of the channel index decodes it
// (log/rocksdb_layout.h: be64 of the first log sequence, then a LEB128
// varint distance per further one).
//
// Asserts: a refused value holds no well-formed run; an accepted one has
// strictly increasing log sequences and at least 8 bytes; written again
// with append_to_index_run, its sequences give a run (the shortest form)
// that decodes to the same sequences, is no longer than the input, and
// equals it unless a varint of the input ends in a padding 0 byte.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "log/rocksdb_layout.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  namespace layout = parley::log::rocksdb_layout;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::vector<std::uint64_t> sequences;
  if (!layout::decode_index_run(bytes, sequences)) return 0;
  FUZZ_CHECK(size >= 8 && !sequences.empty(),
             "an accepted run of " + std::to_string(size) + " bytes holds " +
                 std::to_string(sequences.size()) + " sequences");
  std::string written;
  std::uint64_t previous = 0;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    FUZZ_CHECK(i == 0 || sequences[i] > sequences[i - 1],
               "log sequences not increasing at " + std::to_string(i));
    layout::append_to_index_run(written, previous, sequences[i]);
    previous = sequences[i];
  }
  std::vector<std::uint64_t> again;
  FUZZ_CHECK(layout::decode_index_run(written, again) && again == sequences,
             "a run written again decodes differently");
  FUZZ_CHECK(written.size() <= size, "the shortest form is longer");
  // A varint ending in a 0 byte after others is padded: only then may the
  // input differ from the shortest form.
  bool padded = false;
  for (std::size_t i = 9; i < size; ++i) {
    padded = padded || (data[i] == 0 && (data[i - 1] & 0x80) != 0);
  }
  FUZZ_CHECK(padded || written == bytes,
             "an unpadded run differs from its shortest form");
  return 0;
}
