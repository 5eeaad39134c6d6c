// state/backends.h — the state of one tenant: one backend per kind of state.
//
// Capabilities enforce policy (paths, modes, quotas, key rules) and call these interfaces; the
// interfaces do storage. The local implementation (local_backends.h) is SQLite and files in one data
// directory (DataLayout); a second implementation is accepted only when it passes the contract tests in
// tests/state/ (one TEST_P suite per interface, parametrized over backends).
//
// Ownership: a Backends is shared (std::shared_ptr) by every invocation of its tenant, in any thread;
// each backend documents its own thread-safety (all of the local ones may be used from many threads
// and processes at once).
#pragma once

#include <memory>

namespace skillbox::state {

class StoreBackend;      // store_backend.h: the key-value store (store.*, OpenHuman state.*)
class WorkspaceBackend;  // workspace_backend.h: a skill's files (openhuman.fs)
class DbBackend;         // db_backend.h: an OpenHuman bundle's database image and its lease
class BindingRegistry;   // binding_registry.h: which skill folder owns an id
class CredentialVault;   // credential_vault.h: the operator's credentials by skill id
class AuditSink;         // audit_sink.h: one record per invocation

/// Every backend of one tenant. A null member means "this tenant has none": the capability that needs
/// it refuses with IoError naming what is missing (audit: nothing is recorded).
struct Backends {
  std::shared_ptr<StoreBackend> store;
  std::shared_ptr<WorkspaceBackend> workspace;
  std::shared_ptr<DbBackend> db;
  std::shared_ptr<BindingRegistry> bindings;
  std::shared_ptr<CredentialVault> credentials;
  std::shared_ptr<AuditSink> audit;
};

}  // namespace skillbox::state
