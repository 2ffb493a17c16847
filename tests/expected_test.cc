// std::expected as the code base uses it. Under GCC this checks libstdc++'s
// <expected>; under clang 14 the stand-in tools/compat/clang14/expected,
// which must behave the same: one body, two implementations.
#include <doctest/doctest.h>

#include <expected>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

struct Error {
  int code = 0;
  std::string message;
  bool operator==(const Error&) const = default;
};

template <typename T>
using Result = std::expected<T, Error>;

// Counts live instances, so that every constructed value is destroyed once.
struct Tracked {
  static inline int live = 0;
  int value;
  explicit Tracked(int v) : value(v) { ++live; }
  Tracked(const Tracked& other) : value(other.value) { ++live; }
  Tracked(Tracked&& other) noexcept : value(other.value) { ++live; }
  Tracked& operator=(const Tracked&) = default;
  Tracked& operator=(Tracked&&) = default;
  ~Tracked() { --live; }
};

// A value whose copy throws, to check reinit-expected's strong guarantee.
struct ThrowsOnCopy {
  ThrowsOnCopy() = default;
  ThrowsOnCopy(const ThrowsOnCopy&) { throw std::runtime_error("copy"); }
  ThrowsOnCopy(ThrowsOnCopy&&) noexcept = default;
  ThrowsOnCopy& operator=(const ThrowsOnCopy&) = default;
  ThrowsOnCopy& operator=(ThrowsOnCopy&&) = default;
};

Result<int> parse(const std::string& text) {
  if (text.empty()) return std::unexpected(Error{1, "empty"});
  return std::stoi(text);
}

Result<void> check(bool ok) {
  if (!ok) return std::unexpected(Error{2, "refused"});
  return {};
}

static_assert(std::is_copy_constructible_v<Result<std::string>>);
static_assert(!std::is_copy_constructible_v<Result<std::unique_ptr<int>>>);
static_assert(std::is_move_constructible_v<Result<std::unique_ptr<int>>>);
static_assert(!std::is_copy_assignable_v<Result<std::unique_ptr<int>>>);
static_assert(std::is_move_assignable_v<Result<std::unique_ptr<int>>>);
static_assert(
    std::is_nothrow_move_constructible_v<Result<std::unique_ptr<int>>>);
static_assert(std::is_convertible_v<int, Result<long>>);
static_assert(!std::is_convertible_v<std::string, Result<std::vector<int>>>);
static_assert(std::is_same_v<Result<int>::value_type, int>);
static_assert(std::is_same_v<Result<int>::error_type, Error>);
static_assert(std::is_same_v<Result<int>::rebind<char>, Result<char>>);

TEST_CASE("a value or an error, with their accessors") {
  Result<int> good = parse("42");
  REQUIRE(good.has_value());
  CHECK(static_cast<bool>(good));
  CHECK(*good == 42);
  CHECK(good.value() == 42);
  CHECK(good.value_or(7) == 42);

  Result<int> bad = parse("");
  REQUIRE(!bad.has_value());
  CHECK(bad.error().code == 1);
  CHECK(bad.error().message == "empty");
  CHECK(bad.value_or(7) == 7);

  Result<int> defaulted;
  CHECK(defaulted.has_value());
  CHECK(*defaulted == 0);
}

TEST_CASE("value() of an error throws bad_expected_access with the error") {
  Result<std::string> bad = std::unexpected(Error{3, "gone"});
  try {
    (void)bad.value();
    FAIL("value() did not throw");
  } catch (const std::bad_expected_access<Error>& e) {
    CHECK(e.error().code == 3);
    CHECK(std::string(e.what()).size() > 0);
  }
  Result<void> bad_void = check(false);
  CHECK_THROWS_AS(bad_void.value(), std::bad_expected_access<Error>);
  CHECK_NOTHROW(check(true).value());
}

TEST_CASE("Result<void> holds nothing or an error") {
  CHECK(check(true).has_value());
  Result<void> refused = check(false);
  REQUIRE(!refused);
  CHECK(refused.error().message == "refused");
  refused = Result<void>();
  CHECK(refused.has_value());
  refused = std::unexpected(Error{4, "again"});
  CHECK(refused.error().code == 4);
  refused.emplace();
  CHECK(refused.has_value());
  Result<void> copy = check(false);
  Result<void> other = copy;
  CHECK(other == copy);
  CHECK(other == std::unexpected(Error{2, "refused"}));
  CHECK(check(true) == check(true));
  CHECK(check(true) != check(false));
}

TEST_CASE("assignment switches between value and error, destroying once") {
  {
    std::expected<Tracked, Tracked> e(std::in_place, 1);
    CHECK(Tracked::live == 1);
    e = std::unexpected(Tracked(2));
    CHECK(!e.has_value());
    CHECK(e.error().value == 2);
    CHECK(Tracked::live == 1);
    e = Tracked(3);
    CHECK(e.has_value());
    CHECK(e->value == 3);
    CHECK(Tracked::live == 1);
    std::expected<Tracked, Tracked> f(std::unexpect, 4);
    e = f;
    CHECK(e.error().value == 4);
    CHECK(Tracked::live == 2);
    f = std::expected<Tracked, Tracked>(std::in_place, 5);
    e = std::move(f);
    CHECK(e->value == 5);
    CHECK(Tracked::live == 2);
    swap(e, f);
    CHECK(e->value == 5);
    e = std::unexpected(Tracked(6));
    e.swap(f);
    CHECK(e->value == 5);
    CHECK(f.error().value == 6);
    CHECK(Tracked::live == 2);
  }
  CHECK(Tracked::live == 0);
}

TEST_CASE("a throwing copy leaves the target unchanged") {
  std::expected<int, ThrowsOnCopy> e = 5;
  std::expected<int, ThrowsOnCopy> bad(std::unexpect);
  CHECK_THROWS_AS(e = bad, std::runtime_error);
  REQUIRE(e.has_value());
  CHECK(*e == 5);
}

TEST_CASE("move-only values move in and out") {
  Result<std::unique_ptr<int>> owned = std::make_unique<int>(8);
  Result<std::unique_ptr<int>> moved = std::move(owned);
  REQUIRE(moved.has_value());
  CHECK(**moved == 8);
  std::unique_ptr<int> out = std::move(moved).value();
  CHECK(*out == 8);
  std::vector<Result<std::unique_ptr<int>>> many;
  for (int i = 0; i < 100; ++i) many.push_back(std::make_unique<int>(i));
  for (int i = 0; i < 100; ++i) CHECK(**many[i] == i);
  std::unique_ptr<int>& slot = moved.emplace(std::make_unique<int>(9));
  CHECK(*slot == 9);
}

TEST_CASE("converting constructors keep the state") {
  Result<int> small = 7;
  Result<long> wide = small;
  CHECK(*wide == 7L);
  std::expected<int, std::string> bad = std::unexpected("no");
  std::expected<long, std::string> bad_wide = bad;
  CHECK(bad_wide.error() == "no");
  std::expected<std::string, int> text(std::in_place, 3, 'x');
  CHECK(*text == "xxx");
  std::expected<std::vector<int>, int> list(std::in_place, {1, 2, 3});
  CHECK(list->size() == 3);
  std::expected<int, std::vector<int>> errs(std::unexpect, {4, 5});
  CHECK(errs.error().size() == 2);
}

TEST_CASE("equality compares state, then value or error") {
  CHECK(parse("1") == parse("1"));
  CHECK(parse("1") != parse("2"));
  CHECK(parse("1") != parse(""));
  CHECK(parse("") == parse(""));
  CHECK(parse("1") == 1);
  CHECK(parse("") != 1);
  CHECK(parse("") == std::unexpected(Error{1, "empty"}));
  CHECK(std::unexpected(1) == std::unexpected(1));
}

}  // namespace
