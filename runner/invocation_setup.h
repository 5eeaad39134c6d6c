// runner/invocation_setup.h — what every runner computes for an invocation before it runs: the
// effective limits and what the capabilities know about it. One place, so both runners agree.
#pragma once

#include <filesystem>

#include "runner/host_endpoint.h"
#include "skillbox/skillbox.h"

namespace skillbox::runner {

/// The manifest's limits lowered by the invocation's overrides, then clamped to the host ceilings the
/// engine's safety rests on (the JS stack must fit the thread's real stack), against a Skill built in
/// code with other values.
[[nodiscard]] Limits effective_limits(const Invocation& invocation);

/// The capabilities' view of an invocation of `skill`: id, policy, data directory, the values of the
/// granted environment names only (the rest of the environment never reaches the invocation), and
/// the test CA file.
[[nodiscard]] InvocationContext make_invocation_context(const Skill& skill, const HostOptions& options,
                                                        const std::filesystem::path& data_dir);

}  // namespace skillbox::runner
