// Scaffolding: replaced by the SQLite implementation (issue 5).
#include "capabilities/store/store_capability.h"

namespace skillbox::capabilities {
struct StoreCapability::Impl {};
namespace {
bus::Reply unavailable() { return bus::ErrorReply{bus::ErrorCode::PermissionDenied, "store is not available yet"}; }
}  // namespace
StoreCapability::StoreCapability(std::filesystem::path, std::string, StorePolicy) {}
StoreCapability::~StoreCapability() = default;
bus::Reply StoreCapability::handle(const bus::StoreGetRequest&) { return unavailable(); }
bus::Reply StoreCapability::handle(const bus::StoreSetRequest&) { return unavailable(); }
bus::Reply StoreCapability::handle(const bus::StoreDeleteRequest&) { return unavailable(); }
bus::Reply StoreCapability::handle(const bus::StoreKeysRequest&) { return unavailable(); }
}  // namespace skillbox::capabilities
