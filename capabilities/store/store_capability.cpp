// capabilities/store/store_capability.cpp — store requests to the tenant's StoreBackend, errors to replies.
#include "capabilities/store/store_capability.h"

#include <memory>
#include <optional>
#include <utility>

#include "skillbox/store.h"

namespace skillbox::capabilities {

namespace {

bus::ErrorReply to_reply(const StoreError& e) {
  switch (e.code) {
    case StoreErrc::invalid_argument:
      return {bus::ErrorCode::InvalidArgument, e.message};
    case StoreErrc::quota_exceeded:
      return {bus::ErrorCode::QuotaExceeded, e.message};
    case StoreErrc::busy:
      return {bus::ErrorCode::Timeout, e.message};
    case StoreErrc::corrupt:
    case StoreErrc::newer_schema:
    case StoreErrc::io_error:
      return {bus::ErrorCode::IoError, e.message};
  }
  return {bus::ErrorCode::IoError, e.message};
}

}  // namespace

struct StoreCapability::Impl {
  std::shared_ptr<state::StoreBackend> backend;
  std::string skill_id;
  StorePolicy policy;
  const bus::StopToken* stop = &bus::StopToken::never();
  bus::MemoryBudget* memory = nullptr;
  std::unique_ptr<state::StoreSession> session;

  // The skill's session, opened on first use. A failed open is not remembered: the next request tries
  // again (the failure may have been a busy lock).
  StoreResult<state::StoreSession*> open() {
    if (!session) {
      StoreOpenOptions options;
      options.wait_until = stop->deadline();
      options.stop_requested = [token = stop] { return token->stop_requested(); };
      auto opened = backend->open_skill(skill_id, policy, options);
      if (!opened) return opened.error();
      session = std::move(*opened);
    }
    return session.get();
  }
};

StoreCapability::StoreCapability(std::shared_ptr<state::StoreBackend> backend, std::string skill_id,
                                 StorePolicy policy, const bus::StopToken& stop, bus::MemoryBudget* memory)
    : impl_(std::make_unique<Impl>(
          Impl{std::move(backend), std::move(skill_id), policy, &stop, memory, nullptr})) {}

StoreCapability::~StoreCapability() = default;

bus::Reply StoreCapability::handle(const bus::StoreGetRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto value = (*s)->get(r.key);
  if (!value) return to_reply(value.error());
  // The value (at most max_value_bytes) is held until the skill has it: counted from here, and
  // refused when it does not fit the invocation's memory limit.
  bus::HostBytes held(impl_->memory);
  const uint64_t size = value->has_value() ? (*value)->size() : 0;
  if (!held.charge(size))
    return bus::ErrorReply{
        bus::ErrorCode::PayloadTooLarge,
        "store.get: the value is " + std::to_string(size) + " bytes: " + impl_->memory->refusal(size)};
  return bus::OptionalStringReply{std::move(*value), std::move(held)};
}

bus::Reply StoreCapability::handle(const bus::StoreSetRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto done = (*s)->set(r.key, r.value_json);
  if (!done) return to_reply(done.error());
  return bus::OkReply{};
}

bus::Reply StoreCapability::handle(const bus::StoreDeleteRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto existed = (*s)->remove(r.key);
  if (!existed) return to_reply(existed.error());
  return bus::BoolReply{*existed};
}

bus::Reply StoreCapability::handle(const bus::StoreKeysRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto keys = (*s)->keys(r.prefix);
  if (!keys) return to_reply(keys.error());
  return bus::StringListReply{std::move(*keys)};
}

bus::Reply StoreCapability::handle(const bus::StoreIncrementRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto sum = (*s)->increment(r.key, r.delta);
  if (!sum) return to_reply(sum.error());
  return bus::NumberReply{*sum};
}

bus::Reply StoreCapability::handle(const bus::StoreCompareAndSetRequest& r) {
  auto s = impl_->open();
  if (!s) return to_reply(s.error());
  auto wrote = (*s)->compare_and_set(r.key, r.expected_json, r.value_json);
  if (!wrote) return to_reply(wrote.error());
  return bus::BoolReply{*wrote};
}

}  // namespace skillbox::capabilities
