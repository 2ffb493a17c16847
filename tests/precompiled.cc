// Builds the test suites' precompiled header (tests/precompiled.h); this
// object file itself is linked into nothing.
