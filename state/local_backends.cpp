// state/local_backends.cpp — make_local_backends() and the public local_tenant().
#include "state/local_backends.h"

#include <utility>

#include "skillbox/tenant.h"
#include "state/binding_registry.h"
#include "state/credential_vault.h"
#include "state/db_backend.h"
#include "state/store_backend.h"
#include "state/workspace_backend.h"

namespace skillbox::state {

std::shared_ptr<Backends> make_local_backends(const DataLayout& layout,
                                              std::map<std::string, SkillCredentials> credentials) {
  auto backends = std::make_shared<Backends>();
  backends->workspace = make_local_workspace_backend(layout);
  backends->db = make_local_db_backend(layout);
  backends->store = make_local_store_backend(layout);
  backends->bindings = make_local_binding_registry(layout);
  backends->credentials = make_memory_credential_vault(std::move(credentials));
  return backends;
}

}  // namespace skillbox::state

namespace skillbox {

std::shared_ptr<TenantContext> local_tenant(std::string id, const std::filesystem::path& data_dir,
                                            std::map<std::string, SkillCredentials> credentials) {
  auto tenant = std::make_shared<TenantContext>();
  tenant->id = std::move(id);
  tenant->state = state::make_local_backends(state::DataLayout(data_dir), std::move(credentials));
  return tenant;
}

}  // namespace skillbox
