// The test suites' precompiled header in the clang builds: the standard and
// third-party headers most suites include, parsed once per build instead of
// once per suite source (two fifths of a suite's compile time under clang).
//
// Contract: only headers from outside the project, so that editing Parley
// never rebuilds it. Each suite still includes what it uses; this header
// is force-included before the suite's own includes and changes nothing
// they mean.
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
