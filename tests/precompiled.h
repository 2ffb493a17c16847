// The test suites' precompiled header: the standard and third-party headers
// most suites include, parsed once per build instead of once per suite
// source (they were about half of a suite's compile time).
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
