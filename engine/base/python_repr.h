// Python's repr() of the values AG2 formats into its error messages with
// `{x!r}`, so Parley's messages match AG2's byte for byte.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <span>
#include <string>
#include <string_view>

namespace parley::engine {

// repr(str): single quotes unless the text holds a ' and no ", escapes as
// CPython does for ASCII controls and the Latin-1 non-printables.
std::string python_repr(std::string_view text);

// repr() of the decoded JSON value: None, True, 1, 1.5, 'a', [...], {...}.
std::string python_repr_json(const nlohmann::json& value);

// AG2's f"'{text}'": quoted, nothing escaped (unlike repr).
std::string single_quoted(std::string_view text);
// AG2's f"channel '{channel_id}'".
std::string channel_label(std::string_view channel_id);

// repr(list_of_str): ['a', 'b'].
std::string python_repr_list(std::span<const std::string> texts);

}  // namespace parley::engine
