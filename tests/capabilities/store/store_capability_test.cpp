// The store capability: typed requests in, typed replies out, errors as skills will see them.
#include "capabilities/store/store_capability.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "capabilities/store/store_test_util.h"
#include "skillbox/store.h"
#include "state/store_backend.h"

namespace skillbox::capabilities {
namespace {

using skillbox::testing::TempDir;
using skillbox::testing::write_bytes;

template <typename T>
const T& as(const bus::Reply& reply) {
  if (const auto* e = std::get_if<bus::ErrorReply>(&reply)) ADD_FAILURE() << "error reply: " << e->message;
  static const T empty{};
  const T* v = std::get_if<T>(&reply);
  return v != nullptr ? *v : empty;
}

std::shared_ptr<state::StoreBackend> local_store(const TempDir& dir) {
  return state::make_local_store_backend(state::DataLayout(dir.path()));
}

bus::ErrorReply error_of(const bus::Reply& reply) {
  const auto* e = std::get_if<bus::ErrorReply>(&reply);
  if (e == nullptr) {
    ADD_FAILURE() << "expected an error reply";
    return {};
  }
  return *e;
}

TEST(StoreCapabilityTest, RequestsAndReplies) {
  TempDir dir;
  StoreCapability cap(local_store(dir), "notes", {});
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "store.sqlite")) << "opened lazily, on the first request";

  EXPECT_EQ(as<bus::OptionalStringReply>(cap.handle(bus::StoreGetRequest{"a"})).value, std::nullopt);
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "store.sqlite"));
  as<bus::OkReply>(cap.handle(bus::StoreSetRequest{"a", R"({"x":1})"}));
  as<bus::OkReply>(cap.handle(bus::StoreSetRequest{"b/1", "2"}));
  EXPECT_EQ(as<bus::OptionalStringReply>(cap.handle(bus::StoreGetRequest{"a"})).value, R"({"x":1})");
  EXPECT_EQ(as<bus::StringListReply>(cap.handle(bus::StoreKeysRequest{""})).values,
            (std::vector<std::string>{"a", "b/1"}));
  EXPECT_EQ(as<bus::StringListReply>(cap.handle(bus::StoreKeysRequest{"b"})).values,
            std::vector<std::string>{"b/1"});
  EXPECT_TRUE(as<bus::BoolReply>(cap.handle(bus::StoreDeleteRequest{"a"})).value);
  EXPECT_FALSE(as<bus::BoolReply>(cap.handle(bus::StoreDeleteRequest{"a"})).value);

  // A second invocation of the same skill sees the data; another skill does not.
  StoreCapability next(local_store(dir), "notes", {});
  EXPECT_EQ(as<bus::OptionalStringReply>(next.handle(bus::StoreGetRequest{"b/1"})).value, "2");
  StoreCapability other(local_store(dir), "other", {});
  EXPECT_EQ(as<bus::OptionalStringReply>(other.handle(bus::StoreGetRequest{"b/1"})).value, std::nullopt);
  EXPECT_TRUE(as<bus::StringListReply>(other.handle(bus::StoreKeysRequest{""})).values.empty());
}

TEST(StoreCapabilityTest, ErrorCodesSkillsSee) {
  TempDir dir;
  StorePolicy policy;
  policy.max_keys = 1;
  StoreCapability cap(local_store(dir), "q", policy);
  EXPECT_EQ(error_of(cap.handle(bus::StoreSetRequest{std::string("a\0b", 3), "1"})).code,
            bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of(cap.handle(bus::StoreGetRequest{std::string("a\0b", 3)})).code,
            bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of(cap.handle(bus::StoreDeleteRequest{""})).code, bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of(cap.handle(bus::StoreKeysRequest{std::string("\0", 1)})).code,
            bus::ErrorCode::InvalidArgument);
  EXPECT_EQ(error_of(cap.handle(bus::StoreSetRequest{"k", "not json"})).code,
            bus::ErrorCode::InvalidArgument);
  as<bus::OkReply>(cap.handle(bus::StoreSetRequest{"k", "1"}));
  const auto quota = error_of(cap.handle(bus::StoreSetRequest{"k2", "1"}));
  EXPECT_EQ(quota.code, bus::ErrorCode::QuotaExceeded);
  EXPECT_NE(quota.message.find("permissions.store.max_keys"), std::string::npos) << quota.message;
  EXPECT_EQ(error_of(cap.handle(bus::StoreSetRequest{std::string(513, 'k'), "1"})).code,
            bus::ErrorCode::QuotaExceeded);
  // After all those refusals the store still works normally.
  as<bus::OkReply>(cap.handle(bus::StoreSetRequest{"k", "2"}));
  EXPECT_EQ(as<bus::OptionalStringReply>(cap.handle(bus::StoreGetRequest{"k"})).value, "2");
}

TEST(StoreCapabilityTest, DamagedDatabaseIsAnIoErrorWithoutHostPaths) {
  TempDir dir;
  write_bytes(dir.path() / "store.sqlite", std::string(4096, 'Z'));
  StoreCapability cap(local_store(dir), "notes", {});
  for (const bus::Reply& reply :
       {cap.handle(bus::StoreGetRequest{"a"}), cap.handle(bus::StoreSetRequest{"a", "1"}),
        cap.handle(bus::StoreKeysRequest{""})}) {
    const auto e = error_of(reply);
    EXPECT_EQ(e.code, bus::ErrorCode::IoError);
    EXPECT_NE(e.message.find("damaged"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find(dir.path().string()), std::string::npos) << e.message;
    EXPECT_EQ(e.message.find("/tmp"), std::string::npos) << e.message;
  }
  EXPECT_EQ(skillbox::testing::read_bytes(dir.path() / "store.sqlite"), std::string(4096, 'Z'));
}

TEST(StoreCapabilityTest, IncrementAndCompareAndSetReplies) {
  TempDir dir;
  StorePolicy policy;
  policy.max_keys = 2;
  StoreCapability cap(local_store(dir), "notes", policy);
  EXPECT_EQ(as<bus::NumberReply>(cap.handle(bus::StoreIncrementRequest{"n", 1})).value, 1);
  EXPECT_EQ(as<bus::NumberReply>(cap.handle(bus::StoreIncrementRequest{"n", -3.5})).value, -2.5);
  EXPECT_EQ(as<bus::OptionalStringReply>(cap.handle(bus::StoreGetRequest{"n"})).value, "-2.5");
  EXPECT_FALSE(as<bus::BoolReply>(cap.handle(bus::StoreCompareAndSetRequest{"n", "1", "2"})).value);
  EXPECT_TRUE(as<bus::BoolReply>(cap.handle(bus::StoreCompareAndSetRequest{"n", "-2.5", "{}"})).value);
  EXPECT_TRUE(as<bus::BoolReply>(cap.handle(bus::StoreCompareAndSetRequest{"c", std::nullopt, "1"})).value);
  const auto not_number = error_of(cap.handle(bus::StoreIncrementRequest{"n", 1}));
  EXPECT_EQ(not_number.code, bus::ErrorCode::InvalidArgument);
  EXPECT_NE(not_number.message.find("\"n\" holds an object"), std::string::npos) << not_number.message;
  EXPECT_EQ(error_of(cap.handle(bus::StoreIncrementRequest{"third", 1})).code, bus::ErrorCode::QuotaExceeded);
  EXPECT_EQ(error_of(cap.handle(bus::StoreCompareAndSetRequest{"third", std::nullopt, "1"})).code,
            bus::ErrorCode::QuotaExceeded);
  EXPECT_TRUE(as<bus::BoolReply>(cap.handle(bus::StoreCompareAndSetRequest{"c", "1", std::nullopt})).value);
  EXPECT_EQ(as<bus::OptionalStringReply>(cap.handle(bus::StoreGetRequest{"c"})).value, std::nullopt);
}

TEST(StoreCapabilityTest, InvalidSkillIdIsRefused) {
  TempDir dir;
  StoreCapability cap(local_store(dir), "../escape", {});
  EXPECT_EQ(error_of(cap.handle(bus::StoreGetRequest{"a"})).code, bus::ErrorCode::InvalidArgument);
}

}  // namespace
}  // namespace skillbox::capabilities
