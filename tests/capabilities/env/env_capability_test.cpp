// env.get's capability: only names in permissions.env, names validated, values never logged.
#include "capabilities/env/env_capability.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <variant>

#include "capabilities/log/log_capability.h"
#include "support/scoped_env.h"

namespace skillbox::capabilities {
namespace {

std::optional<std::string> value_of(const bus::Reply& reply) {
  const auto* v = std::get_if<bus::OptionalStringReply>(&reply);
  if (v == nullptr) {
    ADD_FAILURE() << "expected a value reply";
    return std::nullopt;
  }
  return v->value;
}

bus::ErrorReply error_of(const bus::Reply& reply) {
  const auto* e = std::get_if<bus::ErrorReply>(&reply);
  if (e == nullptr) {
    ADD_FAILURE() << "expected an error reply";
    return {};
  }
  return *e;
}

std::optional<std::string> value_of(const EnvAnswer& answer) {
  return value_of(answer.reply);
}

// The capability with the run's log, composed as runner::HostEndpoint composes them: the note of an
// answer goes to the log capability.
class LoggedEnv {
 public:
  LoggedEnv(std::vector<std::string> allowed, const std::map<std::string, std::string>& values,
            LogCapability& log)
      : env_(std::move(allowed), values), log_(log) {}
  bus::Reply handle(const bus::EnvGetRequest& r) {
    EnvAnswer answer = env_.handle(r);
    if (answer.note) (void)log_.handle(*answer.note);
    return std::move(answer.reply);
  }

 private:
  EnvCapability env_;
  LogCapability& log_;
};

std::string all_text(const std::vector<LogEntry>& logs) {
  std::string out;
  for (const auto& l : logs) out += l.message + "\n";
  return out;
}

TEST(EnvCapabilityTest, OnlyGrantedNamesAreReturned) {
  const std::map<std::string, std::string> values = {
      {"WEATHER_API_KEY", "k-123"}, {"OTHER_SECRET", "hunter2"}, {"EMPTY", ""}};
  LogCapability log;
  LoggedEnv env({"WEATHER_API_KEY", "EMPTY", "UNSET"}, values, log);
  EXPECT_EQ(value_of(env.handle({"WEATHER_API_KEY"})), "k-123");
  EXPECT_EQ(value_of(env.handle({"EMPTY"})), "");
  EXPECT_EQ(value_of(env.handle({"UNSET"})), std::nullopt) << "granted but without a value";
  EXPECT_TRUE(log.take().empty()) << "granted names are not logged";

  EXPECT_EQ(value_of(env.handle({"OTHER_SECRET"})), std::nullopt);
  const auto logs = log.take();
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].level, LogEntry::Level::debug);
  EXPECT_NE(logs[0].message.find("OTHER_SECRET"), std::string::npos) << logs[0].message;
  EXPECT_NE(logs[0].message.find("permissions.env"), std::string::npos) << logs[0].message;
  EXPECT_EQ(logs[0].message.find("hunter2"), std::string::npos) << "never a value";
  // Case matters: names are compared exactly.
  EXPECT_EQ(value_of(env.handle({"weather_api_key"})), std::nullopt);
}

TEST(EnvCapabilityTest, MalformedNamesAreInvalidArguments) {
  const std::map<std::string, std::string> values = {{"A", "secret-a"}, {"A=B", "x"}};
  LogCapability log;
  LoggedEnv env({"A", "A=B"}, values, log);
  for (const std::string& name :
       {std::string(), std::string("A\0B", 3), std::string("A\0", 2), std::string("A=B"), std::string("=")}) {
    const auto e = error_of(env.handle({name}));
    EXPECT_EQ(e.code, bus::ErrorCode::InvalidArgument) << name;
    EXPECT_EQ(e.message.find("secret-a"), std::string::npos);
  }
  EXPECT_NE(error_of(env.handle({std::string("A\0B", 3)})).message.find("NUL"), std::string::npos);
  EXPECT_EQ(all_text(log.take()).find("secret-a"), std::string::npos);
  // The next call behaves normally.
  EXPECT_EQ(value_of(env.handle({"A"})), "secret-a");
}

TEST(EnvCapabilityTest, WorksWithoutALogSink) {
  const std::map<std::string, std::string> values = {{"A", "1"}};
  EnvCapability env({"A"}, values);
  EXPECT_EQ(value_of(env.handle({"B"})), std::nullopt);
  EXPECT_EQ(value_of(env.handle({"A"})), "1");
}

TEST(GrantedEnvTest, OnlyGrantedNamesOfTheTenantsValuesAndNeverTheProcessEnvironment) {
  skillbox::testing::ScopedEnv process_env;
  process_env.set("SKILLBOX_TEST_FROM_PROCESS", "process-value");
  const std::map<std::string, std::string> tenant = {{"FROM_FILE", "file-value"}, {"NOT_GRANTED", "x"}};
  const auto granted = granted_env({"FROM_FILE", "SKILLBOX_TEST_FROM_PROCESS", "MISSING"}, tenant);
  EXPECT_EQ(granted, (std::map<std::string, std::string>{{"FROM_FILE", "file-value"}}));
}

TEST(GrantedEnvTest, NamesWithNulOrEqualsAreNeverLookedUp) {
  const std::map<std::string, std::string> tenant = {{"A", "1"}, {"A=B", "2"}};
  const auto granted = granted_env({"A=B", std::string("A\0x", 3), ""}, tenant);
  EXPECT_TRUE(granted.empty());
}

}  // namespace
}  // namespace skillbox::capabilities
