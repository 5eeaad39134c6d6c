// compat/bundle_flavor.h — the engine::Flavor that runs OpenHuman bundles (docs/openhuman.md).
//
// The runner gives it to every invocation of a Skill whose manifest has SkillFormat::openhuman, on
// whichever side runs the engine (in-process, or the worker child): it is chosen from plain values of
// the Invocation, and everything it does crosses the bus as requests.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "engine/flavor.h"
#include "skillbox/skillbox.h"

namespace skillbox::compat {

/// What Invocation::export_name asks of a bundle: kind "sequence" (the input is the list of calls),
/// "tools", "tool" or "hook" with `name`.
struct BundleTarget {
  std::string kind;
  std::string name;
};

/// Reads export_name as documented at skillbox::Invocation. An error says which forms exist.
Result<BundleTarget> parse_bundle_target(std::string_view export_name);

/// The flavor (one shared, stateless instance).
std::shared_ptr<const engine::Flavor> bundle_flavor();

}  // namespace skillbox::compat
