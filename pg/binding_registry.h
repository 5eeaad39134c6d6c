// pg/binding_registry.h — which skill folder owns a skill id (state::BindingRegistry), in PostgreSQL.
//
// One row per (tenant, id) in skill_bindings holding the canonical folder path. A first binding is one
// INSERT ... ON CONFLICT DO NOTHING followed by a read of the owner, so of racing first bindings
// (threads, processes, replicas) exactly one wins and the others see its owner; a rebinding is one
// upsert. A row is written whole or not at all, so no half-written owner can ever be read. The rules
// and messages follow state/binding_registry.h; folder paths must be UTF-8 (PostgreSQL text).
#pragma once

#include <memory>
#include <string>

#include "pg/pool.h"
#include "state/binding_registry.h"

namespace skillbox::pg {

/// The registry of `tenant` in the database of `pool` (schema checked by open_database()).
[[nodiscard]] std::shared_ptr<state::BindingRegistry> make_pg_binding_registry(std::shared_ptr<Pool> pool,
                                                                               std::string tenant);

}  // namespace skillbox::pg
