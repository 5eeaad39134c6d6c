// runner/invocation_setup.h — what every runner computes for an invocation before it runs: the
// checks that refuse it before any skill code runs, the effective limits, and what the capabilities
// know about it. One place, so both runners agree.
#pragma once

#include <filesystem>
#include <optional>

#include "runner/host_endpoint.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// Why `invocation` must not start, as the `invalid` RunResult to return, or nullopt when it may:
/// an invalid HostOptions::origin_map entry, a bundle target that is not "tools", "tool:NAME",
/// "hook:NAME" or a sequence (OpenHuman bundles), or a skill id bound to another folder
/// (docs/manifest.md "Identity"). Reads the data directory's bindings; writes nothing.
[[nodiscard]] std::optional<RunResult> refuse_before_start(const Invocation& invocation,
                                                           const HostOptions& options,
                                                           const std::filesystem::path& data_dir);

/// The manifest's limits lowered by the invocation's overrides, then clamped to the host ceilings the
/// engine's safety rests on (the JS stack must fit the thread's real stack), against a Skill built in
/// code with other values.
[[nodiscard]] Limits effective_limits(const Invocation& invocation);

/// The capabilities' view of `invocation`: id, policy (the manifest's, narrowed by
/// Invocation::narrowing), data directory, the values of the
/// granted environment names only (the rest of the environment never reaches the invocation), the
/// origin map, an OpenHuman bundle's setup modes and credentials, and the test CA file.
[[nodiscard]] InvocationContext make_invocation_context(const Invocation& invocation,
                                                        const HostOptions& options,
                                                        const std::filesystem::path& data_dir);

}  // namespace skillbox::runner
