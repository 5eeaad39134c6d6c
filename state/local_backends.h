// state/local_backends.h — the embedded default: every kind of state in one data directory on this machine.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "skillbox/credentials.h"
#include "state/backends.h"
#include "state/data_layout.h"

namespace skillbox::state {

/// The local backends of the data directory `layout` (SQLite and files; DataLayout has the layout), with
/// the operator's credentials of OpenHuman bundles by skill id. Opens nothing: each backend touches the
/// disk on its first use. No audit sink (the CLI records no audit log).
[[nodiscard]] std::shared_ptr<Backends> make_local_backends(
    const DataLayout& layout, std::map<std::string, SkillCredentials> credentials);

}  // namespace skillbox::state
