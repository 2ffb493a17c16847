// Free-form JSON the engine stores and returns but never interprets (a
// passport's `cost`, an auth `claim`, expectation `params`, channel `knobs`
// and `labels`): compact JSON text, validated where it enters the engine.
#pragma once

#include <string>

namespace parley::engine {

using JsonText = std::string;

}  // namespace parley::engine
