// capabilities/store/store_capability.h — the per-skill key-value store (SQLite).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "bus/messages.h"
#include "skillbox/policy.h"

namespace skillbox::capabilities {

/// Serves store requests of one skill from DATA/store.sqlite. See docs/store.md.
class StoreCapability {
 public:
  StoreCapability(std::filesystem::path data_dir, std::string skill_id, StorePolicy policy);
  ~StoreCapability();
  StoreCapability(const StoreCapability&) = delete;
  StoreCapability& operator=(const StoreCapability&) = delete;

  bus::Reply handle(const bus::StoreGetRequest& r);
  bus::Reply handle(const bus::StoreSetRequest& r);
  bus::Reply handle(const bus::StoreDeleteRequest& r);
  bus::Reply handle(const bus::StoreKeysRequest& r);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillbox::capabilities
